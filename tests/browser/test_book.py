"""The built book (``make book``), served over HTTP on 127.0.0.1 and read in chromium.

Every page loads without console errors and fetches nothing from outside the book, every image decodes,
every internal link (fragment included) resolves, and the search finds ``compute_loss`` in the lessons that
override it. The pages fit: at 1280 px no code block, table or cell output of the landing page, the cheat sheet
or a lesson scrolls sideways; at 390 px no page is wider than the screen and a table too wide for it scrolls in
its own box. At 390 px every code block, table or DataFrame wider than its box shows that it scrolls (a shadow
at the edge where more waits, drawn by the box's background, which goes when that edge is reached), and the
page's contents keep every identifier of a heading whole, as at 1280 px. A verdict mark renders as a glyph (not
the missing-glyph box), the set-up cell shows one line that says what it does instead of its code, and dark
mode shows no empty output box. Which pages are lessons comes
from the registry (``lessons.toml``); no lesson's file is named here.
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

import nbformat
import pytest

from course_facts.registry import lessons
from exercises.checks.core import _MARKS as VERDICT_MARKS

SEARCH_TERM = "compute_loss"
LANDING, CHEATSHEET = "README.html", "docs/cheatsheet.html"
LESSON_PAGES = tuple(f"notebooks/{entry.stem}.html" for entry in lessons())
SCREENSHOT_PAGES = (LANDING, CHEATSHEET, *LESSON_PAGES)
SETUP_PROMPT_START = "Set-up cell:"  # docs/book/conf.py SETUP_PROMPT


def lessons_defining(name: str) -> list[str]:
    """The lesson pages whose code defines ``name`` (``def name(``): what the search must find."""
    found = []
    for entry in lessons():
        cells = nbformat.read(entry.path, as_version=4).cells
        if any(cell.cell_type == "code" and f"def {name}(" in cell.source for cell in cells):
            found.append(f"notebooks/{entry.stem}.html")
    return found


# Elements that must not scroll sideways at 1280 px: visible code blocks, tables, table boxes and cell outputs,
# the page's table of contents, and the page itself.
OVERFLOW_JS = """() => {
    const selector = "article pre, article table, article .pst-scrollable-table-container, article .cell_output, "
        + "article div.output.text_html, .bd-sidebar-secondary, html";
    const shown = element => element.checkVisibility() && !element.closest("details:not([open])");
    return [...document.querySelectorAll(selector)].filter(shown)
        .filter(element => element.scrollWidth > (element === document.documentElement
            ? window.innerWidth : element.clientWidth) + 1)
        .map(element => [element.tagName.toLowerCase() + "." + element.className.split(" ")[0],
            element.scrollWidth, element.clientWidth, (element.textContent || "").trim().slice(0, 50)]);
}"""

# At 390 px: the page is no wider than the screen, and every table wider than its column sits in a box that
# scrolls (overflow-x auto or scroll) and shows that it does (its scroll bar is not hidden).
NARROW_JS = """() => {
    const scrolls = element => ["auto", "scroll"].includes(getComputedStyle(element).overflowX)
        && getComputedStyle(element).scrollbarWidth !== "none";
    const stuck = [...document.querySelectorAll("article table")].filter(table => {
        const box = table.closest(".pst-scrollable-table-container, div.output.text_html");
        return table.getBoundingClientRect().width > table.parentElement.clientWidth + 1 && !(box && scrolls(box));
    }).map(table => (table.textContent || "").trim().slice(0, 50));
    return {page: document.documentElement.scrollWidth, screen: window.innerWidth, stuck};
}"""


# At 390 px: every box whose content is wider than it (a code block, a table's box, a DataFrame output) scrolls
# and carries the scroll cue: a background with shadows fixed at its edges (attachment scroll) under covers that
# move with the content (attachment local). Lists the boxes that do not, and counts those that do.
SCROLL_CUE_JS = r"""() => {
    const boxes = "article div.highlight pre, article .pst-scrollable-table-container, article div.output.text_html";
    const shown = element => element.checkVisibility() && !element.closest("details:not([open])");
    const wide = [...document.querySelectorAll(boxes)].filter(shown)
        .filter(element => element.scrollWidth > element.clientWidth + 1);
    const cued = element => {
        const style = getComputedStyle(element);
        const attachment = style.backgroundAttachment;
        return ["auto", "scroll"].includes(style.overflowX)
            && (style.backgroundImage.match(/gradient\(/g) || []).length >= 4
            && attachment.includes("local") && attachment.includes("scroll");
    };
    return {wide: wide.length, uncued: wide.filter(element => !cued(element))
        .map(element => [element.tagName.toLowerCase() + "." + element.className.split(" ")[0],
            element.scrollWidth, element.clientWidth, (element.textContent || "").trim().slice(0, 40)])};
}"""

# The identifiers (inline code, one span.pre per word) in the page's table of contents that a line break cuts in
# two: drawn as more than one box.
BROKEN_IDENTIFIERS_JS = """() => {
    const toc = document.querySelector(".bd-sidebar-secondary");
    if (!toc) return {count: 0, broken: []};
    const words = [...toc.querySelectorAll("nav a code span.pre, nav a code:not(:has(span.pre))")];
    return {count: words.length,
            broken: words.filter(word => word.getClientRects().length > 1).map(word => word.textContent)};
}"""


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
            "overflow": page.evaluate(OVERFLOW_JS) if name in SCREENSHOT_PAGES else [],
            "toc": page.evaluate(BROKEN_IDENTIFIERS_JS),
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


def test_search_finds_compute_loss_in_the_lessons_that_override_it(
    browser: Any, server: str, screenshots: Path
) -> None:
    must_find = lessons_defining(SEARCH_TERM)
    assert must_find, f"no lesson defines {SEARCH_TERM}: the search test has nothing to look for"
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(urljoin(server, f"search.html?q={SEARCH_TERM}"), wait_until="load")
    page.wait_for_function(
        "() => (document.querySelector('.search-summary')?.textContent || '').includes('Search finished')",
        timeout=30_000,
    )
    found = page.evaluate("() => [...document.querySelectorAll('#search-results ul.search a')].map(a => a.href)")
    page.screenshot(path=str(screenshots / "book_search_compute_loss.png"))
    page.close()
    for lesson in must_find:
        assert any(urldefrag(link)[0].endswith(lesson) for link in found), (lesson, found)
    print(f"\nsearch {SEARCH_TERM!r}: {len(found)} pages, first {found[0].rsplit('/', 1)[-1]}; must find {must_find}")


def test_no_code_block_or_table_scrolls_sideways_at_1280_px(visited: dict[str, dict[str, Any]]) -> None:
    """The landing page, the cheat sheet and every lesson: the column holds 88-character code lines, the tables
    fit, and printed text wraps as in JupyterLab."""
    assert set(SCREENSHOT_PAGES) <= set(visited), sorted(set(SCREENSHOT_PAGES) - set(visited))
    overflowing = {name: visited[name]["overflow"] for name in SCREENSHOT_PAGES if visited[name]["overflow"]}
    for name, elements in overflowing.items():
        print(f"\n{name}: {len(elements)} element(s) wider than their box, e.g. {elements[:3]}")
    assert not overflowing, {name: len(elements) for name, elements in overflowing.items()}


@pytest.mark.parametrize("width", [390])
def test_narrow_screens_keep_the_page_and_scroll_wide_tables_in_their_box(
    browser: Any, server: str, screenshots: Path, width: int
) -> None:
    context = browser.new_context(viewport={"width": width, "height": 844}, device_scale_factor=2)
    problems = {}
    for name in SCREENSHOT_PAGES:
        page = context.new_page()
        page.goto(urljoin(server, name), wait_until="load")
        measured = page.evaluate(NARROW_JS)
        if measured["page"] > measured["screen"] or measured["stuck"]:
            problems[name] = measured
        if name in (LANDING, CHEATSHEET):
            page.screenshot(path=str(screenshots / f"book_{Path(name).stem}_{width}px.png"))
        page.close()
    context.close()
    assert not problems, problems


def _edge_shadow(page: Any, box: Any) -> tuple[float, float]:
    """The right edge of a scrolling box in its top padding (where no text is drawn), as the mean of its RGB values
    (0 to 255): before and after scrolling the box to the end. The shadow makes the first darker (light mode) or
    lighter (dark mode) than the second."""
    import io

    from PIL import Image

    def edge() -> float:
        picture = Image.open(io.BytesIO(box.screenshot())).convert("RGB")
        width, height = picture.size
        strip = picture.crop((width - 24, 4, width - 8, min(24, height)))
        pixels = list(strip.getdata())
        return sum(sum(pixel) for pixel in pixels) / (3 * len(pixels))

    box.evaluate("element => { element.scrollIntoView({block: 'center'}); element.scrollLeft = 0; }")
    page.wait_for_timeout(100)
    before = edge()
    box.evaluate("element => { element.scrollLeft = element.scrollWidth; }")
    page.wait_for_timeout(100)
    return before, edge()


@pytest.mark.parametrize("width", [390])
def test_at_390_px_every_wide_block_shows_that_it_scrolls_and_identifiers_stay_whole(
    browser: Any, server: str, screenshots: Path, width: int, visited: dict[str, dict[str, Any]]
) -> None:
    """On a phone, a code block or table wider than the screen scrolls in its box with a cue that it does: the
    style on every such box, and the shadow itself measured on the first wide code block of each page (darker
    at the right edge than inside, and no longer once scrolled to the end). In the page's contents (the drawer
    behind "Toggle secondary sidebar" at 390 px, the right-hand column at 1280 px) no identifier is broken."""
    context = browser.new_context(viewport={"width": width, "height": 844}, device_scale_factor=2)
    uncued, no_shadow, broken, wide, identifiers = {}, {}, {}, 0, 0
    for name in SCREENSHOT_PAGES:
        page = context.new_page()
        page.goto(urljoin(server, name), wait_until="load")
        cues = page.evaluate(SCROLL_CUE_JS)
        wide += cues["wide"]
        if cues["uncued"]:
            uncued[name] = cues["uncued"]
        code = page.locator("article div.highlight pre")
        first = page.evaluate(
            """() => [...document.querySelectorAll("article div.highlight pre")]
                .findIndex(e => e.checkVisibility() && e.scrollWidth > e.clientWidth + 1)"""
        )
        boxes = [code.nth(first)] if first >= 0 else []
        if boxes:
            before, after = _edge_shadow(page, boxes[0])
            if not after - before > 15:  # light mode: the shadow darkens the edge until the end is reached
                no_shadow[name] = (round(before, 1), round(after, 1))
            if name == CHEATSHEET:
                boxes[0].evaluate("element => { element.scrollLeft = 0; }")
                boxes[0].screenshot(path=str(screenshots / f"book_scroll_cue_{width}px.png"))
        toggle = page.locator("button[aria-label='Toggle secondary sidebar']")
        if toggle.count() and toggle.first.is_visible():
            toggle.first.click()
            page.wait_for_timeout(400)
            toc = page.evaluate(BROKEN_IDENTIFIERS_JS)
            identifiers += toc["count"]
            if toc["broken"]:
                broken[name] = toc["broken"]
        page.close()
    context.close()
    wide_1280 = {name: result["toc"]["broken"] for name, result in visited.items() if result["toc"]["broken"]}
    counted = sum(result["toc"]["count"] for result in visited.values())
    print(f"\n{width} px: {wide} wide boxes, {identifiers} identifiers in the contents; 1280 px: {counted} identifiers")
    assert wide and identifiers and counted, "nothing to check: no wide box or no identifier in the contents"
    assert not uncued, uncued
    assert not no_shadow, f"the right-edge shadow (before, after scrolling to the end): {no_shadow}"
    assert not broken, f"identifiers broken in the contents at {width} px: {broken}"
    assert not wide_1280, f"identifiers broken in the contents at 1280 px: {wide_1280}"


def _verdict_page(book_dir: Path) -> tuple[str, str]:
    """A lesson page that shows a verdict, and the mark it shows (by content, not by name)."""
    for name in LESSON_PAGES:
        text = (book_dir / name).read_text(encoding="utf-8")
        for mark in VERDICT_MARKS.values():
            if mark in text:
                return name, mark
    pytest.fail("no lesson page shows a verdict mark (✔ ✘ ✎ ⚠): the committed outputs have no exercise check.")


def test_a_verdict_mark_renders_as_a_glyph(
    browser: Any, server: str, book_dir: Path, screenshots: Path, draw_glyph: Any
) -> None:
    """Drawn in the output's own font, the mark leaves ink, and differs from code points no font has; without a
    font that has it, chromium draws the same empty box (or nothing) for all three."""
    name, mark = _verdict_page(book_dir)
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(urljoin(server, name), wait_until="load")
    output = page.locator("div.cell_output pre", has_text=mark).first
    output.scroll_into_view_if_needed()
    output.screenshot(path=str(screenshots / "book_verdict.png"))
    drawn = draw_glyph(output, mark[0])
    page.close()
    print(f"\n{name}: {mark[0]} in {drawn['font']}: {drawn['ink']} pixels of ink, differs by {drawn['differs']}")
    assert drawn["ink"] > 0 and min(drawn["differs"]) > 0, drawn


def test_the_set_up_cell_says_what_it_does_and_hides_its_code(browser: Any, server: str) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    problems = {}
    for name in LESSON_PAGES:
        page.goto(urljoin(server, name), wait_until="load")
        shown = page.evaluate(
            """() => {
                const cell = document.querySelector("div.cell.tag_hide-input");
                if (!cell) return null;
                const title = [...cell.querySelectorAll("summary p")].find(p => p.getClientRects().length > 0);
                const code = cell.querySelector("div.cell_input pre");
                const shown = code && code.checkVisibility() && !code.closest("details:not([open])");
                return {title: title ? title.textContent.trim() : "",
                        code_lines_shown: shown ? code.textContent.split("\\n").length : 0};
            }"""
        )
        if not shown or not shown["title"].startswith(SETUP_PROMPT_START) or shown["code_lines_shown"]:
            problems[name] = shown
    page.close()
    assert not problems, problems


def test_dark_mode_shows_no_empty_output_box(browser: Any, server: str, screenshots: Path) -> None:
    """An HTML output left empty (a cleared progress bar) is not drawn; in dark mode the theme gives HTML
    outputs a light box, which showed as a grey strip under each progress table."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme="dark")
    page = context.new_page()
    found = {}
    for name in LESSON_PAGES:
        page.goto(urljoin(server, name), wait_until="load")
        assert page.evaluate("() => document.documentElement.dataset.theme") == "dark"
        empty = page.evaluate(
            """() => [...document.querySelectorAll("div.cell_output > div.output")]
                .filter(box => !box.textContent.trim() && !box.querySelector("img, svg, table, progress, canvas"))
                .filter(box => box.getBoundingClientRect().height > 0).length"""
        )
        if empty:
            found[name] = empty
    context.close()
    assert not found, found


def test_a_tucked_proof_is_hidden_and_a_claim_box_is_closed_until_clicked(
    browser: Any, server: str, screenshots: Path, tucked_lesson: str
) -> None:
    name = f"notebooks/{Path(tucked_lesson).stem}.html"
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto(urljoin(server, name), wait_until="load")
    tucked = page.evaluate(
        """() => [...document.querySelectorAll("div.cell.tag_hide-input")].slice(1).map(cell => {
            const code = cell.querySelector("div.cell_input pre");
            return code && code.checkVisibility() && !code.closest("details:not([open])");
        })"""
    )
    box = page.locator("details", has=page.locator("summary", has_text="Claim check")).first
    closed_before = box.evaluate("box => !box.open")
    body_shown_before = box.evaluate(
        "box => [...box.children].filter(e => e.tagName !== 'SUMMARY').some(e => e.checkVisibility())"
    )
    box.locator("summary").first.click()
    opened = box.evaluate("box => box.open")
    box.screenshot(path=str(screenshots / "book_claim_box_open.png"))
    page.close()
    print(f"\n{name}: {len(tucked)} tucked proof cells, code shown in {sum(tucked)}; claim box closed: {closed_before}")
    assert tucked and not any(tucked), "a tucked proof cell's code is shown in the book"
    assert closed_before and not body_shown_before, "the claim box is open before it is clicked"
    assert opened, "the claim box does not open when its summary is clicked"
