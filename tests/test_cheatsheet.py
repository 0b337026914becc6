"""docs/cheatsheet.md is current: rebuilt from a recorded run, lesson 06's outputs and the installed Trainer, it
gives the committed text; its figure and printable page were drawn from that same text; its links hold."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import cheatsheet  # noqa: E402

from helpers.callbacks import CONTROL_FLAGS, callback_event_names  # noqa: E402

STALE = "docs/cheatsheet.md is stale: run `python tools/cheatsheet.py` and commit docs/cheatsheet*"


@pytest.fixture(scope="module")
def sheet() -> Any:
    return cheatsheet.collect()


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


def test_events_follow_the_recorded_run(sheet: Any) -> None:
    fired = [row.event for row in sheet.events]
    assert fired[0] == "on_init_end" and fired.index("on_train_begin") < fired.index("on_step_begin")
    assert sorted(fired + sheet.silent_events) == sorted(callback_event_names())
    log = next(row for row in sheet.events if row.event == "on_log")
    assert "logs" in log.given and "metrics" in next(row for row in sheet.events if row.event == "on_evaluate").given


def test_matrix_and_baseline_come_from_lesson_06(sheet: Any) -> None:
    assert sheet.flags == list(CONTROL_FLAGS)
    assert all(len(row) == len(CONTROL_FLAGS) + 1 for row in sheet.matrix) and len(sheet.matrix) >= 10
    assert sheet.baseline.startswith("{") and "epoch_steps" in sheet.baseline
    with pytest.raises(cheatsheet.CheatSheetError, match="make execute"):
        cheatsheet.control_matrix("00_start_here.ipynb")


def test_signatures_are_the_installed_ones(sheet: Any) -> None:
    import inspect

    from transformers import Trainer

    shown = dict(sheet.signatures)
    assert list(shown) == list(cheatsheet.METHODS_WORTH_OVERRIDING)
    for name, signature in shown.items():
        for parameter in inspect.signature(getattr(Trainer, name)).parameters:
            assert re.search(rf"[(, ]{parameter}\b", signature), (name, parameter, signature)
    assert "num_items_in_batch" in shown["compute_loss"] and "num_items_in_batch" in shown["training_step"]


def test_every_pitfall_links_to_a_section_of_its_lesson() -> None:
    for text, notebook, heading in cheatsheet.pitfall_rows():
        assert heading in cheatsheet.lesson_headings(notebook), f"{notebook} has no section {heading!r} ({text})"
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
