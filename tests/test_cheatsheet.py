"""docs/cheatsheet.md is current: rebuilt from a recorded run, the control matrix a lesson displayed as data and the
installed Trainer, it gives the committed text; its figure and printable page were drawn from that same text; every
Python block on it runs as written; its links hold; and the page speaks to learners."""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent

from helpers.callback_events import callback_event_names  # noqa: E402
from helpers.control_matrix import CONTROL_FLAGS  # noqa: E402
from tools import cheatsheet  # noqa: E402

STALE = "docs/cheatsheet.md is stale: run `python -m tools.cheatsheet` and commit docs/cheatsheet*"


@pytest.fixture(scope="module")
def sheet() -> Any:
    return cheatsheet.collect()


def python_blocks(markdown: str) -> list[str]:
    """The fenced ``python`` blocks of a page, in order (the tests execute each one as it is written)."""
    return re.findall(r"(?ms)^```python\n(.*?)^```$", markdown)


def lesson_headings(notebook: str) -> list[str]:
    """The ``##`` headings of a committed lesson, in order."""
    cells = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    lines = ("".join(cell["source"]).splitlines() for cell in cells if cell["cell_type"] == "markdown")
    return [line[3:].strip() for block in lines for line in block if line.startswith("## ")]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_committed_page_is_current(sheet: Any) -> None:
    assert cheatsheet.PAGE.read_text(encoding="utf-8") == cheatsheet.render_markdown(sheet), STALE


def test_figure_and_printable_page_were_drawn_from_the_committed_data(sheet: Any) -> None:
    from PIL import Image

    with Image.open(cheatsheet.LOOP_PNG) as image:
        assert image.width > 300 and image.height > 600
        assert image.text.get("Description") == f"loop map sha256 {_sha(cheatsheet.loop_text(sheet.loop))}", STALE
    printable = cheatsheet.PRINTABLE.read_bytes()
    assert printable.startswith(b"%PDF")
    assert len(re.findall(rb"/Type\s*/Page(?![a-z])", printable)) == 1, "the printable is one page"
    digest = _sha(cheatsheet.PAGE.read_text(encoding="utf-8"))
    assert f"(cheatsheet.md sha256 {digest})".encode() in printable, STALE


def test_every_python_block_on_the_page_runs_as_written() -> None:
    """A learner pastes them: each block runs in a fresh namespace, and the override template's methods keep the
    installed Trainer's parameters (no made-up ``torch.Module``, no dropped ``num_items_in_batch``)."""
    from transformers import Trainer, TrainerCallback

    blocks = python_blocks(cheatsheet.PAGE.read_text(encoding="utf-8"))
    assert len(blocks) == 2, "the callback example and the override template"
    namespaces = []
    for block in blocks:
        namespace: dict[str, Any] = {"__name__": "cheatsheet_block"}
        exec(compile(block, "docs/cheatsheet.md", "exec"), namespace)  # noqa: S102 - the page's own code
        namespaces.append(namespace)
    assert issubclass(namespaces[0]["MyCallback"], TrainerCallback)
    trainer_class = namespaces[1]["MyTrainer"]
    assert issubclass(trainer_class, Trainer)
    for name in cheatsheet.METHODS_WORTH_OVERRIDING:
        assert name in vars(trainer_class), f"the template does not override {name}"
        ours, installed = inspect.signature(getattr(trainer_class, name)), inspect.signature(getattr(Trainer, name))
        assert list(ours.parameters) == list(installed.parameters), name
        assert [p.default for p in ours.parameters.values()] == [p.default for p in installed.parameters.values()]


def test_code_lines_fit_the_books_column() -> None:
    page = cheatsheet.PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"(?ms)^```\w*\n(.*?)^```$", page)
    long = [line for block in blocks for line in block.splitlines() if len(line) > cheatsheet.CODE_WIDTH]
    assert blocks and not long, long


def test_shortest_names_exist_as_written() -> None:
    assert cheatsheet.shortest_name("torch.nn.modules.module.Module") == "torch.nn.Module"
    assert cheatsheet.shortest_name("torch.utils.data.dataloader.DataLoader") == "torch.utils.data.DataLoader"
    assert cheatsheet.shortest_name("torch.optim.optimizer.Optimizer") == "torch.optim.Optimizer"
    assert cheatsheet.shortest_name("optuna.Trial") == "optuna.Trial", "a name that resolves to nothing is kept"
    assert "torch.Module" not in cheatsheet.short_annotation("model: torch.nn.modules.module.Module")


def test_the_page_opens_for_learners_not_maintainers() -> None:
    page = cheatsheet.PAGE.read_text(encoding="utf-8")
    visible = re.sub(r"(?s)<!--.*?-->", "", page).strip()
    assert visible.startswith("# Cheat sheet\n")
    opening = visible.split("\n## ", 1)[0]
    for note in ("tools/", "tests/", "edit by hand", "stale", "Generated"):
        assert note not in opening, f"a maintainer's note on the learner's page: {note!r}"
    assert "tools/cheatsheet.py" in page.split("\n", 1)[0], "the maintainers' note stays, as a comment"


def test_events_follow_the_recorded_run(sheet: Any) -> None:
    fired = [row.event for row in sheet.events]
    assert fired[0] == "on_init_end" and fired.index("on_train_begin") < fired.index("on_step_begin")
    assert sorted(fired + sheet.silent_events) == sorted(callback_event_names())
    log = next(row for row in sheet.events if row.event == "on_log")
    assert "logs" in log.given and "metrics" in next(row for row in sheet.events if row.event == "on_evaluate").given


def test_matrix_and_baseline_come_from_a_lessons_data(sheet: Any) -> None:
    matrix = sheet.matrix
    assert matrix.flags == list(CONTROL_FLAGS)
    assert len(matrix.cells) == len(matrix.events) >= 10 and all(len(row) == len(CONTROL_FLAGS) for row in matrix.cells)
    assert "epoch_steps" in matrix.baseline
    assert matrix.section in lesson_headings(matrix.lesson), "the link goes to the section showing it"


def _fixture_lesson(tmp_path: Path, name: str, data: dict[str, Any] | None, source: str = "display(...)") -> Any:
    """A stand-in registry entry: a notebook with a section heading and, if ``data``, the matrix bundle."""
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(source)
    if data is not None:
        bundle = {"text/plain": "table", cheatsheet.MATRIX_MIMETYPE: data}
        cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    notebook.cells = [nbformat.v4.new_markdown_cell("## 1. Intro"), nbformat.v4.new_markdown_cell("## 2. Matrix"), cell]
    path = tmp_path / name
    nbformat.write(notebook, path)
    return SimpleNamespace(file=name, path=path)


MATRIX = {
    "flags": ["should_log", "should_save"],
    "events": ["on_step_begin", "on_log", "on_save"],
    "cells": [["+log@2", "+save@2"], ["no effect", "+save@1"], ["no effect", "no effect"]],
    "baseline": "{'log': (1,), 'epoch_steps': (4, 4)}",
}


def test_the_matrix_is_found_by_its_mimetype_in_any_lesson(tmp_path: Path) -> None:
    registry = [_fixture_lesson(tmp_path, "01_a.ipynb", None), _fixture_lesson(tmp_path, "02_b.ipynb", MATRIX)]
    found = cheatsheet.find_matrix(registry)
    assert (found.lesson, found.section, found.flags, found.events) == (
        "02_b.ipynb",
        "2. Matrix",
        MATRIX["flags"],
        MATRIX["events"],
    )
    assert found.cells == MATRIX["cells"] and found.baseline == MATRIX["baseline"]
    assert cheatsheet.parse_matrix({**MATRIX, "baseline": {"log": [1]}}, "x")[3] == '{"log": [1]}'


def test_a_missing_repeated_or_malformed_matrix_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(cheatsheet.CheatSheetError, match="found: none.*make execute"):
        cheatsheet.find_matrix([_fixture_lesson(tmp_path, "01_a.ipynb", None)])
    unexecuted = _fixture_lesson(tmp_path, "02_b.ipynb", None, f"display({{{cheatsheet.MATRIX_MIMETYPE!r}: data}})")
    with pytest.raises(cheatsheet.CheatSheetError, match=r"found: none.*make execute NB=notebooks/02_b\.ipynb"):
        cheatsheet.find_matrix([_fixture_lesson(tmp_path, "01_a.ipynb", None), unexecuted])
    twice = [_fixture_lesson(tmp_path, "01_a.ipynb", MATRIX), _fixture_lesson(tmp_path, "02_b.ipynb", MATRIX)]
    with pytest.raises(cheatsheet.CheatSheetError, match="found: 01_a.ipynb, 02_b.ipynb"):
        cheatsheet.find_matrix(twice)
    with pytest.raises(cheatsheet.CheatSheetError, match="one row per event"):
        cheatsheet.find_matrix([_fixture_lesson(tmp_path, "03_c.ipynb", {**MATRIX, "cells": MATRIX["cells"][:2]})])
    with pytest.raises(cheatsheet.CheatSheetError, match="needs the fields"):
        cheatsheet.parse_matrix({"flags": []}, "x")


def test_signatures_are_the_installed_ones(sheet: Any) -> None:
    from transformers import Trainer

    shown = dict(sheet.signatures)
    assert list(shown) == list(cheatsheet.METHODS_WORTH_OVERRIDING)
    for name, signature in shown.items():
        for parameter in inspect.signature(getattr(Trainer, name)).parameters:
            assert re.search(rf"[(, ]{parameter}\b", signature), (name, parameter, signature)
    assert "num_items_in_batch" in shown["compute_loss"] and "num_items_in_batch" in shown["training_step"]


def test_every_pitfall_links_to_a_section_of_its_lesson() -> None:
    for text, notebook, heading in cheatsheet.pitfall_rows():
        assert heading in lesson_headings(notebook), f"{notebook} has no section {heading!r} ({text})"
    assert cheatsheet.heading_anchor("4. `tokenizer=` is gone: use `processing_class=`") == (
        "4-tokenizer-is-gone-use-processing_class"
    )


def test_check_mode_reports_a_stale_page(sheet: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = tmp_path / "cheatsheet.md"
    monkeypatch.setattr(cheatsheet, "PAGE", page)
    monkeypatch.setattr(cheatsheet, "ROOT", tmp_path)
    monkeypatch.setattr(cheatsheet, "collect", lambda: sheet)
    page.write_text(cheatsheet.render_markdown(sheet).replace("num_items_in_batch", "num_items"), encoding="utf-8")
    assert cheatsheet.main(["--check"]) == 1
    page.write_text(cheatsheet.render_markdown(sheet), encoding="utf-8")
    assert cheatsheet.main(["--check"]) == 0
