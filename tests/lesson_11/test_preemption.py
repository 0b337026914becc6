"""helpers.preemption, which lesson 11 uses to stop runs with a real SIGTERM: a child without a handler dies of the
signal, one with a handler ends normally, and the report reads the checkpoints each left."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from helpers.preemption import checkpoint_steps, stop_with_sigterm


def fake_run(out_dir: str, mode: str) -> None:
    """Prints a step every 10 ms, saves checkpoint-N every 5 steps; with mode "handler", a SIGTERM makes it save
    where it stands and return."""
    asked = []
    if mode == "handler":
        signal.signal(signal.SIGTERM, lambda signum, frame: asked.append(signum))
    for step in range(1, 500):
        time.sleep(0.01)
        if step % 5 == 0:
            (Path(out_dir) / f"checkpoint-{step}").mkdir(parents=True, exist_ok=True)
        print(f"step {step}", flush=True)
        if asked:  # checked after the print: the last step printed is the one saved
            (Path(out_dir) / f"checkpoint-{step}").mkdir(parents=True, exist_ok=True)
            return


def test_a_plain_child_dies_and_a_handler_saves(tmp_path: Path) -> None:
    folders = {mode: tmp_path / mode for mode in ("plain", "handler")}
    report = stop_with_sigterm(fake_run, folders, signal_after=12)
    assert report["plain"]["exit code"] == -signal.SIGTERM
    assert report["plain"]["saved"] == [5, 10]
    assert report["plain"]["last step"] < 500
    assert report["handler"]["exit code"] == 0
    assert report["handler"]["saved"][-1] == report["handler"]["last step"] >= 12


def test_a_run_that_ends_before_the_signal_is_reported(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="no SIGTERM was sent"):
        stop_with_sigterm(fake_run, {"handler": tmp_path / "h"}, signal_after=10_000)


def test_checkpoint_steps_sorts_numbers_and_skips_other_names(tmp_path: Path) -> None:
    for name in ("checkpoint-10", "checkpoint-9", "checkpoint-tmp"):
        (tmp_path / name).mkdir()
    (tmp_path / "checkpoint-99").write_text("a file")
    assert checkpoint_steps(tmp_path) == [9, 10]


def test_signal_after_must_be_a_step() -> None:
    with pytest.raises(ValueError, match="signal_after"):
        stop_with_sigterm(fake_run, {}, signal_after=0)


def test_pace_prints_each_step_end(capsys: pytest.CaptureFixture[str]) -> None:
    from types import SimpleNamespace

    from helpers.preemption import Pace

    Pace(seconds=0).on_step_end(None, SimpleNamespace(global_step=7), None)
    assert capsys.readouterr().out == "step 7\n"
    with pytest.raises(ValueError, match="seconds"):
        Pace(seconds=-1)
