"""tools/workshop_agenda.py: agendas built from the registry's measured run times, and docs/workshop.md kept in
step with them."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from course_facts.registry import lessons

ROOT = Path(__file__).resolve().parent.parent
from tools import workshop_agenda  # noqa: E402
from tools.reading_time import read_lesson  # noqa: E402


def test_blocks_last_the_learner_time_and_show_the_plan_beside_it() -> None:
    first, second = lessons()[:2]
    first = dataclasses.replace(
        first, times={"cpu_s": 61.0, "cpu_machine": "2-core CPU", "gpu_s": 9.4, "gpu_machine": "H100"}
    )
    second = dataclasses.replace(second, times={})
    blocks = workshop_agenda.build_blocks([first, ("break", 15), second])
    reading = read_lesson(ROOT / "notebooks" / first.file)
    solo = reading.words / 150 + reading.code_lines * 4 / 60 + 61.0 / 60 + 1.5 * first.exercise_minutes
    assert blocks[0].minutes == math.ceil(solo)  # the learner's time, with the 61 s run, rounded up
    assert blocks[0].plan == f"{first.explain_minutes} + {first.exercise_minutes}"
    assert blocks[0].cpu == "61 s" and blocks[0].gpu == "9 s (H100)"
    assert blocks[1].start == blocks[0].start + blocks[0].minutes and blocks[1].minutes == 15
    assert blocks[2].start == blocks[1].start + 15
    assert blocks[2].cpu == "not measured" and blocks[2].gpu == "not measured"
    unmeasured = read_lesson(ROOT / "notebooks" / second.file)
    solo = unmeasured.words / 150 + unmeasured.code_lines * 4 / 60 + 1.5 * second.exercise_minutes
    assert blocks[2].minutes == math.ceil(solo) + workshop_agenda.UNMEASURED_MINUTES


def test_days_end_by_the_clock_and_keep_every_lesson_in_order() -> None:
    every = lessons()
    core = [lesson for lesson in every if not lesson.follow_up]
    days = workshop_agenda.split_days(workshop_agenda.core(every))
    assert [lesson for day in days for lesson in day] == core, "the days cover the core, in order"
    for day in days:
        blocks = workshop_agenda.build_blocks(workshop_agenda.with_breaks(day))
        assert len(day) == 1 or blocks[-1].start + blocks[-1].minutes <= workshop_agenda.DAY_END_MINUTES
        items = workshop_agenda.with_breaks(day)
        assert not isinstance(items[0], tuple) and not isinstance(items[-1], tuple)
        if blocks[-1].start + blocks[-1].minutes > workshop_agenda.LUNCH_FROM_MINUTES + 60 and len(day) > 1:
            lunch = next(block for block in blocks if block.label == "*lunch*")
            assert lunch.start >= workshop_agenda.LUNCH_FROM_MINUTES
    later = workshop_agenda.split_days(workshop_agenda.follow_up(every))
    assert [lesson for day in later for lesson in day] == [lesson for lesson in every if lesson.follow_up]


def test_the_half_day_fits_half_a_day() -> None:
    half = workshop_agenda.build_blocks(workshop_agenda.with_breaks(workshop_agenda.half_day(lessons())))
    assert sum(block.minutes for block in half) <= workshop_agenda.HALF_DAY_MINUTES, (
        "the half day's lessons take longer than four hours at the learner's pace: choose fewer (half_day in "
        "lessons.toml)"
    )


def test_guide_without_markers_is_refused() -> None:
    with pytest.raises(ValueError, match="markers"):
        workshop_agenda.with_agenda("# guide\n", "table")


def test_the_guide_holds_the_agenda_of_the_current_run_times() -> None:
    current = workshop_agenda.GUIDE.read_text(encoding="utf-8")
    expected = workshop_agenda.with_agenda(current, workshop_agenda.agenda_markdown(lessons()))
    assert current == expected, "docs/workshop.md is stale: run `python -m tools.workshop_agenda` after `make execute`"
