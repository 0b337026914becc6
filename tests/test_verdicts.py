"""The claim boxes' verdict lines are written from the ladder's results and the pin (tools/verdicts.py), never typed.

The sentences are tested on made-up results (a probe that never changed, one whose verdict changed at a bisected
release, a release with no row, a probe the results lack); the committed notebooks are read: every block names
probes the ladder ran, sits in a section the probe's ``where`` names, and holds what the formatter writes today.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course_facts.pins import pinned
from tools import verdicts
from tools.ladder import probe_table

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
DATA = {
    "releases": ["4.23.1", "4.46.3", "5.1.0"],
    "results": {
        "5.1.0": {
            "probes": {
                "steady": {"verdict": "holds"},
                "arrived": {"verdict": "holds"},
                "gone": {"verdict": "cannot run"},
            }
        }
    },
    "changes": [
        {"probe": "arrived", "last_old": "4.46.0", "first_new": "4.47.0", "old": "cannot run", "new": "does not hold"},
        {"probe": "arrived", "last_old": "4.50.0", "first_new": "4.50.1", "old": "does not hold", "new": "holds"},
        {"probe": "gone", "last_old": "4.46.3", "first_new": "5.1.0", "old": "holds", "new": "cannot run"},
    ],
}


def test_a_sentence_gives_the_verdict_on_the_pin_since_when_and_what_it_was_before() -> None:
    assert verdicts.sentence("steady", DATA, "5.1.0") == (
        "Ladder, `steady`: **holds** on the pinned release, 5.1.0, as on every release the ladder ran since 4.23.1."
    )
    assert verdicts.sentence("arrived", DATA, "5.1.0") == (
        "Ladder, `arrived`: **holds** on the pinned release, 5.1.0, since 4.50.1; on 4.50.0 it does not hold "
        "(bisected)."
    )
    assert verdicts.sentence("gone", DATA, "5.1.0").endswith(
        "**cannot run** on the pinned release, 5.1.0, since 5.1.0; on 4.46.3 it holds (adjacent rungs)."
    )


def test_a_missing_row_or_probe_says_what_to_run() -> None:
    with pytest.raises(verdicts.VerdictError, match=r"no row for the pinned transformers 5.2.0: run `make ladder`"):
        verdicts.sentence("steady", DATA, "5.2.0")
    with pytest.raises(verdicts.VerdictError, match="names the probe 'stedy'.*fix the name"):
        verdicts.sentence("stedy", DATA, "5.1.0")


def test_write_verdicts_fills_each_block_and_keeps_the_rest() -> None:
    text = "A box.\n\n<!-- verdict: steady arrived -->\nstale words\n<!-- /verdict -->\n</details>"
    written = verdicts.write_verdicts(text, DATA, "5.1.0")
    assert written.startswith("A box.\n\n<!-- verdict: steady arrived -->\nLadder, `steady`: ")
    assert "stale" not in written and written.endswith("\n<!-- /verdict -->\n</details>")
    assert written.count("Ladder, `") == 2
    assert verdicts.write_verdicts(written, DATA, "5.1.0") == written  # written twice, the same
    assert verdicts.named_probes(written) == ["steady", "arrived"]
    assert verdicts.typed_pin(written, "5.1.0") == []


def _blocks() -> list[tuple[str, str, str]]:
    """``(notebook, section number, cell source)`` of every markdown cell with a verdict block."""
    found = []
    for path in NOTEBOOKS:
        section = "0"
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            if cell["cell_type"] != "markdown":
                continue
            for line in source.splitlines():
                heading = re.match(r"## (\d+)\. ", line)
                section = heading.group(1) if heading else section
            if verdicts.BLOCK.search(source):
                found.append((path.name, section, source))
    return found


def test_the_claim_boxes_name_probes_of_their_section_and_hold_todays_lines() -> None:
    blocks = _blocks()
    assert len(blocks) >= 30, "the claim boxes that the ladder probes name their probes"
    table = probe_table()
    wrong, stale = [], []
    for notebook, section, source in blocks:
        assert "Claim check ·" in source or "<b>When it changed</b>" in source, (
            f"{notebook} §{section}: a verdict block outside a claim box or a 'When it changed' box"
        )
        for probe in verdicts.named_probes(source):
            if probe not in table:
                wrong.append(f"{notebook} §{section}: no probe {probe!r}")
            elif f"{notebook[:2]} §{section}" not in table[probe]["where"]:
                wrong.append(f"{notebook} §{section}: {probe} is tested in {table[probe]['where']}")
        if verdicts.write_verdicts(source) != source:
            stale.append(f"{notebook} §{section}")
    assert wrong == []
    assert stale == [], (
        f"verdict lines that differ from the ladder's results for {pinned()}: run "
        "`python -m tools.notebook_format apply notebooks/*.ipynb`:\n  " + "\n  ".join(stale)
    )
