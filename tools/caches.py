"""Where the maintenance tools keep their downloads between runs and between clones, outside the repository.

Its own module, not ``tools/__init__.py``: the package's ``__init__`` is imported by ``tools.python_version`` and
``tools.pins``, which any Python 3 must be able to run before the course's venv exists.
"""

from __future__ import annotations

import os
from pathlib import Path


def user_cache(name: str, variable: str) -> Path:
    """``$variable`` when it is set and not empty, else ``~/.cache/course-NAME`` (as uv keeps its own)."""
    return Path(os.environ.get(variable) or Path.home() / ".cache" / f"course-{name}")
