"""Two real processes for a check: a learner's Trainer run with DDP (gloo, over the loopback) in two processes forked
from this one, each reporting what the check asks of its run.

Forking (not spawning) keeps the start cheap: the children begin with torch and transformers imported and with the
learner's classes, wherever they were defined (a notebook's ``__main__`` too). Lesson 07's checks and lesson 10's run
here; a child's own output (library warnings, C++ ones too) goes nowhere, the verdict is the parent's to show.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import queue
import re
import signal
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch

from exercises.checks.core import COURSE_PACKAGES, Wrong

TWO_PROCESS_TIMEOUT_S = 30

# torch.distributed's collectives: each returns only when every process of the group has called it.
COLLECTIVES = (
    "all_reduce",
    "reduce",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "gather",
    "gather_object",
    "broadcast",
    "broadcast_object_list",
    "reduce_scatter",
    "barrier",
)
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<name>\S+)')


def _process(rank: int, store: str, make: Callable[..., Any], report: Callable[[Any], Any], results: Any) -> None:
    """One of the two processes: a real DDP run of ``make(per_device_train_batch_size=4)``, then ``report(trainer)``.
    The processes meet through a file (no port to race for)."""
    gc.freeze()  # objects inherited from the parent are never collected here (see _run_two)
    silent = os.open(os.devnull, os.O_WRONLY)
    os.dup2(silent, 1)
    os.dup2(silent, 2)
    sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (this process ends with the run)
    # On SIGUSR1 (the parent's, when the pair hangs) write every thread's stack where the parent can read it.
    stacks = open(f"{store}.stack{rank}", "w")  # noqa: SIM115 (open until this process ends)
    faulthandler.register(signal.SIGUSR1, file=stacks, all_threads=True)
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


def waiting_in_collective(stack: str) -> str | None:
    """Where a process whose Python stack (faulthandler's text, innermost frame first) waits in one of
    torch.distributed's collectives: ``"all_reduce (called from log, file.py:12)"``, naming the first frame
    outside torch, accelerate, transformers and the course's own ``helpers`` package: the learner's line that made
    the call. A course helper in between (lesson 07's RunningMeans.pop_means) is named as the way the call went:
    ``"all_reduce (through pop_means, lesson_07.py:181, called from log, file.py:12)"``. None when the stack is
    not in a collective."""
    frames = [match.groupdict() for match in _FRAME.finditer(stack)]
    inside = [i for i, f in enumerate(frames) if f["name"] in COLLECTIVES and "distributed" in f["file"]]
    if not inside:
        return None
    outer = frames[inside[0] + 1 :]
    mine = next((i for i, f in enumerate(outer) if not _library_frame(f["file"])), None)
    through = [f for f in outer[: mine if mine is not None else len(outer)] if f["file"].startswith(_COURSE_PACKAGE)]
    via = (
        f"through {through[-1]['name']}, {os.path.basename(through[-1]['file'])}:{through[-1]['line']}, "
        if through
        else ""
    )
    if mine is None:
        return f"{frames[inside[0]]['name']} ({via}called by the Trainer)"
    caller = outer[mine]
    place = f"{os.path.basename(caller['file'])}:{caller['line']}"
    return f"{frames[inside[0]]['name']} ({via}called from {caller['name']}, {place})"


# The course's own packages (helpers, with the lessons' exported code, and exercises): their frames are neither the
# learner's nor a library's.
_COURSE_PACKAGE = COURSE_PACKAGES


def _library_frame(file: str) -> bool:
    """A frame of torch, accelerate, transformers or the course's packages (never the learner's line)."""
    return file.startswith(_COURSE_PACKAGE) or any(
        f"{os.sep}{name}{os.sep}" in file for name in ("torch", "accelerate", "transformers")
    )


def _stacks_of_the_stuck(processes: list[Any], got: list[tuple[Any, ...]], store: str) -> dict[int, str]:
    """Each process that did not report and is still alive: its stack, written on SIGUSR1."""
    reported = {row[0] for row in got}
    stuck = [rank for rank, process in enumerate(processes) if rank not in reported and process.is_alive()]
    for rank in stuck:
        os.kill(processes[rank].pid, signal.SIGUSR1)
    time.sleep(1.0)
    stacks = {}
    for rank in stuck:
        with open(f"{store}.stack{rank}") as written:
            stacks[rank] = written.read()
    return stacks


class _Hung(Exception):
    """The pair did not report in time and a process was waiting in a collective: ``waits`` says where."""

    def __init__(self, waits: dict[int, str]) -> None:
        super().__init__(waits)
        self.waits = waits


def _run_two(make: Callable[..., Any], report: Callable[[Any], Any]) -> list[tuple[Any, ...]] | None:
    """One attempt: both processes' rows, or None if they did not both report within the time limit. Raises
    :class:`_Hung` when they did not because a process waited in a collective."""
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
            stacks = _stacks_of_the_stuck(processes, got, store) if len(got) < 2 else {}
        finally:
            for process in processes:
                process.join(timeout=0 if len(got) < 2 else 5)
                if process.is_alive():
                    process.kill()
                    process.join()
    waits = {rank: where for rank, stack in stacks.items() if (where := waiting_in_collective(stack))}
    if waits:
        raise _Hung(waits)
    return sorted(got, key=lambda row: row[0]) if len(got) == 2 else None


def _hang_message(waits: dict[int, str]) -> str:
    done = [rank for rank in (0, 1) if rank not in waits]
    where = "; ".join(f"process {rank} waited in {place}" for rank, place in sorted(waits.items()))
    others = f", while process {done[0]} had gone on without it" if done else ""
    return (
        f"on 2 processes your code hung for {TWO_PROCESS_TIMEOUT_S} s: {where}{others}. A collective "
        "(self.accelerator.reduce or gather, torch.distributed.all_reduce) returns only when every process "
        "has called it: call it on every process, at the same point, and put only what you do with its result "
        "under `if self.is_world_process_zero()`."
    )


def two_processes(make: Callable[..., Any], report: Callable[[Any], Any]) -> list[Any]:
    """``[report(trainer) of process 0, of process 1]`` after a real 2-process run of ``make(per_device_train_batch_size
    =4)`` in each. An exception in a process is reported as the learner's (:class:`Wrong`); a pair that does not
    report in time, twice, or that did not start as 2 processes, is the check's own error; a pair that hangs
    because a process waits in a collective (the others never call) is the learner's, said at once."""
    try:
        got = _run_two(make, report) or _run_two(make, report)  # one retry, should a pair not report in time
    except _Hung as hung:  # not retried: the same code hangs again
        raise Wrong(_hang_message(hung.waits)) from None
    if got is None:
        raise RuntimeError(f"the 2-process run did not report within {TWO_PROCESS_TIMEOUT_S} s, twice")
    errors = [error for _, error, *_ in got if error]
    if errors:
        raise Wrong(f"on 2 processes your code raised {errors[0]}. It ran on one process: what differs is the count.")
    if any(row[2] != 2 for row in got):
        raise RuntimeError(f"the 2-process run did not start 2 processes: {got}")
    return [row[3] for row in got]
