"""Pre-emption, measured: start training runs in child processes and stop each with a real SIGTERM.

Lesson 11 sends SIGTERM to a run without and with ``enable_jit_checkpoint`` and reads what each left. The child is
forked from the notebook's kernel (``multiprocessing`` with the fork start method), so it starts with torch and
transformers already imported, and with the operating system's default answer to SIGTERM: to die.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

from transformers import TrainerCallback

JOIN_TIMEOUT_S = 300


def _in_the_child(main: Callable[[str, str], Any], folder: str, mode: str, pipe: int) -> None:
    """The forked child: its output into ``pipe``, SIGTERM back to its default, one torch thread, then ``main``."""
    import torch

    sys.stdout = sys.stderr = os.fdopen(pipe, "w", buffering=1)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a new process's default: die
    torch.set_num_threads(1)
    main(folder, mode)


def start_run(main: Callable[[str, str], Any], folder: str | os.PathLike[str], mode: str) -> tuple[Any, TextIO]:
    """Fork a child that calls ``main(folder, mode)``; return (the child process, a reader of what it prints)."""
    if not callable(main):
        raise TypeError(f"main must be a function main(out_dir, mode), got {type(main).__name__}.")
    read, write = os.pipe()
    child = multiprocessing.get_context("fork").Process(target=_in_the_child, args=(main, str(folder), mode, write))
    child.start()
    os.close(write)
    return child, os.fdopen(read)


def checkpoint_steps(folder: str | os.PathLike[str]) -> list[int]:
    """The steps of the ``checkpoint-N`` folders in ``folder``, sorted as numbers."""
    names = (path.name for path in Path(folder).glob("checkpoint-*") if path.is_dir())
    return sorted(int(name.split("-")[1]) for name in names if name.split("-")[1].isdigit())


def watch_and_stop(child: Any, output: TextIO, folder: str | os.PathLike[str], signal_after: int) -> dict[str, Any]:
    """Read the child's ``step N`` lines, SIGTERM it once it printed step ``signal_after``, wait for it to end.

    Returns ``{"exit code", "last step", "saved"}``: the child's exit code (``-15`` when SIGTERM killed it), the
    last step it printed, and the checkpoint steps in ``folder``.
    """
    steps: list[int] = []
    for line in output:
        if line.startswith("step "):
            steps.append(int(line.split()[1]))
            if steps[-1] == signal_after:
                os.kill(child.pid, signal.SIGTERM)  # what `kill <pid>`, Slurm and Kubernetes send
    child.join(timeout=JOIN_TIMEOUT_S)
    if child.is_alive():
        child.kill()
        child.join()
        raise RuntimeError(f"the run in {folder} did not end within {JOIN_TIMEOUT_S} s of its SIGTERM; it was killed.")
    if not steps or steps[-1] < signal_after:
        raise RuntimeError(
            f"the run in {folder} ended after step {steps[-1] if steps else 0}, before step {signal_after}: no "
            "SIGTERM was sent. Give it more steps, or print 'step N' at each step end."
        )
    return {"exit code": child.exitcode, "last step": steps[-1], "saved": checkpoint_steps(folder)}


def stop_with_sigterm(
    main: Callable[[str, str], Any], folders: dict[str, str | os.PathLike[str]], signal_after: int
) -> dict[str, dict[str, Any]]:
    """Run ``main(folder, mode)`` for each ``{mode: folder}`` in a forked child at the same time, SIGTERM each once
    it printed ``step {signal_after}``, and return ``{mode: watch_and_stop's report}``."""
    if not isinstance(signal_after, int) or signal_after < 1:
        raise ValueError(f"signal_after must be a step number >= 1, got {signal_after!r}.")
    started = {mode: start_run(main, folder, mode) for mode, folder in folders.items()}
    with ThreadPoolExecutor(len(started)) as pool:
        futures = {
            mode: pool.submit(watch_and_stop, child, output, folders[mode], signal_after)
            for mode, (child, output) in started.items()
        }
        return {mode: future.result() for mode, future in futures.items()}


class Pace(TrainerCallback):
    """A callback for a demo run that is to be stopped: each step lasts ``seconds`` longer (a real model would
    take longer), and its end prints ``step N``, the line :func:`watch_and_stop` watches for."""

    def __init__(self, seconds: float = 0.02) -> None:
        if seconds < 0:
            raise ValueError(f"seconds must be >= 0, got {seconds!r}.")
        self.seconds = seconds

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        time.sleep(self.seconds)
        print(f"step {state.global_step}", flush=True)
