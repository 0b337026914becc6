"""data/README.md is current: regenerating it from the data gives the committed text."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_datasheet_matches_the_data() -> None:
    from tools import datasheet

    assert (ROOT / "data" / "README.md").read_text() == datasheet.render(), "run `make datasheet` and commit"
