"""Two real processes for a check: a learner's Trainer run with DDP (gloo, over the loopback) in two processes forked
from this one, each reporting what the check asks of its run.

Forking (not spawning) keeps the start cheap: the children begin with torch and transformers imported and with the
learner's classes, wherever they were defined (a notebook's ``__main__`` too). Lesson 07's checks and lesson 10's run
here; a child's own output (library warnings, C++ ones too) goes nowhere, the verdict is the parent's to show.
"""

from __future__ import annotations

import gc
import os
import queue
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch

from helpers.checks.core import Wrong

TWO_PROCESS_TIMEOUT_S = 30


def _process(rank: int, store: str, make: Callable[..., Any], report: Callable[[Any], Any], results: Any) -> None:
    """One of the two processes: a real DDP run of ``make(per_device_train_batch_size=4)``, then ``report(trainer)``.
    The processes meet through a file (no port to race for)."""
    gc.freeze()  # objects inherited from the parent are never collected here (see _run_two)
    silent = os.open(os.devnull, os.O_WRONLY)
    os.dup2(silent, 1)
    os.dup2(silent, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (this process ends with the run)
    import torch.distributed as dist

    try:
        os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", LOCAL_WORLD_SIZE="2")
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="0", GLOO_SOCKET_IFNAME="lo")  # loopback only
        from accelerate.state import AcceleratorState

        AcceleratorState._reset_state(reset_partial_state=True)  # this process starts as one of two
        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=f"file://{store}", rank=rank, world_size=2)
        trainer = make(per_device_train_batch_size=4)  # accelerate finds the group already set up
        processes = trainer.accelerator.num_processes
        trainer.train()
        row = (rank, None, processes, report(trainer))
    except Exception as error:  # reported by the parent, as the learner's or as the check's
        row = (rank, f"{type(error).__name__}: {error}", None, None)
    results.put(row)
    results.close()
    results.join_thread()  # the row is through the pipe before this process ends
    # End here, with no clean-up: freeing gloo's process group (through DDP's reducer) joins gloo's worker thread
    # while holding the GIL, and that thread may be waiting for the GIL to free a tensor: a deadlock (torch 2.13,
    # seen with py-spy). The parent has what it needs; the operating system frees the rest.
    os._exit(0)


def _run_two(make: Callable[..., Any], report: Callable[[Any], Any]) -> list[tuple[Any, ...]] | None:
    """One attempt: both processes' rows, or None if they did not both report within the time limit."""
    import multiprocessing

    context = multiprocessing.get_context("fork")
    # Garbage left by earlier runs in this process can hold finalizers that wait for threads which a forked child
    # does not have: collect it here, where those threads exist, before forking.
    gc.collect()
    results, got = context.Queue(), []
    with tempfile.TemporaryDirectory(prefix="course-checks-ddp-") as folder:
        store = os.path.join(folder, "store")
        processes = [context.Process(target=_process, args=(rank, store, make, report, results)) for rank in range(2)]
        for process in processes:
            process.start()
        deadline = time.monotonic() + TWO_PROCESS_TIMEOUT_S
        try:
            while len(got) < 2 and time.monotonic() < deadline:
                try:
                    got.append(results.get(timeout=0.5))
                except queue.Empty:
                    if any(not p.is_alive() and p.exitcode for p in processes):
                        break  # a process died without reporting
        finally:
            for process in processes:
                process.join(timeout=5)
                if process.is_alive():
                    process.kill()
                    process.join()
    return sorted(got, key=lambda row: row[0]) if len(got) == 2 else None


def two_processes(make: Callable[..., Any], report: Callable[[Any], Any]) -> list[Any]:
    """``[report(trainer) of process 0, of process 1]`` after a real 2-process run of ``make(per_device_train_batch_size
    =4)`` in each. An exception in a process is reported as the learner's (:class:`Wrong`); a pair that does not
    report in time, twice, or that did not start as 2 processes, is the check's own error."""
    got = _run_two(make, report) or _run_two(make, report)  # one retry, should a pair not report in time
    if got is None:
        raise RuntimeError(f"the 2-process run did not report within {TWO_PROCESS_TIMEOUT_S} s, twice")
    errors = [error for _, error, *_ in got if error]
    if errors:
        raise Wrong(f"on 2 processes your code raised {errors[0]}. It ran on one process: what differs is the count.")
    if any(row[2] != 2 for row in got):
        raise RuntimeError(f"the 2-process run did not start 2 processes: {got}")
    return [row[3] for row in got]
