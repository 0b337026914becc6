"""Write the workshop agendas in docs/workshop.md from the lesson registry (``lessons.toml``).

Usage: python -m tools.workshop_agenda          rewrite the agenda tables between the markers in docs/workshop.md
       python -m tools.workshop_agenda --check  exit 1 if the tables there are not what lessons.toml gives

Each block lasts a solo learner's time for the lesson, measured from the notebook itself by
``tools/reading_time.py`` (its words and shown code, the measured CPU run time, 1.5 times the planned exercise
minutes), rounded up; the teacher's plan (explaining + exercises, a teaching choice in ``lessons.toml``) stands
beside it. A notebook without a CPU measurement gets :data:`UNMEASURED_MINUTES` more and is marked as such. No
figure is typed by hand. The lessons are laid out in days that end by :data:`DAY_END_MINUTES`, with breaks placed
by the clock (:func:`with_breaks`), not by lesson, so adding a lesson never means editing this file.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from course_facts.registry import Lesson, lessons  # noqa: E402
from tools.blocks import replace_block  # noqa: E402
from tools.reading_time import learner_minutes, read_lesson  # noqa: E402

GUIDE = ROOT / "docs" / "workshop.md"
START, END = "<!-- agenda:start -->", "<!-- agenda:end -->"
UNMEASURED_MINUTES = 2  # a notebook not measured yet: its 45 s CPU budget, rounded up, with a margin
DAY_START_MINUTES = 9 * 60  # 09:00
BREAK, LUNCH = ("break", 15), ("lunch", 60)
BREAK_EVERY_MINUTES = 90  # a short break once this long has passed since the last one
LUNCH_FROM_MINUTES = 12 * 60  # lunch at the first lesson boundary from 12:00, in a day that runs past it
DAY_END_MINUTES = 17 * 60  # a workshop day ends by 17:00
HALF_DAY_MINUTES = 4 * 60


@dataclass(frozen=True)
class Block:
    """One row of an agenda."""

    start: int  # minutes after midnight
    minutes: int
    label: str
    plan: str  # the teacher's plan: explaining + exercises
    cpu: str
    gpu: str


def clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def lesson_minutes(lesson: Lesson) -> int:
    """A solo learner's minutes for the lesson (``tools/reading_time.py``: reading, shown code, the measured CPU
    run time, the exercises), rounded up; a notebook not measured on a CPU yet gets :data:`UNMEASURED_MINUTES`."""
    reading = read_lesson(ROOT / "notebooks" / lesson.file)
    minutes = math.ceil(learner_minutes(reading.words, reading.code_lines, lesson))
    return minutes + (0 if lesson.seconds("cpu") else UNMEASURED_MINUTES)


def split_days(sequence: list[Lesson]) -> list[list[Lesson]]:
    """``sequence`` in days: each day takes lessons, in order, while it still ends by :data:`DAY_END_MINUTES`
    with its breaks and lunch (a lesson longer than a whole day gets a day of its own)."""
    days: list[list[Lesson]] = []
    for lesson in sequence:
        if days:
            trial = build_blocks(with_breaks([*days[-1], lesson]))
            if trial[-1].start + trial[-1].minutes <= DAY_END_MINUTES:
                days[-1].append(lesson)
                continue
        days.append([lesson])
    return days


def with_breaks(sequence: list[Lesson]) -> list[Lesson | tuple[str, int]]:
    """The lessons with breaks put in by the clock: a short one after each 90 minutes of teaching, and lunch at
    the first lesson boundary from 12:00 (only in a day that goes on after it)."""
    items: list[Lesson | tuple[str, int]] = []
    now, since_break, lunched = DAY_START_MINUTES, 0, False
    for lesson in sequence:
        if items and not lunched and now >= LUNCH_FROM_MINUTES:
            items.append(LUNCH)
            now, since_break, lunched = now + LUNCH[1], 0, True
        elif items and since_break >= BREAK_EVERY_MINUTES:
            items.append(BREAK)
            now, since_break = now + BREAK[1], 0
        items.append(lesson)
        now += lesson_minutes(lesson)
        since_break += lesson_minutes(lesson)
    return items


def build_blocks(sequence: list[Lesson | tuple[str, int]]) -> list[Block]:
    """The agenda rows for ``sequence`` (lessons and ``(label, minutes)`` breaks)."""
    blocks: list[Block] = []
    now = DAY_START_MINUTES
    for item in sequence:
        if isinstance(item, tuple):
            label, minutes = item
            blocks.append(Block(now, minutes, f"*{label}*", "", "", ""))
        else:
            minutes = lesson_minutes(item)
            cpu_s, gpu_s = item.seconds("cpu"), item.seconds("gpu")
            cpu = f"{cpu_s:.0f} s" if cpu_s else "not measured"
            gpu = f"{gpu_s:.0f} s ({item.machine('gpu')})" if gpu_s else "not measured"
            plan = f"{item.explain_minutes} + {item.exercise_minutes}"
            blocks.append(Block(now, minutes, f"{item.label}", plan, cpu, gpu))
        now += minutes
    return blocks


def agenda_table(title: str, blocks: list[Block]) -> str:
    """One agenda as a markdown table, with its total length."""
    rows = [
        f"**{title}** ({clock(blocks[0].start)} to {clock(blocks[-1].start + blocks[-1].minutes)}, "
        f"{sum(block.minutes for block in blocks)} minutes)",
        "",
        "| time | learner minutes | block | teacher's plan (explain + exercises) | CPU run time | GPU run time |",
        "|---|---|---|---|---|---|",
    ]
    for block in blocks:
        rows.append(
            f"| {clock(block.start)} | {block.minutes} | {block.label} | {block.plan} | {block.cpu} | {block.gpu} |"
        )
    return "\n".join(rows)


def half_day(all_lessons: list[Lesson]) -> list[Lesson]:
    return [lesson for lesson in all_lessons if lesson.half_day]


def core(all_lessons: list[Lesson]) -> list[Lesson]:
    """Every lesson but the follow-up sessions' (``follow_up = true`` in ``lessons.toml``)."""
    return [lesson for lesson in all_lessons if not lesson.follow_up]


def follow_up(all_lessons: list[Lesson]) -> list[Lesson]:
    """The lessons of the follow-up session: what Trainer users do next, taught on a second (half) day."""
    return [lesson for lesson in all_lessons if lesson.follow_up]


def agenda_markdown(all_lessons: list[Lesson]) -> str:
    """The agendas (half day; the core course, day by day; the follow-up days), and where their numbers come from."""
    machines = sorted({lesson.machine("cpu") for lesson in all_lessons if lesson.machine("cpu")})
    source = (
        f"Minutes: a solo learner's time for each lesson, measured from the notebook by `tools/reading_time.py` "
        f"(150 words a minute, 4 s a shown code line, the run time measured by `make execute` on a "
        f"{', '.join(machines) or 'machine not recorded'}, 1.5 times the planned exercise minutes), rounded up; "
        f"a notebook not measured yet gets {UNMEASURED_MINUTES} minutes more. The teacher's plan (explaining + "
        f"exercises, from `lessons.toml`) stands beside it: where it is shorter, learners finish the lesson after "
        f"the session. Breaks: {BREAK[1]} minutes after each {BREAK_EVERY_MINUTES} minutes of teaching, lunch at "
        f"the first lesson boundary from {clock(LUNCH_FROM_MINUTES)}; a day ends by {clock(DAY_END_MINUTES)}."
    )
    tables = [source, agenda_table("Half day", build_blocks(with_breaks(half_day(all_lessons))))]
    for title, chosen in (("The course", core(all_lessons)), ("Follow-up", follow_up(all_lessons))):
        days = split_days(chosen)
        for number, day in enumerate(days, 1):
            name = f"{title}, day {number} of {len(days)}" if len(days) > 1 else title
            tables.append(agenda_table(name, build_blocks(with_breaks(day))))
    return "\n\n".join(tables)


def with_agenda(text: str, agenda: str) -> str:
    """``text`` with the part between the agenda markers replaced by ``agenda``.

    Raises:
        MissingMarkers: the guide has no agenda markers.
    """
    return replace_block(text, START, END, agenda, "the guide")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the workshop agendas from the lesson registry.")
    parser.add_argument("--check", action="store_true", help="only report whether docs/workshop.md is current")
    options = parser.parse_args(argv)
    current = GUIDE.read_text(encoding="utf-8")
    updated = with_agenda(current, agenda_markdown(lessons()))
    if options.check:
        if updated != current:
            print("docs/workshop.md: the agenda is stale; run `python -m tools.workshop_agenda`.", file=sys.stderr)
            return 1
        print("docs/workshop.md: the agenda matches lessons.toml.")
        return 0
    GUIDE.write_text(updated, encoding="utf-8")
    print(f"docs/workshop.md: agendas written from {len(lessons())} lessons of lessons.toml.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
