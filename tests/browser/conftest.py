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
