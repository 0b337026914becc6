"""The Python code of a notebook, as the tests that read the course's sources see it (one definition for all)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

_LINE_MAGIC = re.compile(r"^\s*(%|!(?!=))")  # `%time`, `!pip`; not a line that starts with `!=`


def cell_python(source: str) -> str:
    """The Python of one code cell: line magics and shell lines become ``pass``; a cell magic (``%%writefile``)
    keeps its body only where that body is Python (lesson 11 writes a script; lesson 10 writes YAML)."""
    if source.startswith("%%"):
        body = source.split("\n", 1)[1] if "\n" in source else ""
        try:
            ast.parse(body)
        except SyntaxError:
            return "pass  # a cell magic whose body is not Python"
        return body
    return "\n".join("pass  # magic" if _LINE_MAGIC.match(line) else line for line in source.splitlines())


def notebook_python(path: Path) -> str:
    """The Python of every code cell of the notebook at ``path``, cells separated by blank lines."""
    cells = json.loads(path.read_text())["cells"]
    return "\n\n".join(cell_python("".join(c["source"])) for c in cells if c["cell_type"] == "code")
