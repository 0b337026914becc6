"""What a learner reads and runs in each lesson, and whether it fits the reading budget.

Usage: python -m tools.reading_time [--json] [--budget] [NOTEBOOK ...]
       (no notebook: every lesson of lessons.toml; --budget: also list what exceeds the budget, exit 1 if any
       lesson held to it does)

A lesson is a worked example: the main path is what a learner sees (shown code cells, markdown outside
collapsed ``<details>`` boxes); proofs are *tucked* (the book hides them, JupyterLab collapses them, nbmake still
runs them). The learner's time is modelled as 150 words a minute, 4 s a shown code line, the notebook's measured
CPU run time and 1.5 times the planned exercise minutes. ``docs/authoring.md`` ("Worked examples first") gives the
budget; ``tests/test_reading_budget.py`` holds the lessons of :data:`HELD` to it, and the workshop agendas
(``tools/workshop_agenda.py``) and the README's syllabus plan with :func:`learner_minutes`.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
from course_facts.pins import pinned  # noqa: E402
from course_facts.registry import Lesson, lesson, lessons  # noqa: E402

# The lessons rewritten to the worked-examples standard, held to the budget by tests/test_reading_budget.py.
# A lesson joins when it is rewritten; the goal is every lesson of lessons.toml.
HELD = frozenset(
    {"00", "01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13", "14", "15", "16", "17", "18"}
    | {"19", "20", "21"}
)

TUCK_TAGS = frozenset({"hide-input", "hide-cell", "remove-input", "remove-cell", "hide-output"})
WORDS_A_MINUTE = 150
SECONDS_A_CODE_LINE = 4
EXERCISE_FACTOR = 1.5
FACTORY = "make_trainer"
_RELEASE = re.compile(r"\b([45])\.(\d+)\.(\d+)\b|\b4\.x\b|\bladder\b|\bwheel\b|\b2021\b", re.IGNORECASE)
_DETAILS = re.compile(r"<details>.*?</details>", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_TRAINS = re.compile(r"\.train\(|\.hyperparameter_search\(")


@dataclass(frozen=True)
class Budget:
    """The per-lesson reading budget (``docs/authoring.md``, "Worked examples first")."""

    words: int = 1800
    code_lines: int = 250
    tucked_code_floor: int = 40  # tucked code may reach this many lines even where little code is shown
    assert_cells_per_ten: int = 1
    release_sentences: int = 2
    words_before_first_run: int = 600
    minutes: int = 60
    capstone_minutes: int = 90


BUDGET = Budget()


@dataclass(frozen=True)
class Reading:
    """What one lesson puts in front of a learner."""

    lesson: str
    words: int  # main-path prose
    aside_words: int  # inside collapsed <details> boxes or tucked markdown cells
    code_lines: int  # non-blank lines of shown code cells (the set-up cell left out)
    tucked_code_lines: int
    code_cells: int  # shown code cells
    assert_cells: int  # shown code cells with an assert statement
    trainer_cells: int  # shown cells that write TrainingArguments(...) or a Trainer constructor
    factory_cells: int  # shown cells that go through make_trainer (or a partial or wrapper of it)
    release_sentences: int  # main-path sentences naming another release, the ladder, a wheel or 2021
    words_before_first_run: int | None  # main-path words before the first shown cell that trains
    learner_minutes: int
    planned_minutes: int  # the workshop's plan: explaining + exercises


def is_tucked(cell: dict) -> bool:
    """Whether the book hides the cell (a hide/remove tag) or JupyterLab collapses its source."""
    metadata = cell.get("metadata", {})
    return bool(TUCK_TAGS & set(metadata.get("tags", []))) or bool(metadata.get("jupyter", {}).get("source_hidden"))


def _python(source: str) -> ast.Module | None:
    """A code cell as Python, IPython magics and shell lines dropped; ``None`` where it does not parse."""
    kept = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    try:
        return ast.parse(kept)
    except SyntaxError:
        return None


def _called(node: ast.AST) -> str:
    function = node.func if isinstance(node, ast.Call) else node
    return function.id if isinstance(function, ast.Name) else getattr(function, "attr", "")


def called_names(tree: ast.AST) -> set[str]:
    """The names a piece of code calls; ``partial(f, ...)`` also counts as a call of ``f``."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            names.add(_called(node))
            if _called(node) == "partial" and node.args:
                names.add(_called(node.args[0]))
    return names


def factory_names(trees: list[ast.Module]) -> set[str]:
    """``make_trainer`` and every function or variable of the notebook built on it, to a fixed point."""
    found = {FACTORY}
    while True:
        before = len(found)
        for tree in trees:
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.Assign)) and called_names(node) & found:
                    if isinstance(node, ast.FunctionDef):
                        found.add(node.name)
                    else:
                        found |= {target.id for target in node.targets if isinstance(target, ast.Name)}
        if len(found) == before:
            return found


def release_sentences(prose: str, pin: str) -> int:
    """Sentences of ``prose`` that name a transformers release other than ``pin``, the ladder, a wheel or 2021."""
    return sum(
        any(match.group(0) != pin for match in _RELEASE.finditer(sentence)) for sentence in _SENTENCE_END.split(prose)
    )


def learner_minutes(words: int, code_lines: int, entry: Lesson | None) -> float:
    """The learner-time model: reading, shown code, the measured run time and the exercises with a margin."""
    minutes = words / WORDS_A_MINUTE + code_lines * SECONDS_A_CODE_LINE / 60
    if entry is not None:
        minutes += (entry.seconds("cpu") or 0) / 60 + EXERCISE_FACTOR * entry.exercise_minutes
    return minutes


def read_lesson(path: Path) -> Reading:
    """Measure one lesson notebook (its registry row gives the run time and the planned minutes).

    Raises:
        FileNotFoundError, KeyError: the notebook does not exist, or ``lessons.toml`` does not list it.
    """
    path = Path(path)
    registry = ROOT / "lessons.toml"
    return _read_lesson(path, path.stat().st_mtime_ns, registry.stat().st_mtime_ns if registry.exists() else 0)


@cache
def _read_lesson(path: Path, _notebook_version: int, _registry_version: int) -> Reading:
    """:func:`read_lesson`, read again only when the notebook or the registry changed on disk."""
    notebook = json.loads(path.read_text(encoding="utf-8"))
    entry = lesson(path.name)
    pin = pinned()
    cells = notebook["cells"]
    trees = [tree for c in cells if c["cell_type"] == "code" and (tree := _python("".join(c["source"])))]
    factories = factory_names(trees)
    counts = dict.fromkeys(("words", "aside", "lines", "tucked", "cells", "asserts", "writes", "factory", "rel"), 0)
    first_run: int | None = None
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            main = _DETAILS.sub(" ", source)
            counts["aside"] += sum(len(box.split()) for box in _DETAILS.findall(source))
            if is_tucked(cell):
                counts["aside"] += len(main.split())
                continue
            counts["words"] += len(main.split())
            counts["rel"] += release_sentences(main, pin)
            continue
        if cell["cell_type"] != "code" or source.lstrip().startswith("# Set-up"):
            continue
        lines = sum(1 for line in source.splitlines() if line.strip())
        if is_tucked(cell):
            counts["tucked"] += lines
            continue
        counts["cells"] += 1
        counts["lines"] += lines
        tree = _python(source)
        names = called_names(tree) if tree else set()
        counts["asserts"] += bool(re.search(r"^\s*assert\b", source, re.MULTILINE))
        counts["writes"] += "TrainingArguments" in names or any(
            n.endswith("Trainer") and n[:1].isupper() for n in names
        )
        counts["factory"] += bool(names & factories)
        if first_run is None and _TRAINS.search(source):
            first_run = counts["words"]
    return Reading(
        lesson=entry.number,
        words=counts["words"],
        aside_words=counts["aside"],
        code_lines=counts["lines"],
        tucked_code_lines=counts["tucked"],
        code_cells=counts["cells"],
        assert_cells=counts["asserts"],
        trainer_cells=counts["writes"],
        factory_cells=counts["factory"],
        release_sentences=counts["rel"],
        words_before_first_run=first_run,
        learner_minutes=round(learner_minutes(counts["words"], counts["lines"], entry)),
        planned_minutes=entry.explain_minutes + entry.exercise_minutes,
    )


def over_budget(reading: Reading, budget: Budget = BUDGET) -> list[str]:
    """The budget lines a lesson exceeds, in words a maintainer can act on (empty: it fits)."""
    limit = budget.capstone_minutes if reading.lesson == "12" else budget.minutes
    first = reading.words_before_first_run
    checks = [
        (reading.words <= budget.words, f"{reading.words} main-path words (budget {budget.words:,})"),
        (reading.aside_words <= reading.words, f"{reading.aside_words} aside words, more than the main path"),
        (
            reading.code_lines <= budget.code_lines,
            f"{reading.code_lines} shown code lines (budget {budget.code_lines})",
        ),
        (
            reading.tucked_code_lines <= max(budget.tucked_code_floor, reading.code_lines),
            f"{reading.tucked_code_lines} tucked code lines, more than shown",
        ),
        (
            reading.assert_cells <= max(budget.assert_cells_per_ten, reading.code_cells // 10),
            f"{reading.assert_cells} of {reading.code_cells} shown code cells assert (budget 1 in 10)",
        ),
        (reading.factory_cells == 0, f"{reading.factory_cells} shown cells build Trainers through {FACTORY}"),
        (
            reading.release_sentences <= budget.release_sentences,
            f"{reading.release_sentences} main-path sentences on other releases (budget {budget.release_sentences})",
        ),
        (
            first is None or first <= budget.words_before_first_run,
            f"{first} words before the first training run (budget {budget.words_before_first_run})",
        ),
        (reading.learner_minutes <= limit, f"{reading.learner_minutes} learner minutes (budget {limit})"),
    ]
    return [message for fits, message in checks if not fits]


def lesson_paths() -> list[Path]:
    """Every lesson notebook of the registry, in order."""
    return [ROOT / "notebooks" / entry.file for entry in lessons()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Measure what each lesson puts in front of a learner.")
    parser.add_argument("notebooks", nargs="*", type=Path, help="lesson notebooks (default: every lesson)")
    parser.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    parser.add_argument(
        "--budget", action="store_true", help="list what exceeds the budget; exit 1 if a held lesson does"
    )
    options = parser.parse_args(argv)
    readings = [read_lesson(path) for path in options.notebooks or lesson_paths()]
    if options.json:
        print(json.dumps([asdict(reading) for reading in readings], indent=1))
    else:
        header = "lesson words asides code tucked cells asserts trainer factory release before_run minutes planned"
        print(header)
        for r in readings:
            print(
                f"{r.lesson:>6} {r.words:>5} {r.aside_words:>6} {r.code_lines:>4} {r.tucked_code_lines:>6} "
                f"{r.code_cells:>5} {r.assert_cells:>7} {r.trainer_cells:>7} {r.factory_cells:>7} "
                f"{r.release_sentences:>7} {str(r.words_before_first_run):>10} {r.learner_minutes:>7} "
                f"{r.planned_minutes:>7}"
            )
    status = 0
    if options.budget:
        for reading in readings:
            held = "held" if reading.lesson in HELD else "not held yet"
            for line in over_budget(reading):
                print(f"{reading.lesson} ({held}): {line}")
                status = status or int(reading.lesson in HELD)
    return status


if __name__ == "__main__":
    sys.exit(main())
