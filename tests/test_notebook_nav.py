"""Every notebook opens and closes with the same link line (previous · syllabus · next), in syllabus order."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
from course_facts.registry import lessons  # noqa: E402
from tools import notebook_format  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def syllabus_order() -> list[str]:
    """The notebook names in the order the README's syllabus table lists them."""
    text = (ROOT / "README.md").read_text()
    table = text.split("<!-- syllabus:start -->", 1)[1].split("<!-- syllabus:end -->", 1)[0]
    return re.findall(r"^\| \[[0-9][0-9]\]\(notebooks/([0-9][0-9]_\w+\.ipynb)\)", table, re.MULTILINE)


def test_syllabus_lists_every_lesson_of_the_registry_in_order() -> None:
    assert syllabus_order() == [lesson.file for lesson in lessons()] == [path.name for path in NOTEBOOKS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_link_lines_match_the_syllabus(path: Path) -> None:
    order = syllabus_order()
    i = order.index(path.name)
    nb = nbformat.read(path, as_version=4)
    opening = notebook_format.NAV_RE.search(nb.cells[0].source)
    assert opening, f"{path.name}: no link line in the title cell; run make execute"
    closing = nb.cells[-1]
    assert closing.cell_type == "markdown" and closing.source.strip() == opening.group(0), (
        f"{path.name}: the last cell must repeat the title cell's link line"
    )
    targets = re.findall(r"\]\(([^)]+)\)", opening.group(0))
    expected = ([order[i - 1]] if i else []) + ["../README.md#syllabus"] + order[i + 1 : i + 2]
    assert targets == expected
    for target in targets:
        assert (path.parent / target.split("#")[0]).is_file(), f"{path.name}: broken link {target}"


def test_nav_line_refuses_a_stranger() -> None:
    with pytest.raises(ValueError, match="not a lesson of lessons.toml"):
        notebook_format.nav_line("scratch.ipynb")
