"""The parts every notebook shares: the title badge, the set-up cell, and the percent-format converters.

Authoring: write a lesson as a percent-format Python file (``# %% [markdown]`` and ``# %%`` cells), without
the set-up cell, then ``python tools/notebook_format.py build src.py notebooks/NN_topic.ipynb``. The builder
adds the Colab badge to the title cell and inserts the standard set-up cell as the first code cell.
``python tools/notebook_format.py source notebooks/NN_topic.ipynb > src.py`` goes back the other way.
The .ipynb files are the source of truth; percent files are a convenience for editing.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
SETUP_MARKER = "# Set-up: the same cell opens every notebook."
BADGE_RE = re.compile(r"\[!\[Open In Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]\([^)]*\)")


def course_config() -> dict[str, str]:
    """The ``[tool.course]`` table of pyproject.toml (repository, branch)."""
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["tool"]["course"]


def colab_badge(notebook_name: str, config: dict[str, str] | None = None) -> str:
    config = config or course_config()
    url = f"https://colab.research.google.com/github/{config['repository']}/blob/{config['branch']}/notebooks/{notebook_name}"
    return f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


def setup_cell_source(config: dict[str, str] | None = None) -> str:
    config = config or course_config()
    return f'''{SETUP_MARKER} On Colab it first fetches the course.
import os, subprocess, sys
COURSE_REPO = "{config['repository']}"  # `make set-repo REPO=owner/name` changes it everywhere
if "google.colab" in sys.modules:  # Colab: clone the course, install what Colab lacks (not torch)
    if not os.path.isdir("/content/course"):
        subprocess.run(["git", "clone", "--depth=1", f"https://github.com/{{COURSE_REPO}}", "/content/course"], check=True)
        subprocess.run(["bash", "/content/course/tools/colab_setup.sh"], check=True)
    sys.path.insert(0, "/content/course")
import helpers
profile = helpers.setup_notebook()  # seeds everything, picks the device and sizes, prints them'''


def apply_shared_parts(nb: nbformat.NotebookNode, name: str, config: dict[str, str] | None = None) -> None:
    """Put the current badge in the title cell and the current set-up cell first among the code cells."""
    config = config or course_config()
    title = nb.cells[0]
    if title.cell_type != "markdown":
        raise ValueError(f"{name}: the first cell must be the markdown title")
    badge = colab_badge(name, config)
    if BADGE_RE.search(title.source):
        title.source = BADGE_RE.sub(lambda _: badge, title.source)
    else:
        title.source = title.source.rstrip() + "\n\n" + badge
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
