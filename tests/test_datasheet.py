"""data/README.md is current: regenerating it from the data gives the committed text."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))


def test_datasheet_matches_the_data() -> None:
    import datasheet

    assert (ROOT / "data" / "README.md").read_text() == datasheet.render(), "run `make datasheet` and commit"
