"""The ladder's rungs, its files and its probe registry: what every other module of :mod:`tools.ladder` reads.

The newest rung is the course's pin, read from ``requirements.txt`` through :mod:`course_facts.pins` (never typed
here), so ``python -m tools.bump X.Y.Z`` moves it. Torch, the same for every rung, is the course's pinned torch.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from course_facts.pins import OFFLINE_ENV, pinned, pinned_minor

ROOT = Path(__file__).resolve().parent.parent.parent
LADDER_DIR = Path(os.environ.get("LADDER_VENVS", ROOT / ".venv-ladder")).resolve()  # where the environments go
BASE = LADDER_DIR / "base"
HERE = ROOT / "tools" / "ladder"
LOCKS = HERE / "locks"
BISECT_LOCKS = LOCKS / "bisect"
PROBES_FILE = HERE / "probes.py"  # run by path inside each release's environment: standard library + the release
RESULTS = ROOT / "docs" / "ladder" / "results.json"
PAGE = ROOT / "docs" / "ladder.md"
REGISTRY = ROOT / "lessons.toml"
TORCH = f"torch=={pinned('torch')}"
INDEX = "https://pypi.org/simple/{name}/"  # the JSON simple API (PEP 691) of the index pip uses
MARKS = {"holds": "✔", "does not hold": "✘", "cannot run": "○"}
OFFLINE = OFFLINE_ENV  # the course's offline settings (course_facts/pins.py), for every probe run


@dataclass(frozen=True)
class Release:
    """One rung: the version, why it is on the ladder, and the packages of its era pinned next to it."""

    version: str
    why: str
    pins: tuple[str, ...] = ()
    between: tuple[str, str] | None = None  # for a release the bisection runs: the two rungs around it


RELEASES: tuple[Release, ...] = (
    Release(
        "4.23.1",
        f"the oldest release that installs on Python 3.11 with torch {pinned_minor('torch')}: tokenizers 0.13.2 is "
        "the oldest tokenizers with a cp311 wheel, and 4.23 is the first transformers that accepts it "
        "(4.22 needs <0.13)",
        ("numpy<2",),
    ),
    Release(
        "4.33.3",
        "a 2023 release between the floor and 4.40 (the Trainer on accelerate)",
        ("numpy<2", "accelerate<0.24"),
    ),
    Release("4.40.2", "the last release before `eval_strategy` arrived", ("numpy<2", "accelerate<0.31")),
    Release(
        "4.41.2",
        "the last 4.41 release: `eval_strategy` is there and `evaluation_strategy` warns",
        ("numpy<2", "accelerate<0.32"),
    ),
    Release("4.45.2", "the last release before `num_items_in_batch`", ("numpy<2", "accelerate<1.1")),
    Release(
        "4.46.3",
        "the last 4.46 release: `num_items_in_batch`, `processing_class` and `compute_loss_func` are there",
        ("accelerate<1.2",),
    ),
    Release("4.50.3", "a 2025 release between 4.46 and the last 4.x", ("accelerate<1.6",)),
    Release("4.57.6", "the last 4.x release", ()),
    Release("5.0.0", "the first 5.x release", ()),
    Release("5.14.1", "the last release before 5.15", ()),
    Release("5.15.0", "where a downstream project's bisect put the removal of `warmup_ratio`", ()),
    Release("5.24.0", "a former pin of the course (kept by `python -m tools.bump`)", ()),
    Release(pinned(), "the course's pin", ()),  # requirements.txt's transformers, through course_facts.pins
)


class LadderError(RuntimeError):
    """Something the ladder needs is missing or failed; the message says what to do."""


# ---------------------------------------------------------------------------------------------------------------
# Releases and the probe registry
# ---------------------------------------------------------------------------------------------------------------
def release(version: str) -> Release:
    for item in RELEASES:
        if item.version == version:
            return item
    raise LadderError(f"{version} is not on the ladder; choose one of {', '.join(r.version for r in RELEASES)}.")


def select(spec: str) -> list[Release]:
    """``all``, ``ends`` (oldest and newest) or a comma-separated list of versions."""
    if spec == "all":
        return list(RELEASES)
    if spec == "ends":
        return [RELEASES[0], RELEASES[-1]]
    return [release(version.strip()) for version in spec.split(",") if version.strip()]


def load_probes():
    """The probe module, loaded by path (it imports nothing from transformers until a probe runs)."""
    spec = importlib.util.spec_from_file_location("ladder_probes", PROBES_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ladder_probes", module)
    spec.loader.exec_module(module)
    return module


def probe_table() -> dict[str, dict[str, str]]:
    """``{probe id: {claim, source, where}}`` in registry order."""
    return {p.id: {"claim": p.claim, "source": p.source, "where": p.where} for p in load_probes().PROBES}


def version_key(version: str) -> tuple[int, ...]:
    """A release as a tuple to compare (``"5.9.0"`` < ``"5.10.0"``); non-numeric parts are left out."""
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def error_line(error: Exception) -> str:
    """The one or two lines of an error worth recording (pip's ``ERROR`` lines, else the last ones)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    useful = [line for line in lines if line.startswith("ERROR") or "Error" in line]
    return " / ".join((useful or lines)[-2:])[:400]
