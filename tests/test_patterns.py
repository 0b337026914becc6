"""Each lesson's pattern and shown code stand on their own (issue 58; docs/authoring.md, "The pattern").

Per lesson: cells tagged `pattern` exist; they call no course helper but the offline loaders and the run folder,
each loader with its `# your project:` comment, and never read `profile`; no shown cell uses a name that only a
tucked cell binds; at most one shown cell calls a course instrument; the last pattern cell printed a result line;
examples/ holds the script `python -m tools.examples` makes from the tagged cells, unchanged. Static: reads JSON.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tools import examples, pattern_check

NOTEBOOKS = examples.all_notebooks()
IDS = [path.name[:2] for path in NOTEBOOKS]


def _tagged(path: Path) -> dict[str, list[examples.Cell]]:
    return examples.tagged_cells(json.loads(path.read_text(encoding="utf-8")), path)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_pattern_is_tagged(path: Path) -> None:
    scripts = _tagged(path)
    assert f"{path.stem}.py" in scripts, (
        f"{path.name}: no code cell carries the tag `pattern`; tag the pattern's cells (docs/authoring.md)"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_pattern_cells_call_only_loaders(path: Path) -> None:
    report = pattern_check.check_notebook(path)
    assert _tagged(path), f"{path.name}: no pattern cells to check"
    assert not report.pattern, f"{path.name}:\n" + "\n".join(report.pattern)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_no_shown_cell_needs_a_tucked_one(path: Path) -> None:
    report = pattern_check.check_notebook(path)
    assert not report.needs_tucked, f"{path.name}:\n" + "\n".join(report.needs_tucked)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_at_most_one_instrument_cell(path: Path) -> None:
    report = pattern_check.check_notebook(path)
    assert len(report.helper_cells) <= 1, (
        f"{path.name}: {len(report.helper_cells)} shown cells call course instruments, at most 1 may:\n"
        + "\n".join(report.helper_cells)
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=IDS)
def test_the_script_is_generated_from_the_notebook(path: Path) -> None:
    nb = json.loads(path.read_text(encoding="utf-8"))
    scripts = examples.tagged_cells(nb, path)
    assert scripts, f"{path.name}: no pattern cells, so no script"
    for name, cells in scripts.items():
        expected = examples.script_source(path, nb, name, cells)
        script = examples.EXAMPLES / name
        assert script.is_file(), f"examples/{name} is missing: run `python -m tools.examples`"
        assert script.read_text(encoding="utf-8") == expected, (
            f"examples/{name} differs from {path.name}'s tagged cells: run `python -m tools.examples`"
        )


def test_no_script_without_its_notebook() -> None:
    made = set()
    for path in NOTEBOOKS:
        made |= set(_tagged(path))
    orphans = sorted(p.name for p in examples.EXAMPLES.glob("*.py") if p.name not in made)
    assert not orphans, f"no notebook makes {orphans}: run `python -m tools.examples`"
