"""Reading the files to check: Python files, notebooks (code cells, IPython magics left out) and folders."""

from __future__ import annotations

import ast
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .findings import CheckOldCodeError

SKIPPED_FOLDERS = {".git", "__pycache__", ".ipynb_checkpoints", "runs", "node_modules", "_build"}


@dataclass
class _Unit:
    """One piece of source to parse: a Python file, or one code cell of a notebook."""

    path: str
    source: str
    cell: int | None = None
    tree: ast.Module | None = None


def _read(path: Path) -> list[_Unit]:
    """The units of one file: the file itself, or each code cell of a notebook (magics turned into comments)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise CheckOldCodeError(
            f"{path}: not UTF-8 text ({error.reason}); give a Python file or a notebook."
        ) from error
    except OSError as error:
        raise CheckOldCodeError(f"{path}: cannot be read ({error.strerror}); check its permissions.") from error
    if path.suffix != ".ipynb":
        return [_Unit(str(path), text)]
    try:
        notebook = json.loads(text)
        cells = notebook["cells"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise CheckOldCodeError(f"{path}: not a valid notebook (JSON with a 'cells' list): {error}.") from error
    units = []
    for index, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if source.lstrip().startswith("%%"):
            continue  # a cell magic: not Python
        lines, magic = [], False
        for line in source.split("\n"):
            magic = magic or _is_magic(line)
            lines.append(("pass  # " + line) if magic else line)
            magic = magic and line.rstrip().endswith("\\")  # a magic goes on after a trailing backslash
        units.append(_Unit(str(path), "\n".join(lines), cell=index))
    return units


def _is_magic(line: str) -> bool:
    """An IPython line magic (``%pip install x``) or shell escape (``!ls``), which is not Python; ``!=`` is."""
    stripped = line.lstrip()
    return (stripped.startswith("!") and not stripped.startswith("!=")) or (
        stripped.startswith("%") and stripped[1:2].isalpha()
    )


def _files(paths: Sequence[str | Path], errors: list[str]) -> list[Path]:
    """The ``.py`` and ``.ipynb`` files given or found under the given folders; bad paths go to ``errors``."""
    found = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            errors.append(f"{given}: no such file or folder.")
        elif path.is_dir():
            for candidate in sorted(path.rglob("*")):
                parts = set(candidate.relative_to(path).parts[:-1])
                hidden = any(part.startswith(".") for part in parts)
                if candidate.suffix in (".py", ".ipynb") and candidate.is_file() and not hidden:
                    if not parts & SKIPPED_FOLDERS:
                        found.append(candidate)
        elif path.suffix in (".py", ".ipynb"):
            found.append(path)
        else:
            errors.append(f"{given}: not a Python file (.py) or a notebook (.ipynb).")
    return found
