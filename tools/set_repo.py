"""Point the course at a fork: `make set-repo REPO=owner/name`.

Rewrites ``[tool.course] repository`` in pyproject.toml, then every notebook's Colab badge and set-up cell,
and the README syllabus table. Outputs are left as they are (only markdown and the set-up cell's source change).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
from execute_notebooks import load_times, update_readme  # noqa: E402
from notebook_format import ROOT, apply_shared_parts, course_config  # noqa: E402

REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")


def main(repository: str) -> int:
    if not REPO_RE.match(repository):
        print(f"REPO must look like owner/name (a GitHub repository), got {repository!r}")
        return 2
    pyproject = ROOT / "pyproject.toml"
    text = pyproject.read_text()
    text = re.sub(r'(?m)^repository = ".*"$', f'repository = "{repository}"', text, count=1)
    pyproject.write_text(text)
    config = course_config()
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        apply_shared_parts(nb, path.name, config)
        nbformat.write(nb, path)
        print(f"updated {path.name}")
    update_readme(load_times())
    print(f"every badge and set-up cell now points at github.com/{repository}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]) if len(sys.argv) == 2 else "usage: set_repo.py owner/name")
