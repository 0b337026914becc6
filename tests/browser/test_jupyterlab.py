"""JupyterLab from .venv, on a temporary copy of the repository: the first lesson, Run All Cells from the menu.

What a learner sees after ``make lab`` and Run All: no pop-up about Jupyter's news feed (the course's own
settings, ``jupyter/``, answer it), the set-up cell collapsed to its first line, then, after Run All, the set-up
cell's profile line, a rendered plot and an exercise verdict whose mark renders as a glyph (not the missing-glyph
box). JupyterLab is started with the command and environment ``make lab`` uses (``tools/lab.py``). The lesson is
the registry's first (``lessons.toml``). JupyterLab 4 keeps off-screen cells out of layout, so the page is read
with ``textContent`` (``innerText`` is empty there); the test waits for the notebook's kernel to exist on the
server rather than for the idle indicator, and opens the notebook with ``?reset`` so that no earlier workspace is
restored.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from course_facts.registry import lessons
from exercises.checks.core import _MARKS as VERDICT_MARKS
from tools import lab as course_lab
from tools.notebook_format import SETUP_MARKER

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = lessons()[0].file  # as JupyterLab names it: make lab serves notebooks/
NOT_COPIED = {".git", ".venv", ".venv-latest", "_build", "runs", "participant_copies", ".pytest_cache"}
PROFILE_LINE = "profile: "  # printed by helpers.setup_notebook in the set-up cell


def _ignore(folder: str, names: list[str]) -> set[str]:
    here = Path(folder).resolve()
    skipped = {name for name in names if here == ROOT and name in NOT_COPIED}
    if here == ROOT / "data":
        skipped.add("cache")
    return skipped | {name for name in names if name in ("__pycache__", ".ipynb_checkpoints")}


def _get(url: str, token: str) -> Any:
    request = urllib.request.Request(url, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=5) as reply:
        return json.loads(reply.read())


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory, port: Any) -> Iterator[tuple[str, str]]:
    """``(base_url, token)`` of a JupyterLab serving a copy of the repository; stopped afterwards."""
    base = tmp_path_factory.mktemp("lab")
    copy = base / "repo"
    shutil.copytree(ROOT, copy, ignore=_ignore)
    token, number = secrets.token_hex(16), port()
    env = {key: value for key, value in os.environ.items() if key != "JUPYTER_CONFIG_PATH"}
    # A learner's own settings stay out of it: empty user folders; the course's settings come from make lab's
    # environment (the copy's jupyter/ folder first on JUPYTER_CONFIG_PATH).
    for name in ("JUPYTER_CONFIG_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR", "JUPYTERLAB_WORKSPACES_DIR"):
        env[name] = str(base / name.lower())
    env = course_lab.environment(env, copy / course_lab.SETTINGS.name)
    test_options = [
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={number}",
        "--port-retries=0",
        f"--IdentityProvider.token={token}",
        "--LabApp.news_url=None",  # nothing from the internet, whatever the settings say
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    jupyter = str(Path(sys.executable).parent / "jupyter")
    command = course_lab.command(jupyter, course_lab.is_root(), test_options)
    log = (base / "jupyterlab.log").open("w")
    process = subprocess.Popen(command, cwd=copy, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{number}"
    try:
        for _ in range(600):
            if process.poll() is not None:
                pytest.fail(f"jupyter lab exited with {process.returncode}: {(base / 'jupyterlab.log').read_text()}")
            try:
                _get(f"{url}/api/status", token)
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("jupyter lab did not answer within 60 s: " + (base / "jupyterlab.log").read_text()[-2000:])
        yield url, token
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _wait_for_kernel(url: str, token: str, timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for session in _get(f"{url}/api/sessions", token):
            if session.get("path", "").endswith(NOTEBOOK) and session.get("kernel", {}).get("id"):
                return str(session["kernel"]["id"])
        time.sleep(0.5)
    pytest.fail(f"no kernel was started for {NOTEBOOK} within {timeout:.0f} s.")


def test_run_all_cells_of_the_first_lesson_shows_profile_plot_and_verdict(
    browser: Any, lab: tuple[str, str], screenshots: Path, draw_glyph: Any
) -> None:
    url, token = lab
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/lab/tree/{NOTEBOOK}?reset&token={token}", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
    _wait_for_kernel(url, token)
    page.wait_for_timeout(3000)  # the news question, when asked, shows as a toast once the page has settled
    news = page.get_by_text("official Jupyter news").count()
    setup = page.locator(".jp-NotebookPanel .jp-CodeCell").first
    placeholder = setup.locator(".jp-InputPlaceholder .jp-PlaceholderText")
    collapsed = placeholder.count() == 1 and placeholder.first.is_visible()
    shown_line = placeholder.first.text_content() if collapsed else ""
    editor_shown = setup.locator(".jp-InputArea .cm-editor").first.is_visible()
    setup.screenshot(path=str(screenshots / "jupyterlab_00_setup_cell.png"))
    assert news == 0, "JupyterLab asks about its news feed: the course's settings (jupyter/) were not read"
    assert collapsed and not editor_shown, "the set-up cell's code is shown: its jupyter.source_hidden is not set"
    assert (shown_line or "").strip().startswith(SETUP_MARKER.rstrip(".")), shown_line
    started = time.monotonic()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator("li.lm-Menu-item", has_text="Run All Cells").filter(has_not_text="Restart").first.click()
    marks = list(VERDICT_MARKS.values())
    page.wait_for_function(
        """([profile, marks]) => {
            const text = document.querySelector('.jp-NotebookPanel .jp-Notebook')?.textContent || '';
            const image = document.querySelector('.jp-NotebookPanel .jp-OutputArea-output img');
            return text.includes(profile) && marks.some(mark => text.includes(mark)) && image !== null;
        }""",
        arg=[PROFILE_LINE, marks],
        timeout=300_000,
        polling=1000,
    )
    seconds = time.monotonic() - started
    text = page.evaluate("() => document.querySelector('.jp-NotebookPanel .jp-Notebook').textContent")
    profile = next(line for line in text.splitlines() if PROFILE_LINE in line)
    verdicts = [mark for mark in marks if mark in text]
    image = page.locator(".jp-NotebookPanel .jp-OutputArea-output img").first
    width = image.evaluate(
        """async image => {
            image.scrollIntoView({block: "center"});
            await image.decode().catch(() => null);
            return image.naturalWidth;
        }"""
    )
    plot_cell = page.locator(".jp-NotebookPanel .jp-Cell", has=page.locator(".jp-OutputArea-output img")).first
    plot_cell.screenshot(path=str(screenshots / "jupyterlab_00_plot.png"))  # the code cell and its plot
    verdict = page.locator(".jp-NotebookPanel .jp-OutputArea-output", has_text=verdicts[0]).first
    verdict.evaluate("element => element.scrollIntoView({block: 'center'})")
    page.wait_for_timeout(500)
    page.screenshot(path=str(screenshots / "jupyterlab_00_verdict.png"))
    glyph = draw_glyph(verdict.locator("pre").first, verdicts[0][0])
    page.close()
    print(
        f"\nRun All: outputs after {seconds:.0f} s; {profile.strip()[:100]}; verdicts {verdicts}; "
        f"plot {width} px wide; {verdicts[0][0]} in {glyph['font']}: {glyph['ink']} pixels of ink, "
        f"differs by {glyph['differs']}"
    )
    assert width > 0, "the plot's image did not decode"
    assert glyph["ink"] > 0 and min(glyph["differs"]) > 0, f"the verdict mark draws as a missing glyph: {glyph}"
    assert not errors, errors


def test_a_tucked_proof_is_collapsed_and_a_claim_box_is_closed_until_clicked(
    browser: Any, lab: tuple[str, str], screenshots: Path, tucked_lesson: str
) -> None:
    url, token = lab
    cells = json.loads((ROOT / "notebooks" / tucked_lesson).read_text(encoding="utf-8"))["cells"]
    proof = next(
        index
        for index, cell in enumerate(cells)
        if cell["cell_type"] == "code"
        and cell.get("metadata", {}).get("jupyter", {}).get("source_hidden")
        and not "".join(cell["source"]).lstrip().startswith(SETUP_MARKER.rstrip("."))
    )
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    page.goto(f"{url}/lab/tree/{tucked_lesson}?reset&token={token}", wait_until="domcontentloaded")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=120_000)
    cell = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").nth(proof)
    cell.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    collapsed = cell.locator(".jp-InputPlaceholder").count() == 1
    editor_shown = cell.locator(".jp-InputArea .cm-editor").first.is_visible()
    box = page.locator(".jp-NotebookPanel details", has=page.locator("summary", has_text="Claim check")).first
    box.scroll_into_view_if_needed()
    closed_before = box.evaluate("box => !box.open")
    box.locator("summary").first.click()
    opened = box.evaluate("box => box.open")
    box.screenshot(path=str(screenshots / "jupyterlab_claim_box_open.png"))
    page.close()
    print(f"\n{tucked_lesson}: cell {proof} collapsed {collapsed}; claim box closed before a click: {closed_before}")
    assert collapsed and not editor_shown, f"cell {proof} of {tucked_lesson} is tucked but JupyterLab shows its code"
    assert closed_before, "the claim box is open before it is clicked"
    assert opened, "the claim box does not open when its summary is clicked"
