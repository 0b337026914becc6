"""Trackio's dashboard on the runs of the lesson that tracks with trackio, in Debian's chromium.

What a learner sees after running that lesson and ``trackio show`` on its folder: the dashboard, served from this
machine, lists the lesson's runs and draws a chart of their metrics. The lesson is found in the registry by what
its notebook does (``report_to=["trackio", ...]`` with a ``PROJECT`` and a ``TRACKIO_DIR`` under ``run_dir``), not
by its file name; its runs are the ones ``make test`` (nbmake) or ``make execute`` left in ``runs/``, and the
notebook is run here (outputs discarded) when they are missing. The dashboard runs in its own process, started as
the lesson tells a learner to start it (``TRACKIO_DIR`` set), on a free port, with no share link and no browser of
its own; the course's network guard (tests/conftest.py) reaches it, so it may not open any connection beyond
this machine.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from course_facts.registry import lessons

ROOT = Path(__file__).resolve().parents[2]
TRACKING = re.compile(r'report_to=\["trackio"')
PROJECT = re.compile(r'^PROJECT = "([^"]+)"', re.MULTILINE)
FOLDER = re.compile(r'os\.environ\["TRACKIO_DIR"\] = .*run_dir\("([^"]+)"\)')


def _tracking_lesson() -> tuple[Path, str, Path]:
    """``(notebook, project, trackio folder)`` of the first lesson of the registry that tracks with trackio."""
    for entry in lessons():
        notebook = ROOT / "notebooks" / entry.file
        source = "\n".join("".join(cell["source"]) for cell in json.loads(notebook.read_text())["cells"])
        if TRACKING.search(source) and PROJECT.search(source) and FOLDER.search(source):
            folder = ROOT / "runs" / FOLDER.search(source).group(1)
            return notebook, PROJECT.search(source).group(1), folder
    pytest.fail("no lesson of lessons.toml tracks with trackio (report_to=['trackio', ...], PROJECT, TRACKIO_DIR)")


@pytest.fixture(scope="module")
def lesson_runs() -> tuple[str, Path]:
    """``(project, trackio folder)`` with the lesson's runs in it; the notebook is run first if they are missing."""
    notebook, project, folder = _tracking_lesson()
    if not (folder / f"{project}.db").is_file():
        import nbformat
        from nbclient import NotebookClient

        copy = nbformat.read(notebook, as_version=4)
        NotebookClient(copy, timeout=600, resources={"metadata": {"path": str(notebook.parent)}}).execute()
    assert (folder / f"{project}.db").is_file(), f"running {notebook.name} left no {project}.db in {folder}"
    return project, folder


@pytest.fixture(scope="module")
def dashboard(lesson_runs: tuple[str, Path], port: Any) -> Iterator[str]:
    """The URL of trackio's dashboard on the lesson's project; stopped afterwards."""
    project, folder = lesson_runs
    number = port()
    env = {**os.environ, "TRACKIO_DIR": str(folder)}
    for name in ("TRACKIO_SPACE_ID", "TRACKIO_SERVER_URL"):
        env.pop(name, None)
    start = (
        "import sys, trackio; trackio.show(project=sys.argv[1], server_port=int(sys.argv[2]), "
        "open_browser=False, block_thread=True, share=False)"
    )
    log = (folder / "dashboard.log").open("w")
    process = subprocess.Popen(
        [sys.executable, "-c", start, project, str(number)], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{number}"
    try:
        for _ in range(600):
            if process.poll() is not None:
                pytest.fail(f"trackio show exited with {process.returncode}: {(folder / 'dashboard.log').read_text()}")
            try:
                with urllib.request.urlopen(url, timeout=5) as reply:
                    if reply.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("trackio's dashboard did not answer within 60 s: " + (folder / "dashboard.log").read_text())
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def test_the_dashboard_lists_the_lessons_runs_and_draws_a_chart(
    browser: Any, dashboard: str, lesson_runs: tuple[str, Path], screenshots: Path
) -> None:
    project, folder = lesson_runs
    command = [sys.executable, "-m", "trackio.cli", "list", "runs", "--project", project, "--json"]
    listed = subprocess.run(command, env={**os.environ, "TRACKIO_DIR": str(folder)}, capture_output=True, text=True)
    expected = json.loads(listed.stdout)["runs"]
    assert len(expected) >= 9, listed.stdout + listed.stderr
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(f"{dashboard}/?project={project}", wait_until="load")
        for name in expected:
            page.get_by_text(name, exact=True).first.wait_for(state="attached", timeout=60_000)
        # A chart: the evaluation group's loss plot, drawn (vega renders an svg or a canvas into it).
        page.get_by_text("eval (", exact=False).first.wait_for(state="attached", timeout=60_000)
        plot = page.locator(".plot-container", has=page.get_by_text("loss", exact=True)).first
        plot.locator("svg, canvas").first.wait_for(state="visible", timeout=60_000)
        assert plot.bounding_box()["height"] > 100
        page.screenshot(path=str(screenshots / "trackio_dashboard.png"), full_page=True)
        text = page.evaluate("document.body.innerText")
        assert all(name in text for name in expected), text[:2000]
    finally:
        page.close()
