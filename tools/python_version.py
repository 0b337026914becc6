"""Before ``make venv`` creates ``.venv``: is the Python that would make it one the course is tested on?

Usage: PYTHON -m tools.python_version [--allow-untested] [--name NAME]    (the Makefile runs it with ``$(PYTHON)``)

Exit 0 for Python 3.11 (what ``make test`` and CI run). For another version it prints what was found and how to
get 3.11 (Linux, macOS, Windows with WSL) and exits 1, so that no ``.venv`` is made with it. ``--allow-untested``
(``make lab UNTESTED_PYTHON=1``) lets a newer Python go on, saying that it is untested; an older one never does
(the course's ``helpers`` package needs 3.11: ``requires-python`` in pyproject.toml).

This file runs under whatever ``python3`` a learner has, so it uses no syntax or module newer than Python 3.6.
"""

import sys

TESTED = (3, 11)
OLDEST = (3, 11)  # pyproject.toml: requires-python = ">=3.11"


def how_to_get_tested() -> str:
    """How to install the tested Python and hand it to make, on each system."""
    wanted = ".".join(map(str, TESTED))
    return "\n".join(
        [
            f"Install Python {wanted}, then name it: make lab PYTHON=python{wanted}",
            f"  Debian, Ubuntu 22.04: sudo apt install python{wanted} python{wanted}-venv (Ubuntu 24.04: add the "
            "deadsnakes PPA first: sudo add-apt-repository ppa:deadsnakes/ppa)",
            f"  any Linux or macOS: uv python install {wanted}, then make lab PYTHON=$(uv python find {wanted}); "
            f"or pyenv install {wanted}",
            f"  macOS: brew install python@{wanted} (Homebrew), or the installer from python.org",
            "  Windows: in WSL 2 (wsl --install gives Ubuntu), as on Linux",
        ]
    )


def problem(version: tuple, executable: str, allow_untested: bool = False) -> str:
    """What is wrong with making ``.venv`` with this Python (``version`` as in ``sys.version_info``); empty when
    nothing is."""
    found = ".".join(str(part) for part in version[:3])
    tested = ".".join(map(str, TESTED))
    if tuple(version[:2]) == TESTED:
        return ""
    if tuple(version[:2]) < OLDEST:
        return (
            f"make: {executable} is Python {found}; the course needs Python {tested} (the version it is tested on), "
            f"so .venv was not created.\n{how_to_get_tested()}"
        )
    if allow_untested:
        return ""
    return (
        f"make: {executable} is Python {found}; the course is tested on Python {tested} only (Colab runs 3.12 with "
        f"its own packages), so .venv was not created.\n{how_to_get_tested()}\n"
        f"Or try Python {found} anyway (untested: a pinned package may have no wheel for it): "
        "make lab UNTESTED_PYTHON=1"
    )


def main(argv: list) -> int:
    name = argv[argv.index("--name") + 1] if "--name" in argv[:-1] else sys.executable
    message = problem(tuple(sys.version_info), name, "--allow-untested" in argv)
    if message:
        sys.stderr.write(message + "\n")
        return 1
    if tuple(sys.version_info[:2]) != TESTED:
        print(f"make: Python {sys.version_info[0]}.{sys.version_info[1]} is untested (UNTESTED_PYTHON=1); going on.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
