"""Claim boxes name their source by the short name the README's "Sources" table lists, and the table's
"checked in lessons" column says which lessons really check each source."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
# A claim box is a collapsed <details> whose summary reads "<b>Claim check · Short name:</b> verdict";
# the older bold form "**Claim check · Short name:**" is read too.
CLAIM_RE = re.compile(r"(?:\*\*|<b>)Claim check · ([^:*<]+):(?:\*\*|</b>)")


def sources_table() -> dict[str, list[str]]:
    """Short name -> the lesson numbers the README says check it."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Sources", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| \*\*([^*]+)\*\* \|.*\| ([0-9, ]+) \|$", section, re.MULTILINE)
    return {name: [number.strip() for number in lessons.split(",")] for name, lessons in rows}


def markdown(path: Path) -> str:
    return "\n".join(cell.source for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "markdown")


def test_the_sources_table_lists_five_sources() -> None:
    assert len(sources_table()) == 5


def test_claim_boxes_name_a_listed_source_and_the_table_is_true() -> None:
    table = sources_table()
    checked: dict[str, set[str]] = {name: set() for name in table}
    for path in NOTEBOOKS:
        for name in CLAIM_RE.findall(markdown(path)):
            assert name in table, f"{path.name}: claim box names {name!r}, which the README's Sources table lacks"
            checked[name].add(path.name[:2])
    for name, lessons in table.items():
        assert sorted(checked[name]) == sorted(lessons), (
            f"README says {name!r} is checked in {lessons}; the notebooks' claim boxes say {sorted(checked[name])}"
        )


def test_no_notebook_names_a_source_by_its_file_number() -> None:
    for path in NOTEBOOKS:
        found = re.findall(r"\bseed 0\d\d\b|Seed check", markdown(path), re.IGNORECASE)
        assert not found, f"{path.name}: {found[:3]}: name the source by its short name (README, Sources)"
