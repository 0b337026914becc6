"""The parts every notebook shares: the title badge, the set-up cell, and the percent-format converters.

Authoring: write a lesson as a percent-format Python file (``# %% [markdown]`` and ``# %%`` cells), without
the set-up cell, then ``python tools/notebook_format.py build src.py notebooks/NN_topic.ipynb``. The builder
adds the Colab badge and the link line (previous · syllabus · next) to the title cell, appends the same link
line as the last cell, and inserts the standard set-up cell as the first code cell.
``python tools/notebook_format.py source notebooks/NN_topic.ipynb > src.py`` goes back the other way.
The .ipynb files are the source of truth; percent files are a convenience for editing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import tomllib

ROOT = Path(__file__).resolve().parent.parent
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
    url = f"https://colab.research.google.com/github/{config['repository']}/blob/{config['branch']}/notebooks/{notebook_name}"
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


def setup_cell_source(config: dict[str, str] | None = None) -> str:
    """The set-up cell. On Colab it clones the course (``COURSE_URL`` and ``COURSE_DIR`` override where from and
    where to, for tests and mirrors) and runs tools/colab_setup.py in the kernel, which may restart the runtime."""
    repository = (config or course_config())["repository"]
    return f'''{SETUP_MARKER} On Colab it first fetches the course.
import os
import sys
import time

COURSE_REPO = "{repository}"  # `make set-repo REPO=owner/name` changes it everywhere
if "google.colab" in sys.modules:  # Colab: clone the course, install what Colab lacks (never its torch)
    import runpy
    import subprocess

    SETUP_STARTED, CLONED_FROM = time.perf_counter(), None
    COURSE_DIR = os.environ.get("COURSE_DIR", "/content/course")  # COURSE_DIR, COURSE_URL: for tests and mirrors
    if not os.path.isdir(COURSE_DIR):
        CLONED_FROM = os.environ.get("COURSE_URL", f"https://github.com/{{COURSE_REPO}}")
        subprocess.run(["git", "clone", "--quiet", "--depth=1", CLONED_FROM, COURSE_DIR], check=True)
    # Installs what is missing; restarts the runtime (run this cell again) if that changed an imported package.
    runpy.run_path(f"{{COURSE_DIR}}/tools/colab_setup.py", dict(SETUP_STARTED=SETUP_STARTED, CLONED_FROM=CLONED_FROM))
    if COURSE_DIR not in sys.path:
        sys.path.insert(0, COURSE_DIR)
import helpers

profile = helpers.setup_notebook()  # seeds everything, picks the device and sizes, prints them'''


def syllabus_names() -> list[str]:
    """The lesson notebooks in syllabus order (their numbers give the order)."""
    return sorted(path.name for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def notebook_title(name: str) -> str:
    """``NN · Title`` from the first line of a notebook's title cell."""
    nb = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    return nb.cells[0].source.splitlines()[0].lstrip("# ").strip()


def nav_line(name: str, names: list[str] | None = None) -> str:
    """The link line that opens and closes a notebook: previous lesson · syllabus · next lesson."""
    names = names if names is not None else syllabus_names()
    if name not in names:
        raise ValueError(f"{name} is not a lesson notebook (NN_topic.ipynb under notebooks/)")
    i = names.index(name)
    parts = [f"[← {notebook_title(names[i - 1])}]({names[i - 1]})"] if i else []
    parts.append(SYLLABUS_LINK)
    if i + 1 < len(names):
        parts.append(f"[{notebook_title(names[i + 1])} →]({names[i + 1]})")
    return " · ".join(parts)


def apply_shared_parts(nb: nbformat.NotebookNode, name: str, config: dict[str, str] | None = None) -> None:
    """Put the current badge and link line in the title cell, the same link line in the last cell, and the
    current set-up cell first among the code cells."""
    config = config or course_config()
    title = nb.cells[0]
    if title.cell_type != "markdown":
        raise ValueError(f"{name}: the first cell must be the markdown title")
    badge = colab_badge(name, config)
    if BADGE_RE.search(title.source):
        title.source = BADGE_RE.sub(lambda _: badge, title.source)
    else:
        title.source = title.source.rstrip() + "\n\n" + badge
    nav = nav_line(name) if name in syllabus_names() else None
    if nav is not None:
        if NAV_RE.search(title.source):
            title.source = NAV_RE.sub(lambda _: nav, title.source)
        else:
            title.source = title.source.rstrip() + "\n\n" + nav
        last = nb.cells[-1]
        if last.cell_type == "markdown" and NAV_RE.fullmatch(last.source.strip()):
            last.source = nav
        else:
            nb.cells.append(nbformat.v4.new_markdown_cell(nav))
    code = [cell for cell in nb.cells if cell.cell_type == "code"]
    if code and code[0].source.startswith(SETUP_MARKER):
        code[0].source = setup_cell_source(config)
    else:
        nb.cells.insert(1, nbformat.v4.new_code_cell(setup_cell_source(config)))


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


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "build":
        build(Path(sys.argv[2]), Path(sys.argv[3]))
    elif len(sys.argv) == 3 and sys.argv[1] == "source":
        sys.stdout.write(to_percent(Path(sys.argv[2])))
    else:
        sys.exit("usage: notebook_format.py build SRC.py NOTEBOOK.ipynb | source NOTEBOOK.ipynb")
