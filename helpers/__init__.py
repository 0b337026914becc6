"""Helpers behind the notebooks of the Trainer course.

Small on purpose: each module has one concern (``data``, ``models``, ``device``, ``plots``, ``callbacks``,
``metrics``, ``gradients``, ``checks``). What a lesson teaches is written out in the notebook; the helpers only
do what would distract from it.
"""

from __future__ import annotations

import logging
import os
import warnings

# tqdm warns once that Jupyter widgets are missing; the course turns library progress bars off anyway.
warnings.filterwarnings("ignore", message="IProgress not found")

from helpers.context import active_profile
from helpers.data import load_reviews, tokenize_reviews
from helpers.device import CourseProfile, detect_hardware, hardware_summary, seed_everything, versions
from helpers.models import load_model_and_tokenizer
from helpers.trainers import quiet

__all__ = [
    "CourseProfile",
    "freeze_library_objects",
    "active_profile",
    "load_model_and_tokenizer",
    "load_reviews",
    "quiet",
    "seed_everything",
    "run_dir",
    "setup_notebook",
    "tokenize_reviews",
]

SEED = 42


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
    from helpers.device import course_profile
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
    sizes = (
        f"layers={chosen.num_layers}, train={chosen.train_examples or 'all'}, max_length={chosen.max_length}, "
        f"batch={chosen.batch_size}, epochs={chosen.num_train_epochs:g}, precision={chosen.precision}"
    )
    print(f"profile: {chosen.name} (device {chosen.device}; {sizes}) | seed {seed}")
    return chosen


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
