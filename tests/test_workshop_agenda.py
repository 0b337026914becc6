"""tools/workshop_agenda.py: agendas built from the registry's measured run times, and docs/workshop.md kept in
step with them."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from helpers.registry import lessons

ROOT = Path(__file__).resolve().parent.parent
from tools import workshop_agenda  # noqa: E402


def test_blocks_add_up_and_use_the_measured_cpu_time() -> None:
    first, second = lessons()[:2]
    first = dataclasses.replace(
        first, times={"cpu_s": 61.0, "cpu_machine": "2-core CPU", "gpu_s": 9.4, "gpu_machine": "H100"}
    )
    second = dataclasses.replace(second, times={})
    blocks = workshop_agenda.build_blocks([first, ("break", 15), second])
    assert blocks[0].minutes == first.explain_minutes + first.exercise_minutes + 2  # 61 s rounds up to 2 minutes
    assert blocks[0].cpu == "61 s" and blocks[0].gpu == "9 s (H100)"
    assert blocks[1].start == blocks[0].start + blocks[0].minutes and blocks[1].minutes == 15
    assert blocks[2].start == blocks[1].start + 15
    assert blocks[2].cpu == "not measured" and blocks[2].gpu == "not measured"
    assert blocks[2].minutes == second.explain_minutes + second.exercise_minutes + workshop_agenda.UNMEASURED_MINUTES


def test_breaks_come_by_the_clock_and_the_days_fit() -> None:
    every = lessons()
    core = [lesson for lesson in every if not lesson.follow_up]
    full = workshop_agenda.with_breaks(workshop_agenda.full_day(every))
    assert [item for item in full if not isinstance(item, tuple)] == core, "the full day covers the core, in order"
    later = workshop_agenda.build_blocks(workshop_agenda.with_breaks(workshop_agenda.follow_up(every)))
    assert later and sum(block.minutes for block in later) <= 4 * 60, "the follow-up session fits in half a day"
    assert {lesson.number for lesson in core} | {lesson.number for lesson in every if lesson.follow_up} == {
        lesson.number for lesson in every
    }
    assert full.count(workshop_agenda.LUNCH) == 1 and workshop_agenda.BREAK in full
    assert not isinstance(full[0], tuple) and not isinstance(full[-1], tuple)
    half = workshop_agenda.build_blocks(workshop_agenda.with_breaks(workshop_agenda.half_day(every)))
    whole = workshop_agenda.build_blocks(full)
    assert sum(block.minutes for block in half) <= 4 * 60
    assert sum(block.minutes for block in whole) <= 8 * 60
    lunch = next(block for block in whole if block.label == "*lunch*")
    assert lunch.start >= workshop_agenda.LUNCH_FROM_MINUTES


def test_guide_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        workshop_agenda.with_agenda("# guide\n", "table")


def test_the_guide_holds_the_agenda_of_the_current_run_times() -> None:
    current = workshop_agenda.GUIDE.read_text(encoding="utf-8")
    expected = workshop_agenda.with_agenda(current, workshop_agenda.agenda_markdown(lessons()))
    assert current == expected, "docs/workshop.md is stale: run `python -m tools.workshop_agenda` after `make execute`"
