"""The order in which `make test` hands files to its processes: the longest first, by their last measured time.

``make test`` runs pytest-xdist with ``--dist loadfile --no-loadscope-reorder``: each file (a test module or a
notebook) goes whole to the next free process, in collection order. ``tests/conftest.py`` sorts the collected
items with :func:`longest_first`, using the times ``tools/setup_facts.py measure-suite`` last recorded, so that
a long file does not start last while the other process sits idle. Files never measured keep their place after
the measured ones. Standard library only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FACTS = Path(__file__).resolve().parent.parent / "docs" / "setup_facts.json"


def measured_seconds(facts: Path = FACTS) -> dict[str, float]:
    """Each test file's and notebook's time in the last measured ``make test``, by its path under ``tests/`` or
    ``notebooks/`` (``test_capstone.py``, ``lesson_07/test_answers.py``, ``NN_topic.ipynb``); empty if none.
    """
    if not facts.is_file():
        return {}
    parts = json.loads(facts.read_text(encoding="utf-8")).get("suite", {}).get("parts", {})
    return {**parts.get("files", {}), **parts.get("notebooks", {})}


def longest_first(items: list[Any], seconds: dict[str, float]) -> None:
    """Sort pytest items (anything with a ``nodeid``) in place, longest file first; a stable sort, so the order
    of the tests within a file is kept."""
    if seconds:
        items.sort(key=lambda item: -seconds.get(file_key(item.nodeid), 0.0))


def file_key(nodeid: str) -> str:
    """A test's file as :func:`measured_seconds` names it: its path below the top folder (``tests/lesson_07/
    test_answers.py::test_x`` -> ``lesson_07/test_answers.py``)."""
    return "/".join(Path(nodeid.split("::")[0]).parts[1:])
