"""One thread a process wherever the course runs notebooks (issue 59): make lab's and make execute's kernels start
with ``OMP_NUM_THREADS=1`` unless the learner set it, so a lesson keeps its time when other work runs beside it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_facts import pins
from tools import execute_notebooks, lab

ROOT = Path(__file__).resolve().parent.parent


def test_one_thread_is_set_where_unset_and_a_learners_value_wins() -> None:
    env: dict[str, str] = {"MKL_NUM_THREADS": "4"}
    assert pins.one_thread_a_process(env) == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "4"}
    assert env["OMP_NUM_THREADS"] == "1"


def test_make_lab_kernels_get_one_thread() -> None:
    assert lab.environment({})["OMP_NUM_THREADS"] == "1"
    assert lab.environment({"OMP_NUM_THREADS": "8"})["OMP_NUM_THREADS"] == "8"


def test_make_execute_sets_one_thread_before_any_kernel_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in pins.THREAD_ENV:
        monkeypatch.delenv(name, raising=False)
    seen: list[str | None] = []

    def fake_execute(path: Path) -> float:  # where the kernel would start
        seen.append(os.environ.get("OMP_NUM_THREADS"))
        raise SystemExit(0)

    from tools import export_lessons

    monkeypatch.setattr(export_lessons, "main", lambda argv: 0)
    monkeypatch.setattr(execute_notebooks, "execute", fake_execute)
    with pytest.raises(SystemExit):
        execute_notebooks.main(["notebooks/00_start_here.ipynb"])
    assert seen == ["1"]


def test_torch_in_a_child_of_that_environment_uses_one_thread() -> None:
    env = {key: value for key, value in os.environ.items() if key not in pins.THREAD_ENV}
    code = "import torch; print(torch.get_num_threads())"
    threads = subprocess.run(
        [sys.executable, "-c", code], env=lab.environment(env), capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.strip()
    assert threads == "1"


@pytest.mark.parametrize("target", ["test", "notebooks"])
def test_make_test_and_make_notebooks_run_one_thread(target: str) -> None:
    shown = subprocess.run(
        ["make", "-n", "--no-print-directory", target], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    pytest_lines = [line for line in shown.splitlines() if "-m pytest" in line]
    assert pytest_lines and all(
        f"{name}={value}" in line for line in pytest_lines for name, value in pins.THREAD_ENV.items()
    )


def test_pins_prints_the_thread_settings() -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "tools.pins", "--threads"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert printed == [f"{name}={value}" for name, value in pins.THREAD_ENV.items()]
