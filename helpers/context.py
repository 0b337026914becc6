"""The course context: the profile that the set-up cell chose, decided once per process.

``helpers.setup_notebook()`` is the only caller of :func:`helpers.device.course_profile`; it stores the
result here, and everything that sizes data or models (the capstone's data and model, a lesson's factory)
reads :func:`active_profile`, so a notebook set up with ``COURSE_PROFILE=cpu`` on a GPU machine sizes its
data *and* builds its model for the CPU.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from helpers.device import CourseProfile

_active: CourseProfile | None = None


class CourseContextError(RuntimeError):
    """Asked for the course profile before the set-up cell chose one."""


def set_active_profile(profile: CourseProfile) -> CourseProfile:
    """Make ``profile`` the course's profile in this process (``setup_notebook`` calls it) and return it.

    Raises:
        TypeError: ``profile`` is not a :class:`~helpers.device.CourseProfile`.
    """
    from helpers.device import CourseProfile

    global _active
    if not isinstance(profile, CourseProfile):
        raise TypeError(f"expected a helpers.device.CourseProfile, got {type(profile).__name__}.")
    _active = profile
    return profile


def active_profile() -> CourseProfile:
    """The profile the set-up cell chose.

    Raises:
        CourseContextError: nothing chose one yet (the set-up cell was not run in this kernel).
    """
    if _active is None:
        raise CourseContextError(
            "No course profile yet: run the set-up cell at the top of the notebook first "
            "(it calls helpers.setup_notebook()); a script calls helpers.setup_notebook(announce=False)."
        )
    return _active


def run_dir(name: str, clean: bool = True) -> os.PathLike[str]:
    """A scratch folder ``runs/<name>`` at the repository root (gitignored) for Trainer outputs.

    Args:
        name: a short folder name, such as ``"05_events"``.
        clean: delete what an earlier run left there, so each notebook run starts from nothing.
    """
    import shutil
    from pathlib import Path

    if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
        raise ValueError(f"name must be a plain folder name such as '05_events', got {name!r}.")
    folder = Path(__file__).resolve().parent.parent / "runs" / name
    if clean and folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
