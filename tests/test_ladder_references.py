"""The release ladder's "Tested in lesson NN §N" references point at sections the notebooks have.

Each probe (``tools/ladder/probes_*.py``) and each source claim (``tools/ladder/era.py``) names, in ``where``, the
lesson sections that test its claim: parts such as ``02 §1``, ``17 §3 (fp16_backend, fp16_opt_level)`` or
``07 §5 (claim box)``, separated by ``"; "``. ``docs/ladder.md`` turns them into links. A lesson rewrite renumbers
sections, so these tests read the notebooks (never run them) and fail when a part

- is not of the form ``NN §N`` with an optional note in brackets;
- names a lesson that ``lessons.toml`` lacks, or a section number with no ``## N.`` heading in its notebook;
- has a note that names code (a ``snake_case`` or ``CamelCase`` word) that the section never mentions, or says
  "claim box" where the section has none.

The results file stores the same strings (the page is written from it): they must equal the code's.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import pytest

from course_facts.registry import lessons
from tools import ladder
from tools.ladder.era import SOURCE_CLAIMS

ROOT = Path(__file__).resolve().parent.parent
PART = re.compile(r"(?P<lesson>\d\d) §(?P<section>\d+)(?: \((?P<note>[^()]+)\))?")
SECTION_HEADING = re.compile(r"## (\d+)\. ")
# Words of a note that name code: with an underscore (compute_loss_func) or CamelCase (MultiTaskTrainer).
CODE_WORD = re.compile(r"\b(?:\w*_\w*|[A-Z][a-z0-9]+[A-Z]\w*)\b")
CLAIM_BOX = "Claim check ·"


@cache
def notebook_sections(number: str) -> dict[str, str]:
    """``{section number: its text}`` of lesson ``number``'s notebook: from its ``## N.`` heading to the next
    ``## `` heading, markdown and code together. Empty if lessons.toml has no such lesson."""
    files = {lesson.number: lesson.file for lesson in lessons()}
    if number not in files:
        return {}
    cells = json.loads((ROOT / "notebooks" / files[number]).read_text(encoding="utf-8"))["cells"]
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for cell in cells:
        source = "".join(cell["source"])
        for line in source.splitlines():
            if cell["cell_type"] == "markdown" and line.startswith("## "):
                heading = SECTION_HEADING.match(line)
                current = sections.setdefault(heading.group(1), []) if heading else None
            if current is not None:
                current.append(line)
    return {section: "\n".join(lines) for section, lines in sections.items()}


def reference_problems(where: str) -> list[str]:
    """What is wrong with one ``where`` string (empty when every part points at a section that tests it)."""
    known = {lesson.number for lesson in lessons()}
    found = []
    for part in where.split("; "):
        match = PART.fullmatch(part)
        if match is None:
            found.append(f"{part!r} is not 'NN §N' or 'NN §N (note)'")
            continue
        number, section, note = match["lesson"], match["section"], match["note"] or ""
        if number not in known:
            found.append(f"{part!r}: lessons.toml has no lesson {number}")
            continue
        sections = notebook_sections(number)
        if section not in sections:
            found.append(
                f"{part!r}: lesson {number}'s notebook has no '## {section}.' heading "
                f"(it has sections {', '.join(sorted(sections, key=int)) or 'none'})"
            )
            continue
        text = sections[section]
        missing = [word for word in CODE_WORD.findall(note) if word not in text]
        if missing:
            found.append(f"{part!r}: lesson {number} §{section} never mentions {', '.join(missing)}")
        if "claim box" in note and CLAIM_BOX not in text:
            found.append(f"{part!r}: lesson {number} §{section} has no claim box")
    return found


def references() -> dict[str, str]:
    """Every ``where`` of the ladder: ``{"probe <id>" or "source claim <id>": where}``."""
    found = {f"probe {key}": meta["where"] for key, meta in ladder.probe_table().items()}
    found.update({f"source claim {claim.id}": claim.where for claim in SOURCE_CLAIMS})
    return found


@pytest.mark.parametrize("name", sorted(references()))
def test_the_reference_names_a_section_the_lesson_has(name: str) -> None:
    where = references()[name]
    problems = reference_problems(where)
    assert not problems, (
        f"{name} says it is tested in {where!r}, but " + "; ".join(problems) + ". Read the notebook, find the "
        "section that now tests the claim (its claim box or tucked assert), and fix the where string in "
        "tools/ladder/probes_*.py or tools/ladder/era.py; then refresh the results file's probe table and run "
        "`python -m tools.ladder page`."
    )


def test_the_checker_catches_stale_references() -> None:
    """Each kind of stale reference is reported (so the test above can fail), and a right one is not."""
    sections = notebook_sections("02")
    last = max(sections, key=int)
    box = next(number for number, text in sections.items() if CLAIM_BOX in text)
    plain = next((number for number, text in sections.items() if CLAIM_BOX not in text), None)
    assert reference_problems(f"02 §{box}") == []
    assert reference_problems(f"02 §{box} (claim box)") == []
    bad = {
        "99 §1": "no lesson 99",
        f"02 §{int(last) + 1}": "no '## ",
        "2 §1": "is not 'NN §N'",
        "02": "is not 'NN §N'",
        "02 §1, §2": "is not 'NN §N'",
        f"02 §{box} (NoSuchTrainer)": "never mentions NoSuchTrainer",
        f"02 §{box} (no_such_argument)": "never mentions no_such_argument",
        f"02 §{box}; 99 §1": "no lesson 99",
    }
    if plain is not None:
        bad[f"02 §{plain} (claim box)"] = "has no claim box"
    for where, expected in bad.items():
        problems = reference_problems(where)
        assert len(problems) == 1 and expected in problems[0], (where, problems)


def test_the_results_file_stores_the_same_references() -> None:
    """docs/ladder.md is written from docs/ladder/results.json, so its copies of the where strings must be the
    code's (the measured verdicts are not compared here)."""
    results = ladder.read_results()
    stored = {key: meta["where"] for key, meta in results["probes"].items()}
    assert stored == {key: meta["where"] for key, meta in ladder.probe_table().items()}, (
        "the results file's probe table is stale: refresh results['probes'] with probe_table() "
        "(write_results), then `python -m tools.ladder page`"
    )
    era = results.get("era", {}).get("claims", {})
    assert {key: meta["where"] for key, meta in era.items()} == {c.id: c.where for c in SOURCE_CLAIMS}, (
        "the results file's era claims are stale: refresh results['era']['claims'][id]['where'] from "
        "SOURCE_CLAIMS, then `python -m tools.ladder page`"
    )
