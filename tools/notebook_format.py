"""The parts every notebook shares, written from the registry (``lessons.toml``) and ``[tool.course]``.

The title cell (``# NN · Title``, the summary, the Colab badge, the link line previous · syllabus · next), the
set-up cell (identical everywhere), the "What you will learn" cell with the measured run time, the claim boxes'
verdict lines (:mod:`tools.verdicts`, from the release ladder's results and the pin) and the closing link line
all come from here; ``make execute`` and ``make set-repo`` rewrite them, so they are never typed.

Authoring: write a lesson as a percent-format Python file (``# %% [markdown]`` and ``# %%`` cells), without
the shared parts, then ``python -m tools.notebook_format build src.py notebooks/NN_topic.ipynb``.
``python -m tools.notebook_format source notebooks/NN_topic.ipynb > src.py`` goes back the other way.
``python -m tools.notebook_format apply notebooks/NN_topic.ipynb ...`` rewrites the shared parts of committed
notebooks in place (their outputs are kept), for a change of the shared parts that needs no new run.
The .ipynb files are the source of truth; percent files are a convenience for editing.
"""

from __future__ import annotations

import re
import sys
import textwrap
import tomllib
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
from course_facts.registry import Lesson, lesson, lessons, neighbours  # noqa: E402
from tools.verdicts import write_verdicts  # noqa: E402

WRAP = 108  # markdown prose is wrapped here; code lines stop at 88 (notebooks/ruff.toml)
GOALS_HEADING = "## What you will learn"
PATTERN_HEADING = "## The pattern"
SCRIPT_PREFIX = "**Script:**"
SETUP_MARKER = "# Set-up: the same cell opens every notebook."
SYLLABUS_LINK = "[Syllabus](../README.md#syllabus)"
NAV_RE = re.compile(
    r"^(\[← [^\n]*\]\([0-9][0-9]_\w+\.ipynb\) · )?"
    r"\[Syllabus\]\(\.\./README\.md#syllabus\)"
    r"( · \[[^\n]* →\]\([0-9][0-9]_\w+\.ipynb\))?$",
    re.MULTILINE,
)
BADGE_RE = re.compile(
    r"\[!\[Open In Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]\([^)]*\)"
)


def course_config() -> dict[str, str]:
    """The ``[tool.course]`` table of pyproject.toml (repository, branch)."""
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["tool"]["course"]


def colab_badge(notebook_name: str, config: dict[str, str] | None = None) -> str:
    config = config or course_config()
    url = (
        f"https://colab.research.google.com/github/{config['repository']}/blob/{config['branch']}"
        f"/notebooks/{notebook_name}"
    )
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


SETUP_CELL = """{marker} On Colab it first fetches the course.
import os
import sys

COURSE_REPO = "{repository}"  # `make set-repo` rewrites it
if "google.colab" in sys.modules:  # Colab: clone the course, install what Colab lacks
    import runpy
    import subprocess
    import time

    class CourseSetupError(Exception):
        def _render_traceback_(self):  # Jupyter shows this message, no traceback
            return [f"CourseSetupError: {{self}}"]

    SETUP_STARTED, CLONED_FROM = time.perf_counter(), None
    COURSE_DIR = os.environ.get("COURSE_DIR", "/content/course")  # tests, mirrors
    if not os.path.isdir(COURSE_DIR):
        CLONED_FROM = os.environ.get("COURSE_URL", f"https://github.com/{{COURSE_REPO}}")
        clone = ["git", "clone", "--quiet", "--depth=1", CLONED_FROM, COURSE_DIR]
        git = subprocess.run(clone, capture_output=True, text=True)
        if git.returncode:
            raise CourseSetupError(
                f"could not clone the course from {{CLONED_FROM}}\\n"
                f"git said: {{git.stderr.strip()}}\\n"
                "Check the network (Runtime > Disconnect and delete runtime, then run "
                "this cell again), the address (the COURSE_URL environment variable, "
                "or a badge that points at your own fork), and, for a private fork, "
                "that you are allowed to read it. The notebook stops here."
            )
    # Installs what is missing; may restart the runtime: then run this cell again.
    runpy.run_path(
        f"{{COURSE_DIR}}/tools/colab_setup.py",
        dict(SETUP_STARTED=SETUP_STARTED, CLONED_FROM=CLONED_FROM),
    )
    if COURSE_DIR not in sys.path:
        sys.path.insert(0, COURSE_DIR)
import helpers

profile = helpers.setup_notebook()  # seeds, picks the device and sizes, prints them"""
# The book shows a reader of the website one line instead of the set-up code (myst-nb's tag).
SETUP_TAGS = ["hide-input"]
# And the notebook opens with the set-up code collapsed, its output shown: JupyterLab collapses a cell's input by
# ``jupyter.source_hidden`` (nbformat's cell metadata; it shows the first line, "# Set-up: ...", and a click
# opens the code), Colab by ``cellView: "form"`` (the form view: a "Show code" link instead of the code).
SETUP_METADATA = {"jupyter": {"source_hidden": True}, "cellView": "form"}


def setup_cell_source(config: dict[str, str] | None = None) -> str:
    """The set-up cell. On Colab it clones the course (``COURSE_URL`` and ``COURSE_DIR`` override where from
    and where to, for tests and mirrors), stops with a one-paragraph message when the clone fails, and runs
    tools/colab_setup.py in the kernel, which may restart the runtime."""
    repository = (config or course_config())["repository"]
    return SETUP_CELL.format(marker=SETUP_MARKER, repository=repository)


def syllabus_names() -> list[str]:
    """The lesson notebooks in syllabus order, from the registry (lessons.toml)."""
    return [lesson.file for lesson in lessons()]


def nav_line(name: str, names: list[str] | None = None) -> str:
    """The link line that opens and closes a notebook: previous lesson · syllabus · next lesson."""
    if name not in syllabus_names():
        raise ValueError(f"{name} is not a lesson of lessons.toml")
    before, after = neighbours(name)
    parts = [f"[← {before.label}]({before.file})"] if before else []
    parts.append(SYLLABUS_LINK)
    if after:
        parts.append(f"[{after.label} →]({after.file})")
    return " · ".join(parts)


def title_source(name: str, config: dict[str, str] | None = None) -> str:
    """The title cell: ``# NN · Title``, the lesson's summary, the Colab badge and the link line."""
    entry = lesson(name)
    summary = "\n".join(textwrap.wrap(entry.summary, width=WRAP))
    return f"# {entry.label}\n{summary}\n\n{colab_badge(name, config)}\n\n{nav_line(name)}"


def run_time_line(entry: Lesson) -> str:
    """The ``**Run time:**`` line, from the times ``make execute`` measured (never typed)."""
    cpu, gpu = entry.seconds("cpu"), entry.seconds("gpu")
    cpu_text = f"{cpu:.0f} s on a {entry.machine('cpu')} (profile `cpu`)" if cpu else "CPU not measured yet"
    gpu_text = f"{gpu:.0f} s on {entry.machine('gpu')} (profile `cuda`)" if gpu else "GPU not measured yet"
    return f"**Run time:** {cpu_text}; {gpu_text}. Measured top to bottom by `make execute`."


def goals_source(name: str) -> str:
    """The "What you will learn" cell: the lesson's goals from the registry, then its run time."""
    entry = lesson(name)
    bullets = []
    for goal in entry.goals:
        lines = textwrap.wrap(f"- {goal};", width=WRAP, subsequent_indent="  ")
        bullets.append("\n".join(lines))
    if bullets:
        bullets[-1] = bullets[-1].removesuffix(";") + "."
    return f"{GOALS_HEADING}\n" + "\n".join(bullets) + "\n\n" + run_time_line(entry)


def script_links(nb: nbformat.NotebookNode, name: str) -> str | None:
    """The line under the pattern's heading that links the lesson's scripts (``examples/``, made from the
    cells tagged ``pattern`` by :mod:`tools.examples`); None for a notebook without tagged cells."""
    from tools.examples import tagged_cells

    scripts = sorted(tagged_cells(nb, ROOT / "notebooks" / name))
    if not scripts:
        return None
    return SCRIPT_PREFIX + " " + " · ".join(f"[`examples/{script}`](../examples/{script})" for script in scripts)


def _write_script_links(nb: nbformat.NotebookNode, name: str) -> None:
    """Put :func:`script_links` right under the pattern's heading (replacing the one written before)."""
    cells = [cell for cell in nb.cells if cell.cell_type == "markdown" and cell.source.startswith(PATTERN_HEADING)]
    if not cells:
        return
    heading, *body = [line for line in cells[0].source.splitlines() if not line.startswith(SCRIPT_PREFIX)]
    while body and not body[0].strip():
        body.pop(0)
    links = script_links(nb, name)
    cells[0].source = "\n".join([heading, *([links, ""] if links else []), *body])


def apply_shared_parts(nb: nbformat.NotebookNode, name: str, config: dict[str, str] | None = None) -> None:
    """Write the parts that come from the registry and the project settings: the title cell, the "What you
    will learn" cell (after the set-up cell), the set-up cell first among the code cells, and the closing
    link line; and under the pattern's heading, the link to its script (:func:`script_links`)."""
    config = config or course_config()
    if not nb.cells or nb.cells[0].cell_type != "markdown":
        raise ValueError(f"{name}: the first cell must be the markdown title")
    nb.cells[0].source = title_source(name, config)
    last = nb.cells[-1]
    nav = nav_line(name)
    if last.cell_type == "markdown" and NAV_RE.fullmatch(last.source.strip()):
        last.source = nav
    else:
        nb.cells.append(nbformat.v4.new_markdown_cell(nav))
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    if code and code[0].source.startswith(SETUP_MARKER):
        setup = code[0]
        setup.source = setup_cell_source(config)
    else:
        setup = nbformat.v4.new_code_cell(setup_cell_source(config))
        nb.cells.insert(1, setup)
    setup.metadata["tags"] = list(SETUP_TAGS)
    setup.metadata.setdefault("jupyter", {}).update(SETUP_METADATA["jupyter"])
    setup.metadata["cellView"] = SETUP_METADATA["cellView"]
    where = nb.cells.index(setup) + 1
    goals = [cell for cell in nb.cells if cell.cell_type == "markdown" and cell.source.startswith(GOALS_HEADING)]
    if goals:
        goals[0].source = goals_source(name)
    else:
        nb.cells.insert(where, nbformat.v4.new_markdown_cell(goals_source(name)))
    _write_script_links(nb, name)
    for cell in nb.cells:  # the claim boxes' verdict lines, from the ladder's results and the pin
        if cell.cell_type == "markdown" and "<!-- verdict: " in cell.source:
            cell.source = write_verdicts(cell.source)


def parse_percent(text: str) -> list[nbformat.NotebookNode]:
    """Cells from a percent-format file."""
    cells: list[nbformat.NotebookNode] = []
    kind, lines = None, []

    def flush() -> None:
        if kind is None:
            return
        body = "\n".join(lines).strip("\n")
        if kind == "markdown":
            body = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in body.splitlines())
            cells.append(nbformat.v4.new_markdown_cell(body))
        else:
            cells.append(nbformat.v4.new_code_cell(body))

    for line in text.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind is not None:
            lines.append(line)
    flush()
    return cells


def build(source: Path, target: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.cells = parse_percent(source.read_text())
    apply_shared_parts(nb, target.name)
    nbformat.validate(nb)
    nbformat.write(nb, target)


def to_percent(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    out = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            out.append("# %% [markdown]\n" + "\n".join(("# " + line).rstrip() for line in cell.source.splitlines()))
        elif not cell.source.startswith(SETUP_MARKER):
            out.append("# %%\n" + cell.source)
    return "\n\n".join(out) + "\n"


def apply(paths: list[Path]) -> list[Path]:
    """Rewrite the shared parts of each notebook in place, outputs untouched; the notebooks that changed."""
    changed = []
    for path in paths:
        before = path.read_text(encoding="utf-8")
        nb = nbformat.read(path, as_version=4)
        apply_shared_parts(nb, path.name)
        nbformat.validate(nb)
        nbformat.write(nb, path)
        if path.read_text(encoding="utf-8") != before:
            changed.append(path)
    return changed


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "build":
        build(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "source":
        sys.stdout.write(to_percent(Path(sys.argv[2])))
    elif len(sys.argv) >= 3 and sys.argv[1] == "apply":
        for changed in apply([Path(name) for name in sys.argv[2:]]):
            print(f"rewrote the shared parts of {changed}")
    else:
        sys.exit("usage: notebook_format.py build SRC.py NOTEBOOK.ipynb | source NOTEBOOK.ipynb | apply NOTEBOOK ...")
