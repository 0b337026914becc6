"""Browser tests (``make test-browser``): the book and JupyterLab in Debian's chromium, driven by playwright.

They are not part of ``make test``: collected only when ``COURSE_BROWSER_TESTS=1`` (the Makefile sets it),
because they need the book's packages (requirements-book.txt), a built book and ``apt-get install chromium``.
Chromium is launched from its Debian path with ``executable_path``; ``playwright install`` is never needed.
Screenshots go to ``_build/screenshots/`` (gitignored).
"""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "_build" / "book"
SCREENSHOTS = ROOT / "_build" / "screenshots"

if os.environ.get("COURSE_BROWSER_TESTS") != "1":
    collect_ignore_glob = ["test_*.py"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def chromium_path() -> str:
    """Debian's chromium, or a clear failure that says how to install it."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("chromium is not installed: `apt-get update && apt-get install -y chromium` (Debian).")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path(), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def book_dir() -> Path:
    """The built book; ``make test-browser`` runs ``make book`` first."""
    if not (BOOK / "index.html").is_file():
        pytest.fail(f"{BOOK} has no index.html: run `make book` first (make test-browser does).")
    return BOOK


@pytest.fixture(scope="session")
def port() -> Any:
    """``port()`` returns a free TCP port on 127.0.0.1."""
    return free_port


@pytest.fixture(scope="session")
def screenshots() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


MISSING_GLYPHS = ("\ue000", "\U0010ffff")  # a private-use and a non-character code point: no font draws them
# Draws a character in an element's own font on a canvas; the ink (pixels drawn) and the pixels that differ from
# each missing code point. A missing glyph draws the font's empty box or nothing: the same as the others.
GLYPH_JS = """(element, [mark, missing]) => {
    const style = getComputedStyle(element);
    const font = `${style.fontSize} ${style.fontFamily}`;
    const draw = text => {
        const canvas = document.createElement("canvas");
        canvas.width = 96; canvas.height = 64;
        const context = canvas.getContext("2d");
        context.font = font; context.fillStyle = "#000"; context.textBaseline = "top";
        context.fillText(text, 16, 16);
        return context.getImageData(0, 0, 96, 64).data;
    };
    const ink = data => data.filter((value, index) => index % 4 === 3 && value > 0).length;
    const differ = (a, b) => a.filter((value, index) => index % 4 === 3 && (value > 0) !== (b[index] > 0)).length;
    const drawn = draw(mark);
    return {font, ink: ink(drawn), differs: missing.map(code => differ(drawn, draw(code)))};
}"""


@pytest.fixture(scope="session")
def draw_glyph() -> Any:
    """``draw_glyph(locator, character)``: the character drawn on a canvas in the located element's font, as
    ``{"font", "ink", "differs"}``: pixels of ink, and pixels that differ from each of :data:`MISSING_GLYPHS`.
    A glyph that renders has ink and differs from both; a missing one draws what they draw (a box, or nothing)."""

    def draw(locator: Any, character: str) -> dict[str, Any]:
        return dict(locator.evaluate(GLYPH_JS, [character, list(MISSING_GLYPHS)]))

    return draw


@pytest.fixture(scope="session")
def tucked_lesson() -> str:
    """The file of the registry's first lesson that has both a tucked proof (a code cell other than the set-up
    cell, tagged ``hide-input`` and collapsed in JupyterLab) and a collapsed claim box (a ``<details>`` whose
    summary names a claim check); the browser tests look at how the book and JupyterLab show them."""
    import json

    from course_facts.registry import lessons

    for entry in lessons():
        cells = json.loads((ROOT / "notebooks" / entry.file).read_text(encoding="utf-8"))["cells"]
        tucked = any(
            cell["cell_type"] == "code"
            and "hide-input" in cell.get("metadata", {}).get("tags", [])
            and cell.get("metadata", {}).get("jupyter", {}).get("source_hidden")
            and not "".join(cell["source"]).lstrip().startswith("# Set-up")
            for cell in cells
        )
        boxed = any(
            cell["cell_type"] == "markdown"
            and "<details>" in "".join(cell["source"])
            and "Claim check" in "".join(cell["source"])
            for cell in cells
        )
        if tucked and boxed:
            return entry.file
    pytest.fail("no lesson has both a tucked proof cell and a collapsed claim box (docs/authoring.md)")
