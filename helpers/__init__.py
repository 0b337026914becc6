"""The course's runtime: what the notebooks import (loaders, the profile, plots, the instruments lessons share).

One concern a module (``data`` and ``models``: the offline loaders; ``device`` and ``context``: the profile;
``plots``; ``trainers``; the instruments such as ``callback_events`` or ``gradient_norms``). What a lesson
teaches is written out in the notebook and exported to the generated ``helpers.lessons``; the hand-written
modules here do what would distract from it. Other readers have their own packages: the exercise checks and
solutions ``exercises``, the old-code checker ``check_old_code``, the course facts ``course_facts``, and the
maintainers' commands ``tools``. Nothing here imports them (tests/test_lessons_export.py).

Importing the package is light: no torch, transformers or datasets until something needs them. The names below
(``helpers.load_reviews``, ``helpers.models``, ...) are loaded on first use (PEP 562, :func:`__getattr__`), so
that ``import helpers.plots`` costs what matplotlib costs. A notebook's set-up cell still
needs one call, :func:`setup_notebook`.
"""

from __future__ import annotations

import importlib
import logging
import os
import pkgutil
import warnings
from typing import TYPE_CHECKING, Any

# tqdm warns once that Jupyter widgets are missing; the course turns library progress bars off anyway.
warnings.filterwarnings("ignore", message="IProgress not found")

if TYPE_CHECKING:
    from helpers.context import active_profile, run_dir
    from helpers.data import load_reviews, tokenize_reviews
    from helpers.device import CourseProfile, detect_hardware, hardware_summary, seed_everything, versions
    from helpers.models import load_model_and_tokenizer
    from helpers.trainers import quiet

# name -> the module that defines it; loaded on first use.
_LAZY_NAMES = {
    "active_profile": "helpers.context",
    "load_reviews": "helpers.data",
    "tokenize_reviews": "helpers.data",
    "CourseProfile": "helpers.device",
    "detect_hardware": "helpers.device",
    "hardware_summary": "helpers.device",
    "seed_everything": "helpers.device",
    "versions": "helpers.device",
    "load_model_and_tokenizer": "helpers.models",
    "quiet": "helpers.trainers",
    "run_dir": "helpers.context",
}
# every module and package of this folder, found where it stands (so the list cannot miss one)
_SUBMODULES = frozenset(module.name for module in pkgutil.iter_modules(__path__))


def __getattr__(name: str) -> Any:
    """Load ``helpers.NAME`` (a submodule, or a name of :data:`_LAZY_NAMES`) the first time it is asked for."""
    if name in _SUBMODULES:
        return importlib.import_module(f"helpers.{name}")
    if name in _LAZY_NAMES:
        value = getattr(importlib.import_module(_LAZY_NAMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'helpers' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES | set(_LAZY_NAMES))


__all__ = [
    "CourseProfile",
    "active_profile",
    "detect_hardware",
    "freeze_library_objects",
    "hardware_summary",
    "load_model_and_tokenizer",
    "load_reviews",
    "quiet",
    "run_dir",
    "seed_everything",
    "setup_notebook",
    "tokenize_reviews",
    "versions",
]

from helpers.device import SEED  # noqa: E402 (the course's seed; light: torch loads when a function runs)


def _quiet_libraries() -> None:
    """Hide the libraries' download and map progress bars that would bury the lesson's own output.

    The transformers log level stays at its default, WARNING, on purpose: ``TrainingArguments.disable_tqdm``
    defaults to ``True`` when the level is above WARNING, and the Trainer then prints raw log dicts
    (``PrinterCallback``) instead of its notebook progress table. Lesson 01 shows it.
    """
    import datasets
    import transformers

    datasets.disable_progress_bars()
    transformers.utils.logging.set_verbosity_warning()
    transformers.utils.logging.disable_progress_bar()
    logging.getLogger("accelerate").setLevel(logging.ERROR)
    # Checkpoints written less than a second apart make transformers warn that file times are unreliable; it
    # then sorts them by step number, which is right. Only that module is silenced, not the library's level.
    logging.getLogger("transformers.trainer_utils").setLevel(logging.ERROR)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # torch's DataLoader warns that pin_memory has no accelerator to pin to on a CPU-only machine.
    warnings.filterwarnings("ignore", message=".*pin_memory.*no accelerator.*")


def freeze_library_objects() -> int:
    """Import the Trainer's module, then move every object alive now to the garbage collector's permanent
    generation (``gc.freeze()``); returns how many objects are frozen.

    Every ``Trainer.train()`` starts with a full ``gc.collect()`` (accelerate's ``find_executable_batch_size``
    frees memory before each attempt), which walks every tracked object: with torch, transformers and datasets
    loaded that is about 500,000 objects and 0.3 s on a 2-core CPU, each run. Frozen objects are skipped. They
    are the libraries' modules, classes and functions, which live as long as the process anyway (lesson 07
    shows the same call)."""
    import gc

    import transformers.trainer  # noqa: F401 (loaded now, so that its objects are frozen too)

    gc.collect()  # garbage left so far is freed, not frozen
    gc.freeze()
    return gc.get_freeze_count()


def setup_notebook(
    seed: int = SEED, profile: str | None = None, hide_progress_bars: bool = True, announce: bool = True
) -> CourseProfile:
    """What the set-up cell of every notebook calls: seed, pick device and profile, print them.

    It also loads the Trainer and freezes what is loaded (:func:`freeze_library_objects`), so that the full
    garbage collection each ``train()`` starts with does not walk the libraries again.

    This is the one place that decides the profile (:func:`helpers.device.course_profile`); it is stored as the
    course context, and everything that sizes data or models reads it back with :func:`active_profile`.

    Args:
        seed: the seed for Python, NumPy and torch.
        profile: force a profile (``cpu``, ``cuda``, ``mps``); ``None`` reads ``COURSE_PROFILE`` or the hardware.
        hide_progress_bars: hide the libraries' download, loading and map progress bars.
        announce: print the versions, the hardware and the profile (scripts and tests pass ``False``).

    Returns:
        The :class:`~helpers.device.CourseProfile` the notebook should use.
    """
    from helpers.context import set_active_profile
    from helpers.device import course_profile, detect_hardware, hardware_summary, seed_everything, versions
    from helpers.plots import apply_course_style

    if hide_progress_bars:
        _quiet_libraries()
    apply_course_style()
    hardware = detect_hardware()
    chosen = set_active_profile(course_profile(profile, hardware=hardware))
    freeze_library_objects()
    seed_everything(seed)
    if not announce:
        return chosen
    found = versions()
    print(
        f"transformers {found['transformers']} | torch {found['torch']} | datasets {found['datasets']} "
        f"| Python {found['python']}"
    )
    print(f"hardware: {hardware_summary(hardware)}")
    print(announcement(chosen, seed))
    return chosen


def announcement(chosen: CourseProfile, seed: int) -> str:
    """The set-up cell's profile line: the profile, its device and precision, and the seed, and no sizes.

    The profile's sizes (layers, reviews, epochs, learning rate) are defaults that many lessons change (2 layers,
    256 reviews for 2 epochs at 3e-4, ...); printed here, they would contradict what the lesson then trains. Each
    lesson says the sizes it uses where it uses them; lesson 00 prints the whole profile."""
    return f"profile: {chosen.name} (device {chosen.device}, precision {chosen.precision}) | seed {seed}"
