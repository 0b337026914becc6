"""tools/workshop_agenda.py: agendas built from measured run times, and docs/workshop.md kept in step with them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import workshop_agenda  # noqa: E402


def test_blocks_add_up_and_use_the_measured_cpu_time() -> None:
    times = {"00_start_here.ipynb": {"cpu_s": 61.0, "cpu_machine": "2-core CPU", "gpu_s": 9.4, "gpu_machine": "H100"}}
    blocks = workshop_agenda.build_blocks(["00_start_here.ipynb", ("break", 15), "01_first_fine_tune.ipynb"], times)
    explain, exercises = workshop_agenda.PLAN["00_start_here.ipynb"]
    assert blocks[0].minutes == explain + exercises + 2  # 61 s rounds up to 2 minutes
    assert blocks[0].cpu == "61 s" and blocks[0].gpu == "9 s (H100)"
    assert blocks[1].start == blocks[0].start + blocks[0].minutes and blocks[1].minutes == 15
    assert blocks[2].start == blocks[1].start + 15
    assert blocks[2].cpu == "not measured" and blocks[2].gpu == "not measured"
    assert (
        blocks[2].minutes == sum(workshop_agenda.PLAN["01_first_fine_tune.ipynb"]) + workshop_agenda.UNMEASURED_MINUTES
    )


def test_every_planned_notebook_has_minutes_and_the_days_fit() -> None:
    for sequence in (workshop_agenda.HALF_DAY, workshop_agenda.FULL_DAY):
        for item in sequence:
            assert isinstance(item, tuple) or item in workshop_agenda.PLAN
    half = workshop_agenda.build_blocks(workshop_agenda.HALF_DAY, {})
    full = workshop_agenda.build_blocks(workshop_agenda.FULL_DAY, {})
    assert sum(block.minutes for block in half) <= 4 * 60
    assert sum(block.minutes for block in full) <= 8 * 60
    notebooks = [item for item in workshop_agenda.FULL_DAY if isinstance(item, str)]
    assert notebooks == sorted(workshop_agenda.PLAN), "the full day covers every lesson, in order"


def test_unknown_notebook_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="no entry in PLAN"):
        workshop_agenda.build_blocks(["99_nothing.ipynb"], {})


def test_guide_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        workshop_agenda.with_agenda("# guide\n", "table")


def test_the_guide_holds_the_agenda_of_the_current_run_times() -> None:
    current = workshop_agenda.GUIDE.read_text(encoding="utf-8")
    expected = workshop_agenda.with_agenda(current, workshop_agenda.agenda_markdown(workshop_agenda.load_times()))
    assert current == expected, "docs/workshop.md is stale: run `python tools/workshop_agenda.py` after `make execute`"
