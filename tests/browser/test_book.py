"""The built book (``make book``), served over HTTP on 127.0.0.1 and read in chromium.

Every page loads without console errors and fetches nothing from outside the book, every image decodes,
every internal link (fragment included) resolves, and the search finds ``compute_loss`` in lessons 07 and 08.
"""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag, urljoin

import pytest

# the lessons the search must find, by the start of their file name
SEARCH_TERM, SEARCH_MUST_FIND = "compute_loss", ("07_", "08_")
SCREENSHOT_PAGES = ("README.html", "notebooks/05_callback_events.html", "docs/cheatsheet.html")


def book_pages(book: Path) -> list[str]:
    """Every HTML page of the built book, relative to its folder."""
    skip = ("_static/", "_sources/", "_images/")
    return sorted(
        str(path.relative_to(book)) for path in book.rglob("*.html") if not str(path.relative_to(book)).startswith(skip)
    )


@pytest.fixture(scope="module")
def server(book_dir: Path, port: Any) -> Iterator[str]:
    number = port()
    process = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(number), "--bind", "127.0.0.1", "--directory", str(book_dir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    origin = f"http://127.0.0.1:{number}/"
    try:
        for _ in range(100):
            try:
                urllib.request.urlopen(origin, timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("python -m http.server did not answer on 127.0.0.1 within 10 s.")
        yield origin
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def visited(browser: Any, server: str, book_dir: Path, screenshots: Path) -> dict[str, dict[str, Any]]:
    """Open every page once; what each showed: console errors, outside requests, broken images, links."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    outside: list[str] = []

    def route(request_route: Any) -> None:
        url = request_route.request.url
        if url.startswith(server) or url.startswith(("data:", "blob:", "about:")):
            request_route.continue_()
        else:
            outside.append(url)
            request_route.abort()

    context.route("**/*", route)
    results = {}
    for name in book_pages(book_dir):
        page = context.new_page()
        errors: list[str] = []
        page.on(
            "console", lambda message, errors=errors: errors.append(message.text) if message.type == "error" else None
        )
        page.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
        before = len(outside)
        response = page.goto(urljoin(server, name), wait_until="load")
        page.wait_for_load_state("networkidle")
        images = page.evaluate(
            """async () => {
                const images = [...document.images];
                images.forEach(image => { image.loading = "eager"; });
                await Promise.all(images.map(image => image.decode().catch(() => null)));
                return images.map(image => [image.getAttribute("src"), image.naturalWidth]);
            }"""
        )
        links = page.evaluate("() => [...document.querySelectorAll('a[href]')].map(a => a.href)")
        results[name] = {
            "status": response.status if response else None,
            "errors": errors,
            "outside": outside[before:],
            "images": images,
            "links": [link for link in links if link.startswith(server)],
        }
        if name in SCREENSHOT_PAGES:
            figure = page.locator(".cell_output img, img[src*='loop_map']").first
            if name != "README.html" and figure.count():
                figure.scroll_into_view_if_needed()  # the page's first plot
            page.screenshot(path=str(screenshots / f"book_{Path(name).stem}.png"))
        page.close()
    context.close()
    return results


def test_the_book_has_the_landing_page_the_lessons_and_the_cheat_sheet(
    visited: dict[str, dict[str, Any]], book_dir: Path
) -> None:
    pages = set(visited)
    lessons = sorted(page for page in pages if page.startswith("notebooks/"))
    assert {"index.html", "README.html", "search.html", "docs/cheatsheet.html"} <= pages
    assert len(lessons) == len(list((book_dir.parent.parent / "notebooks").glob("[0-9][0-9]_*.ipynb"))) >= 13
    print(f"\n{len(pages)} pages, {len(lessons)} lessons")


def test_every_page_loads_without_console_errors_or_outside_requests(visited: dict[str, dict[str, Any]]) -> None:
    problems = {
        name: {key: result[key] for key in ("status", "errors", "outside")}
        for name, result in visited.items()
        if result["status"] != 200 or result["errors"] or result["outside"]
    }
    assert not problems, problems


def test_every_image_decodes(visited: dict[str, dict[str, Any]]) -> None:
    broken = {name: [src for src, width in result["images"] if not width] for name, result in visited.items()}
    broken = {name: sources for name, sources in broken.items() if sources}
    assert not broken, broken
    count = sum(len(result["images"]) for result in visited.values())
    badges = [src for result in visited.values() for src, _ in result["images"] if "colab-badge" in src]
    assert badges and all(not src.startswith("http") for src in badges), badges[:3]
    print(f"\n{count} images decoded, {len(badges)} of them the local Colab badge")


def test_every_internal_link_resolves(visited: dict[str, dict[str, Any]]) -> None:
    links = sorted({link for result in visited.values() for link in result["links"]})
    pages: dict[str, str | None] = {}
    broken = []
    for link in links:
        address, fragment = urldefrag(link)
        if address not in pages:
            try:
                with urllib.request.urlopen(address, timeout=10) as reply:
                    body = reply.read()
                    pages[address] = body.decode("utf-8", "replace") if address.endswith((".html", "/")) else ""
            except urllib.error.URLError as error:
                pages[address] = None
                broken.append(f"{link}: {error}")
                continue
        text = pages[address]
        if fragment and text is not None and f'id="{fragment}"' not in text:
            broken.append(f"{link}: no element with id {fragment!r}")
    assert not broken, broken
    print(f"\n{len(links)} distinct internal links ({len(pages)} targets) resolve")


def test_search_finds_compute_loss_in_lessons_07_and_08(browser: Any, server: str, screenshots: Path) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(urljoin(server, f"search.html?q={SEARCH_TERM}"), wait_until="load")
    page.wait_for_function(
        "() => (document.querySelector('.search-summary')?.textContent || '').includes('Search finished')",
        timeout=30_000,
    )
    found = page.evaluate("() => [...document.querySelectorAll('#search-results ul.search a')].map(a => a.href)")
    page.screenshot(path=str(screenshots / "book_search_compute_loss.png"))
    page.close()
    for lesson in SEARCH_MUST_FIND:
        assert any(f"/notebooks/{lesson}" in link for link in found), (lesson, found)
    print(f"\nsearch {SEARCH_TERM!r}: {len(found)} pages, first {found[0].rsplit('/', 1)[-1]}")
