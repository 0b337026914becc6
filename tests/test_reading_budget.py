"""The reading budget: the lessons rewritten as worked examples stay within it, and its measure reads notebooks
the way the book and JupyterLab show them (tools/reading_time.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from course_facts.registry import lessons
from tools import reading_time
from tools.reading_time import HELD, Reading, is_tucked, over_budget, read_lesson, release_sentences

ROOT = Path(__file__).resolve().parent.parent
HELD_LESSONS = [entry for entry in lessons() if entry.number in HELD]


@pytest.mark.parametrize("entry", HELD_LESSONS, ids=lambda entry: entry.number)
def test_a_rewritten_lesson_fits_the_reading_budget(entry) -> None:
    reading = read_lesson(ROOT / "notebooks" / entry.file)
    assert over_budget(reading) == [], f"{entry.file} exceeds the reading budget (docs/authoring.md)"


def test_the_first_lessons_are_held() -> None:
    assert {"00", "01", "02", "03", "04"} <= {entry.number for entry in HELD_LESSONS}


def cell(kind: str, source: str, tags: tuple[str, ...] = (), hidden: bool = False) -> dict:
    metadata: dict = {"tags": list(tags)}
    if hidden:
        metadata["jupyter"] = {"source_hidden": True}
    return {"cell_type": kind, "source": source, "metadata": metadata, **({"outputs": []} if kind == "code" else {})}


def measure(tmp_path, cells: list[dict]) -> Reading:
    """Measure a made-up notebook under lesson 01's registry row (its run time and exercises)."""
    entry = next(entry for entry in lessons() if entry.number == "01")
    path = tmp_path / entry.file
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return read_lesson(path)


def test_tucked_cells_and_details_boxes_are_asides(tmp_path) -> None:
    reading = measure(
        tmp_path,
        [
            cell("markdown", "one two three\n<details><summary>box</summary>\n\nfour five\n</details>"),
            cell("code", "x = 1\n\ny = 2"),
            cell("code", "assert x == 1", tags=("hide-input",), hidden=True),
            cell("code", "assert y == 2", hidden=True),
            cell("code", "# Set-up\nimport helpers"),
        ],
    )
    assert (reading.words, reading.aside_words) == (3, 4)
    assert (reading.code_cells, reading.code_lines, reading.tucked_code_lines, reading.assert_cells) == (1, 2, 2, 0)
    assert is_tucked(cell("code", "", tags=("remove-cell",))) and not is_tucked(cell("code", "", tags=("other",)))


def test_the_factory_is_found_through_partials_and_wrappers(tmp_path) -> None:
    reading = measure(
        tmp_path,
        [
            cell("code", "from functools import partial\nshort = partial(make_trainer, 'x')"),
            cell("code", "def run():\n    return short().train()"),
            cell("code", "run()"),
            cell("code", "args = TrainingArguments('out')\ntrainer = Trainer(model=m, args=args)"),
        ],
    )
    assert reading.factory_cells == 3 and reading.trainer_cells == 1


def test_words_before_the_first_run_and_release_sentences(tmp_path) -> None:
    reading = measure(
        tmp_path,
        [
            cell("markdown", "Some words here. In 2021 it was different."),
            cell("code", "trainer.train()"),
            cell("markdown", "more words after"),
        ],
    )
    assert reading.words_before_first_run == 8 and reading.release_sentences == 1
    assert release_sentences("On 4.8.2 it failed. The ladder says so. Fine.", pin="5.24.0") == 2
    assert release_sentences("It holds on 5.24.0.", pin="5.24.0") == 0


def test_over_budget_names_each_excess() -> None:
    fits = Reading("05", 1800, 100, 250, 40, 10, 1, 2, 0, 2, 600, 60, 30)
    assert over_budget(fits) == []
    too_long = Reading("05", 1801, 1900, 251, 300, 10, 2, 2, 1, 3, 601, 61, 30)
    assert len(over_budget(too_long)) == 9
    assert over_budget(Reading("12", 100, 0, 10, 0, 1, 0, 1, 0, 0, None, 75, 55)) == []  # the capstone: 90 minutes


def test_the_command_fails_only_for_a_held_lesson_over_budget(tmp_path, monkeypatch, capsys) -> None:
    measure(tmp_path, [cell("markdown", "word " * 1801), cell("code", "trainer.train()")])
    path = str(next(tmp_path.glob("*.ipynb")))
    monkeypatch.setattr(reading_time, "HELD", frozenset({"01"}))
    assert reading_time.main(["--budget", path]) == 1
    assert "01 (held): 1801 main-path words (budget 1,800)" in capsys.readouterr().out
    monkeypatch.setattr(reading_time, "HELD", frozenset())
    assert reading_time.main(["--budget", path]) == 0
    assert "not held yet" in capsys.readouterr().out
