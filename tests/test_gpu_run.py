"""The GPU run's plumbing that can be checked without a GPU (the rehearsal runs it for real: see the script)."""

from __future__ import annotations

import json
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
    assert not (copy / ".git").exists() and not (copy / ".venv").exists() and not (copy / ".gpu").exists()


def _manifest(parts: int) -> dict:
    return {"folders": [f".gpu/parts/{n}" for n in range(1, parts + 1)], "parts": [{"bytes": 50 * 2**20}] * parts}


def test_the_run_is_at_most_three_calls_each_command_within_the_tools_limit() -> None:
    calls = gpu_run.device_calls(_manifest(3), tree=5 * 2**20)
    assert [call["carry"] for call in calls] == [[".gpu/parts/1"], [".gpu/parts/2"], [".gpu/parts/3"]]
    assert all(len(call["command"]) <= gpu_run.COMMAND_LIMIT for call in calls)
    assert all(call["bytes"] == 55 * 2**20 and call["timeout_s"] <= 600 for call in calls)
    last = calls[-1]["command"]
    # the check sees the carried packages (PYTHONPATH first), then the run writes where the results come back
    assert last.index("export PYTHONPATH=/tmp/course-gpu/site-packages") < last.index("tools.gpu_device check")
    assert '--out-dir "$OUT"' in last and "tools.gpu_run" not in calls[0]["command"]
    with pytest.raises(SystemExit, match="planned for 3 calls"):
        gpu_run.device_calls(_manifest(4), tree=0)


def test_the_dry_run_without_a_bundle_says_how_to_build_it(tmp_path, capsys) -> None:
    assert gpu_run.dry_run(tmp_path / "bundle.json") == 2
    assert "python -m tools.gpu_bundle" in capsys.readouterr().out


def test_the_lessons_that_time_the_gpu_run_first_and_alone() -> None:
    names = gpu_run.syllabus_names()
    alone = gpu_run.exclusive_notebooks(names)
    assert {name[:2] for name in alone} == {check.lesson for check in gpu_run.GPU_CHECKS}
    assert set(gpu_run.order(names)[: len(alone)]) == alone
    assert "tests/test_performance.py" in gpu_run.gpu_test_files()


def test_a_run_past_its_budget_is_cut_and_reports_what_it_finished(tmp_path) -> None:
    out = tmp_path / "results.json"
    code = gpu_run.main(
        ["--rehearse", "--budget", "12", "--workers", "1", "--out", str(out), "--out-dir", str(tmp_path)]
    )
    results = json.loads(out.read_text())
    outcomes = results["notebooks"]
    assert code == 1 and set(outcomes) == set(gpu_run.REHEARSAL_NOTEBOOKS)
    assert all(o["passed"] or o["error"].startswith("cut") for o in outcomes.values()), outcomes
    assert any(o["error"] and o["error"].startswith("cut") for o in outcomes.values())
    assert (tmp_path / "gpu_results.json").is_file() and (tmp_path / "gpu_notebooks.tar.gz").is_file()
