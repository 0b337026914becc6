"""Test-session set-up: no network beyond this machine, for the tests and for every process they start.

The course promises to run offline. This file installs the offline guard (``tools/network_guard``) in the
pytest process and exports ``COURSE_NETWORK_GUARD=1`` and ``PYTHONPATH=tools/network_guard`` so that each
Python subprocess, including the Jupyter kernels nbmake starts for the notebooks, installs it too
(``sitecustomize.py``). Every blocked attempt is written to a log file; a test during which one happened
fails and names the code that tried, and so does the session, even when a library caught the error.
Loopback (127.0.0.0/8, ::1, Unix sockets) stays open: Jupyter kernels talk to pytest over it.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GUARD_DIR = ROOT / "tools" / "network_guard"
sys.path.insert(0, str(GUARD_DIR))
import course_network_guard  # noqa: E402

from course_facts.pins import OFFLINE_ENV  # noqa: E402
from tools import suite_order, warm_kernel  # noqa: E402

# make test runs in several processes (pytest-xdist): they share the log of the process that started them, so
# that an attempt in any of them, or in a kernel one of them started, fails the session where it is reported.
_SHARED = os.environ.get(course_network_guard.LOG_ENV) if os.environ.get("PYTEST_XDIST_WORKER") else None
_LOG = Path(_SHARED) if _SHARED else Path(tempfile.mkdtemp(prefix="course-network-guard-")) / "blocked.log"
_LOG.touch()
os.environ[course_network_guard.ENABLE_ENV] = "1"
os.environ[course_network_guard.LOG_ENV] = str(_LOG)
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GUARD_DIR), os.environ.get("PYTHONPATH")]))
for _name, _value in OFFLINE_ENV.items():  # the course's one definition (make test sets the same)
    os.environ.setdefault(_name, _value)
course_network_guard.install()


def blocked_attempts() -> list[str]:
    """Every attempt the guard has blocked so far, in this process and its subprocesses."""
    return [line for line in _LOG.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(autouse=True)
def _no_network_during_test() -> Iterator[None]:
    """Fail the test if it (or a process it started) tried to reach the network, even if the error was caught.

    The guard's own tests trigger it on purpose; they point ``COURSE_NETWORK_GUARD_LOG`` at a file of their own.
    """
    before = len(blocked_attempts())
    yield
    new = blocked_attempts()[before:]
    assert not new, "this test tried to use the network (the course must run offline):\n" + "\n".join(new)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Notebooks run in kernels outside this file's fixtures: any attempt they logged fails the session."""
    attempts = blocked_attempts()
    if attempts:
        sys.stderr.write("\nNetwork access was attempted during the tests (blocked):\n" + "\n".join(attempts) + "\n")
        session.exitstatus = 1


def _libraries_loaded() -> bool:
    """Whether the collected test modules imported torch: a run of tests that read files only (the README's, the
    notebooks' JSON) neither needs the course context nor pays the 5 to 10 s of importing the Trainer for it."""
    return "torch" in sys.modules


@pytest.fixture(scope="session", autouse=True)
def _course_context() -> None:
    """The course context a notebook's set-up cell creates: the profile (from ``COURSE_PROFILE`` or the
    hardware, as in a notebook), chosen once by ``helpers.setup_notebook``. It runs after collection, so its
    freeze of what is loaded (:func:`helpers.freeze_library_objects`) covers the imported test modules too: every
    ``Trainer.train()`` of the tests then skips them in the full garbage collection it starts with."""
    if _libraries_loaded():
        import helpers

        helpers.setup_notebook(announce=False)


def pytest_configure(config: pytest.Config) -> None:
    """`make test` runs the notebooks in the ``course-warm`` kernel (``--nbmake-kernel=course-warm``): each a fork
    of a process that imported the libraries once (``tools/warm_kernel.py``). Its kernel spec and provisioner
    exist only in this process and the ones it starts."""
    if getattr(config.option, "nbmake_kernel", None) == warm_kernel.NAME:
        folder = Path(tempfile.mkdtemp(prefix="course-kernels-"))
        warm_kernel.write_kernel_spec(folder)
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(folder), os.environ.get("JUPYTER_PATH")]))
        warm_kernel.register()


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest files first, by their last measured time (``tools/suite_order.py``): `make test` hands whole files
    to its processes in this order, so the long ones do not start last."""
    suite_order.longest_first(items, suite_order.measured_seconds())
