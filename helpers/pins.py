"""The releases the course is pinned to, read from ``requirements.txt``: one fact, one place.

The pinned transformers release (and torch, trl, peft, ...) is written once, in ``requirements.txt``
(``constraints.txt`` and ``environment.yml`` repeat it because pip and conda need it there;
``tests/test_pins.py`` holds them equal). Everything else that names a release asks this module. It imports only
the standard library, so tools and tests that run before ``.venv`` exists can read it too.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS = ROOT / "requirements.txt"
_PIN = re.compile(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s;#]+)")


@cache
def pins(path: Path = REQUIREMENTS) -> dict[str, str]:
    """Every ``name==version`` line of a requirements file, by lower-case package name (extras dropped)."""
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = _PIN.match(line.strip())
        if match:
            found[match.group(1).split("[")[0].lower()] = match.group(2)
    return found


def pinned(package: str = "transformers") -> str:
    """The pinned version of ``package``, for example ``pinned()`` gives ``"5.24.0"``.

    Raises:
        KeyError: ``requirements.txt`` has no ``package==version`` line; add one (or fix the name).
    """
    try:
        return pins()[package.lower()]
    except KeyError:
        raise KeyError(
            f"requirements.txt pins no {package!r} (no line '{package}==X.Y.Z'); add the pin there, "
            "it is the one place the course's releases are written"
        ) from None


def pinned_minor(package: str = "transformers") -> str:
    """The pinned release as the lessons name it in verdicts: ``"5.24"`` for ``5.24.0``."""
    return ".".join(pinned(package).split(".")[:2])
