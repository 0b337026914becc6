"""The releases the course is pinned to, read from ``requirements.txt``: one fact, one place.

The pinned transformers release (and torch, trl, peft, ...) is written once, in ``requirements.txt``
(``constraints.txt`` and ``environment.yml`` repeat it because pip and conda need it there;
``tests/test_pins.py`` holds them equal, and ``python -m tools.bump X.Y.Z`` rewrites all three). Everything else
that names a release asks this module. It also holds two facts of the same kind, each written once: the release
the source posts were written for (:data:`SOURCE_RELEASE`) and the environment every offline run of the course
uses (:data:`OFFLINE_ENV`, which the Makefile and the shell scripts read through ``python -m tools.pins``).

It imports only the standard library, so tools and tests that run before ``.venv`` exists can read it too::

    python -m tools.pins                 # the pinned transformers, X.Y.Z
    python -m tools.pins torch --minor   # the pinned torch, X.Y
    python -m tools.pins --offline       # HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 ... (for `env` and make)
    python -m tools.pins --threads       # OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 (make test, make notebooks)
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements.txt"
CONSTRAINTS = ROOT / "constraints.txt"
ENVIRONMENT = ROOT / "environment.yml"
PIN_FILES = (REQUIREMENTS, CONSTRAINTS, ENVIRONMENT)  # the only files that write a release by hand

# The release the five source posts were written for (2021): the lessons quote its wheel, the ladder reads it.
SOURCE_RELEASE = "4.8.2"

# Offline by default: nothing in the course needs the network once .venv exists. Every run the course starts
# (make test, make execute, the ladder's probes, the GPU and Colab runs, make test-latest) uses these settings.
OFFLINE_ENV: dict[str, str] = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "PYTHONHASHSEED": "0",
}

# One thread a process wherever the course runs notebooks (make lab, make execute, tools/loaded_times.py; make test
# and make notebooks read it through `python -m tools.pins --threads`): torch's default, a thread per core, made
# lesson 18 take 9 min 14 s at load 12, against 56 s with one thread (issue 59). A value already set wins.
THREAD_ENV: dict[str, str] = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def one_thread_a_process(environ: dict[str, str] | None = None) -> dict[str, str]:
    """Set :data:`THREAD_ENV` in ``environ`` (default ``os.environ``, which kernels started later inherit) where
    it is not already set, and return the settings that are now in force."""
    import os

    target = os.environ if environ is None else environ
    for name, value in THREAD_ENV.items():
        target.setdefault(name, value)
    return {name: target[name] for name in THREAD_ENV}


# "name==version" at the start of a line, or of a YAML list item ("  - name==version", environment.yml).
_PIN = re.compile(r"^(?:-\s+)?([A-Za-z0-9][A-Za-z0-9_.\-\[\],]*)==([^\s;#]+)")
_RELEASE = re.compile(r"\d+\.\d+\.\d+")


def normalized(package: str) -> str:
    """A package name as pip compares them (PEP 503): ``huggingface_hub`` and ``Huggingface-Hub`` are one."""
    return re.sub(r"[-_.]+", "-", package.split("[")[0].strip()).lower()


@cache
def pins(path: Path = REQUIREMENTS) -> dict[str, str]:
    """Every ``name==version`` line of a requirements file (or list item of ``environment.yml``), by normalized
    package name (extras dropped). A package pinned twice at two versions is an error."""
    found: dict[str, str] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1):
        match = _PIN.match(line.strip())
        if not match:
            continue
        name, version = normalized(match.group(1)), match.group(2)
        if found.get(name, version) != version:
            raise ValueError(
                f"{Path(path).name}, line {number}: {name} is pinned twice, at {found[name]} and {version}; "
                "keep one pin"
            )
        found[name] = version
    return found


def pinned(package: str = "transformers") -> str:
    """The pinned version of ``package``: ``pinned()`` gives transformers's, ``"X.Y.Z"``.

    Raises:
        KeyError: ``requirements.txt`` has no ``package==version`` line; add one (or fix the name).
    """
    try:
        return pins()[normalized(package)]
    except KeyError:
        raise KeyError(
            f"requirements.txt pins no {package!r} (no line '{package}==X.Y.Z'); add the pin there, "
            "it is the one place the course's releases are written"
        ) from None


def pinned_minor(package: str = "transformers") -> str:
    """The pinned release as the lessons name it in verdicts: ``"X.Y"`` for ``X.Y.Z``."""
    return minor(pinned(package))


def minor(version: str) -> str:
    """``"4.23"`` for ``"4.23.1"`` (or ``"4.23.1+cpu"``)."""
    return ".".join(version.split("+")[0].split(".")[:2])


def release_key(version: str) -> tuple[int, ...]:
    """A final release as a tuple to compare (``"5.9.0"`` < ``"5.10.0"``).

    Raises:
        ValueError: ``version`` is not a final release ``X.Y.Z`` (``"5.1"``, ``"5.1.0rc1"``, ``"latest"``).
    """
    if not _RELEASE.fullmatch(version):
        raise ValueError(f"{version!r} is not a final release X.Y.Z (for example 5.25.0)")
    return tuple(int(part) for part in version.split("."))
