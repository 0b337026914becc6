"""Point the course at a fork: `make set-repo REPO=owner/name`.

Rewrites ``[tool.course] repository`` in pyproject.toml, then every notebook's Colab badges and set-up cell
(``COURSE_REPO``, the repository the set-up cell clones on Colab), and the README's clone command and syllabus.
Outputs are left as they are: only markdown and the set-up cell's source change. ``tools/participant_copies.py``
uses :func:`point_at` to point a participant copy at the participants' repository.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

import nbformat

from tools.notebook_format import ROOT, SETUP_MARKER, course_config, setup_cell_source  # noqa: E402

REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
COLAB_URL_RE = re.compile(r"(https://colab\.research\.google\.com/github/)[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(/blob/)")
NOTEBOOK_GLOB = "notebooks/[0-9][0-9]_*.ipynb"


class RepositoryError(ValueError):
    """A repository that is not written ``owner/name``, or a folder without the course's pyproject.toml."""


def check_repository(repository: str) -> str:
    """``repository`` if it looks like a GitHub ``owner/name``.

    Raises:
        RepositoryError: it does not; the message shows the expected form.
    """
    if not REPO_RE.match(repository or ""):
        raise RepositoryError(
            f"REPO must be a GitHub repository written owner/name (e.g. my-org/trainer-course), got {repository!r}."
        )
    return repository


def point_text(text: str, repository: str) -> str:
    """``text`` with every Open-in-Colab address pointing at ``repository`` (the branch is kept)."""
    return COLAB_URL_RE.sub(lambda found: f"{found.group(1)}{repository}{found.group(2)}", text)


def point_notebook(notebook: nbformat.NotebookNode, config: dict[str, str]) -> None:
    """Point a notebook's Colab badges and its set-up cell at ``config["repository"]``; outputs are kept."""
    for cell in notebook.cells:
        if cell.cell_type == "markdown":
            cell.source = point_text(cell.source, config["repository"])
        elif cell.cell_type == "code" and cell.source.startswith(SETUP_MARKER):
            cell.source = setup_cell_source(config)


def point_at(root: Path, repository: str) -> list[Path]:
    """Point the course in ``root`` at ``repository``: pyproject.toml's ``[tool.course]`` and every lesson
    notebook (badges and set-up cell). Returns the notebooks it rewrote.

    Raises:
        RepositoryError: a malformed repository, or ``root`` has no ``[tool.course]`` table.
    """
    check_repository(repository)
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8") if pyproject.is_file() else ""
    if not re.search(r'(?m)^repository = ".*"$', text):
        raise RepositoryError(f"{pyproject} has no `repository = ...` line under [tool.course].")
    pyproject.write_text(re.sub(r'(?m)^repository = ".*"$', f'repository = "{repository}"', text, count=1))
    config = dict(tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["course"])
    written = []
    for path in sorted(root.glob(NOTEBOOK_GLOB)):
        notebook = nbformat.read(path, as_version=4)
        point_notebook(notebook, config)
        nbformat.write(notebook, path)
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    if len(arguments) != 1:
        print("usage: make set-repo REPO=owner/name", file=sys.stderr)
        return 2
    old = course_config()["repository"]
    try:
        written = point_at(ROOT, arguments[0])
    except RepositoryError as error:
        print(f"set_repo: {error}", file=sys.stderr)
        return 2
    readme = ROOT / "README.md"  # its clone command, then its syllabus's badges
    text = readme.read_text(encoding="utf-8").replace(f"github.com/{old}.git", f"github.com/{arguments[0]}.git")
    text = text.replace(f"\ncd {old.split('/')[1]}\n", f"\ncd {arguments[0].split('/')[1]}\n")
    readme.write_text(text, encoding="utf-8")
    from tools.execute_notebooks import update_readme

    update_readme()
    for path in written:
        print(f"updated {path.name}")
    print(f"every badge and set-up cell now points at github.com/{arguments[0]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
