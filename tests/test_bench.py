"""tools/bench.py: the table and JSON plumbing on made-up figures (the measurement itself is not run here)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.performance import format_table  # noqa: E402
from tools import bench  # noqa: E402

FAKE = {
    "settings": {"layers": 2},
    "padding": {
        "max_length": {
            "padded_fraction": 0.6,
            "padded_tokens": 60,
            "tokens": 100,
            "epoch_seconds": 2.0,
            "time_ratio": 1.0,
        },
        "dynamic + grouped": {
            "padded_fraction": 0.2,
            "padded_tokens": 10,
            "tokens": 50,
            "epoch_seconds": 1.0,
            "time_ratio": 0.5,
        },
    },
    "gradient_monitoring": {
        "step_seconds": {"plain": 0.1, "efficient": 0.11, "printer": 0.3},
        "ratio": {"plain": 1.0, "efficient": 1.1, "printer": 3.0},
        "clock": "cpu",
    },
    "callbacks": {
        "step_seconds": {"plain": 0.1, "recording callbacks": 0.1},
        "ratio": {"plain": 1.0, "recording callbacks": 1.0},
        "clock": "cpu",
    },
    "subclass_vs_callback": {
        "step_seconds": {"plain": 0.1, "callback": 0.102, "subclass": 0.101},
        "ratio": {"plain": 1.0, "callback": 1.02, "subclass": 1.01},
        "subclass_over_callback": 0.101 / 0.102,
        "clock": "cpu",
    },
}


def test_rows_cover_every_measurement() -> None:
    rows = bench.table_rows(FAKE)
    assert len(rows) == 2 * 2 + 3 + 2 + 3 + 1
    assert {row["measurement"] for row in rows} == {
        "padding",
        "gradient monitoring",
        "callback overhead",
        "subclass vs callback",
    }
    ratio_row = next(row for row in rows if row["variant"] == "subclass / callback")
    assert ratio_row["ratio"] == FAKE["subclass_vs_callback"]["subclass_over_callback"]
    assert all(set(row) == set(bench.COLUMNS) for row in rows)
    seed_row = next(row for row in rows if row["variant"] == "printer")
    assert seed_row["ratio"] == 3.0 and "cpu" in seed_row["figure"]
    assert "printer" in format_table(rows, bench.COLUMNS)


def test_rows_refuse_incomplete_results() -> None:
    with pytest.raises(KeyError, match="padding"):
        bench.table_rows({"callbacks": {}})


def test_results_are_written_as_json(tmp_path: Path) -> None:
    path = bench.write_results(FAKE, tmp_path / "results")
    assert path.parent == tmp_path / "results" and path.suffix == ".json"
    assert json.loads(path.read_text()) == FAKE


def test_goal_check_is_strict_at_1_10() -> None:
    met, line = bench.goal_check(FAKE)  # 1.1 exactly: met
    assert met and "met" in line and "1.10x" in line
    slower = {**FAKE, "gradient_monitoring": {**FAKE["gradient_monitoring"], "ratio": {"efficient": 1.101}}}
    met, line = bench.goal_check(slower)
    assert not met and "MISSED" in line


def test_the_suites_own_time_is_a_figure_of_the_bench() -> None:
    assert bench.suite_rows({}) == []
    suite = {
        "date": "2026-01-03",
        "install_seconds": 58.0,
        "test_seconds": 560.0,
        "parts": {"unit": 500.0, "notebooks": {"00_start_here.ipynb": 16.0, "01_first_fine_tune.ipynb": 48.0}},
    }
    rows = {row["variant"]: row["value"] for row in bench.suite_rows({"suite": suite})}
    assert rows == {"make venv": 58.0, "make test": 560.0, "unit tests": 500.0, "notebooks": 64.0}
