"""The GPU run's plumbing that can be checked without a GPU (the rehearsal runs it for real: see the script)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
from tools import gpu_run  # noqa: E402


def test_without_a_gpu_it_says_what_to_do(capsys, monkeypatch) -> None:
    monkeypatch.setattr(gpu_run, "gpu_name", lambda: None)
    assert gpu_run.main([]) == 2
    assert "--rehearse" in capsys.readouterr().out


def test_a_cpu_result_is_never_recorded_as_a_gpu_time() -> None:
    with pytest.raises(SystemExit, match="not measured on a GPU"):
        gpu_run.record({"gpu": None, "notebooks": {"00_start_here.ipynb": {"seconds": 1.0, "passed": True}}})


def test_the_repository_copy_leaves_out_venvs_and_git(tmp_path) -> None:
    copy = gpu_run.copy_repository(tmp_path / "course")
    assert (copy / "notebooks" / "00_start_here.ipynb").is_file()
    assert not (copy / ".git").exists() and not (copy / ".venv").exists()
