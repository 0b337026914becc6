"""Write the workshop agendas in docs/workshop.md from the lesson registry (``lessons.toml``).

Usage: python -m tools.workshop_agenda          rewrite the agenda tables between the markers in docs/workshop.md
       python -m tools.workshop_agenda --check  exit 1 if the tables there are not what lessons.toml gives

The planned minutes (explaining, exercises) and the half-day selection are teaching choices, written in each
lesson's row of ``lessons.toml``; every run time there is written by ``make execute``, so no measured figure is
typed by hand. Each block is: explain + exercises + the notebook's measured CPU run time (learners run it once on
a laptop), rounded up to whole minutes; a notebook without a CPU measurement is planned at
:data:`UNMEASURED_MINUTES` and marked as such. Breaks are placed by the clock (:func:`with_breaks`), not by
lesson, so adding a lesson never means editing this file.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

from helpers.registry import Lesson, lessons  # noqa: E402

GUIDE = ROOT / "docs" / "workshop.md"
START, END = "<!-- agenda:start -->", "<!-- agenda:end -->"
UNMEASURED_MINUTES = 2  # a notebook not measured yet: its 45 s CPU budget, rounded up, with a margin
DAY_START_MINUTES = 9 * 60  # 09:00
BREAK, LUNCH = ("break", 15), ("lunch", 60)
BREAK_EVERY_MINUTES = 90  # a short break once this long has passed since the last one
LUNCH_FROM_MINUTES = 12 * 60  # lunch at the first lesson boundary from 12:00, in a day that runs past it


@dataclass(frozen=True)
class Block:
    """One row of an agenda."""

    start: int  # minutes after midnight
    minutes: int
    label: str
    cpu: str
    gpu: str


def clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def lesson_minutes(lesson: Lesson) -> int:
    """Explaining + exercises + the measured CPU run time, rounded up to whole minutes."""
    cpu_s = lesson.seconds("cpu")
    return lesson.explain_minutes + lesson.exercise_minutes + (math.ceil(cpu_s / 60) if cpu_s else UNMEASURED_MINUTES)


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
            blocks.append(Block(now, minutes, f"*{label}*", "", ""))
        else:
            minutes = lesson_minutes(item)
            cpu_s, gpu_s = item.seconds("cpu"), item.seconds("gpu")
            cpu = f"{cpu_s:.0f} s" if cpu_s else "not measured"
            gpu = f"{gpu_s:.0f} s ({item.machine('gpu')})" if gpu_s else "not measured"
            blocks.append(Block(now, minutes, f"{item.label}", cpu, gpu))
        now += minutes
    return blocks


def agenda_table(title: str, blocks: list[Block]) -> str:
    """One agenda as a markdown table, with its total length."""
    rows = [
        f"**{title}** ({clock(blocks[0].start)} to {clock(blocks[-1].start + blocks[-1].minutes)}, "
        f"{sum(block.minutes for block in blocks)} minutes)",
        "",
        "| time | minutes | block | CPU run time | GPU run time |",
        "|---|---|---|---|---|",
    ]
    for block in blocks:
        rows.append(f"| {clock(block.start)} | {block.minutes} | {block.label} | {block.cpu} | {block.gpu} |")
    return "\n".join(rows)


def half_day(all_lessons: list[Lesson]) -> list[Lesson]:
    return [lesson for lesson in all_lessons if lesson.half_day]


def full_day(all_lessons: list[Lesson]) -> list[Lesson]:
    """Every lesson but the follow-up session's (``follow_up = true`` in ``lessons.toml``)."""
    return [lesson for lesson in all_lessons if not lesson.follow_up]


def follow_up(all_lessons: list[Lesson]) -> list[Lesson]:
    """The lessons of the follow-up session: what Trainer users do next, taught on a second (half) day."""
    return [lesson for lesson in all_lessons if lesson.follow_up]


def agenda_markdown(all_lessons: list[Lesson]) -> str:
    """The agendas (half day, full day, follow-up session), and where their numbers come from."""
    machines = sorted({lesson.machine("cpu") for lesson in all_lessons if lesson.machine("cpu")})
    source = (
        f"Run times: measured top to bottom by `make execute` on a {', '.join(machines) or 'machine not recorded'} "
        "(CPU) and, where measured, on a GPU; read from `lessons.toml` by `tools/workshop_agenda.py`. A block is "
        "explaining + exercises + the CPU run time rounded up to whole minutes; a notebook not measured yet is "
        f"planned at {UNMEASURED_MINUTES} minutes. Breaks: {BREAK[1]} minutes after each {BREAK_EVERY_MINUTES} "
        f"minutes of teaching, lunch at the first lesson boundary from {clock(LUNCH_FROM_MINUTES)}."
    )
    tables = [
        source,
        agenda_table("Half day", build_blocks(with_breaks(half_day(all_lessons)))),
        agenda_table("Full day", build_blocks(with_breaks(full_day(all_lessons)))),
    ]
    if follow_up(all_lessons):
        tables.append(agenda_table("Follow-up session", build_blocks(with_breaks(follow_up(all_lessons)))))
    return "\n\n".join(tables)


def with_agenda(text: str, agenda: str) -> str:
    """``text`` with the part between the agenda markers replaced by ``agenda``."""
    if START not in text or END not in text:
        raise ValueError(f"the guide has no {START} ... {END} markers; put them where the agenda belongs.")
    before, rest = text.split(START, 1)
    return before + START + "\n" + agenda + "\n" + END + rest.split(END, 1)[1]


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
