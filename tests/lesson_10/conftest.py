"""Lesson 10's launches, run once a test session for both files that read them (tests/lesson_10/launches.py).

``make test`` hands test_processes.py and test_rules.py to its processes (pytest-xdist) as whole files, maybe to
two of them. The first to need the launches runs them, holding a lock in the session's shared temporary folder;
the other waits on the lock (the launches keep both cores busy meanwhile) and reads what they wrote.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from lesson_10 import launches


@pytest.fixture(scope="session")
def launched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """``{"work": folder, "printed": {launch: (stdout, stderr)}}``: every launch of lesson 10, run once."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # the folder every worker shares
    work = shared / "lesson_10_launches"
    with open(shared / "lesson_10_launches.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        done = work / "printed.json"
        if not done.is_file():
            if work.exists():  # a worker before this one failed part way: start again
                shutil.rmtree(work)
            work.mkdir()
            launches.launch_all(work)
        printed = {name: tuple(pair) for name, pair in json.loads(done.read_text()).items()}
    return {"work": Path(work), "printed": printed}
