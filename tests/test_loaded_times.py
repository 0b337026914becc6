"""tools/loaded_times.py: a lesson's run time with one core kept busy, recorded in lessons.toml, and the workshop
guide's planning table written from the registry (quiet and busy CPU times, GPU only where measured)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
from course_facts.registry import Lesson, lessons  # noqa: E402
from tools import loaded_times  # noqa: E402


def _lesson(number: str, times: dict[str, Any]) -> Lesson:
    return Lesson(number, f"{number}_x.ipynb", f"Title {number}", "s", ("a",), 1, 1, times=times)


def test_the_planning_table_in_the_guide_is_current() -> None:
    assert loaded_times.main(["--check"]) == 0, "run `python -m tools.loaded_times --guide`"


def test_the_table_shows_what_was_measured_and_nothing_else() -> None:
    table = loaded_times.planning_table(
        [
            _lesson("00", {"cpu_s": 10.0, "cpu_loaded_s": 15.0, "cpu_loaded_machine": "2-core CPU, 1 busy"}),
            _lesson("01", {"cpu_s": 40.0}),
            _lesson("02", {"cpu_s": 20.0, "cpu_loaded_s": 30.0, "gpu_s": 4.0, "gpu_machine": "NVIDIA H200"}),
        ]
    )
    assert "| 00 · Title 00 | 10 s | 15 s | 1.5× | not measured |" in table
    assert "| 01 · Title 01 | 40 s | not measured | — | not measured |" in table
    assert "| 02 · Title 02 | 20 s | 30 s | 1.5× | 4 s (NVIDIA H200) |" in table
    assert "the 2 lessons measured both ways took 1.5 times as long" in table and "the slowest, 02, took 30 s" in table
    assert "not measured yet" not in table
    assert "No lesson has been measured" in loaded_times.planning_table([_lesson("00", {"cpu_s": 10.0})])


def test_the_guide_needs_its_markers() -> None:
    with pytest.raises(ValueError, match="planning:start"):
        loaded_times.with_table("no markers here", "table")


def test_measure_runs_the_lesson_with_a_busy_core_records_it_and_stops_the_spinner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("print(sum(range(10)))")]
    path = tmp_path / "00_x.ipynb"
    nbformat.write(notebook, path)
    recorded: list[tuple[str, str, float, str]] = []
    spinners: list[subprocess.Popen[bytes]] = []
    real_popen = subprocess.Popen

    def popen(*args: Any, **kwargs: Any) -> subprocess.Popen[bytes]:
        process = real_popen(*args, **kwargs)
        spinners.append(process)
        return process

    monkeypatch.setattr(loaded_times, "lesson", lambda name: SimpleNamespace(file=name, path=path))
    monkeypatch.setattr(loaded_times, "record_time", lambda *args: recorded.append(args))
    monkeypatch.setattr(loaded_times.subprocess, "Popen", popen)
    times, failed = loaded_times.measure([path])
    assert list(times) == ["00_x.ipynb"] and times["00_x.ipynb"] > 0 and not failed
    assert recorded == [("00_x.ipynb", "cpu_loaded", times["00_x.ipynb"], loaded_times.machine())]
    assert len(spinners) == 1 and spinners[0].poll() is not None, "the spinning process was not stopped"
    assert "one core kept busy" in loaded_times.machine()


def test_every_lesson_is_in_the_table() -> None:
    table = loaded_times.planning_table(lessons())
    assert all(f"| {entry.label} |" in table for entry in lessons())


def test_a_lesson_that_fails_gets_no_time_and_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("raise ValueError('broken lesson')")]
    path = tmp_path / "00_x.ipynb"
    nbformat.write(notebook, path)
    recorded: list[Any] = []
    monkeypatch.setattr(loaded_times, "lesson", lambda name: SimpleNamespace(file=name, path=path))
    monkeypatch.setattr(loaded_times, "record_time", lambda *args: recorded.append(args))
    times, failed = loaded_times.measure([path])
    assert times == {} and recorded == [] and "broken lesson" in failed["00_x.ipynb"]
