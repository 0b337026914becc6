"""Print a pinned release, or the course's offline or thread settings: ``python -m tools.pins [PACKAGE] [--minor]``.

The facts are :mod:`course_facts.pins`'s (read from ``requirements.txt``); this is the command that the Makefile
and the shell scripts run. Standard library only, like the facts, so any Python 3 runs it before ``.venv`` exists::

    python -m tools.pins                 # the pinned transformers, X.Y.Z
    python -m tools.pins torch --minor   # the pinned torch, X.Y
    python -m tools.pins --offline       # HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 ... (for `env` and make)
    python -m tools.pins --threads       # OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 (make test, make notebooks)
"""

from __future__ import annotations

import argparse
import sys

from course_facts.pins import OFFLINE_ENV, THREAD_ENV, pinned, pinned_minor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Print a pinned release, or the course's offline settings.")
    parser.add_argument("package", nargs="?", default="transformers", help="the package (default: transformers)")
    parser.add_argument("--minor", action="store_true", help="print X.Y, as the lessons' verdicts name it")
    parser.add_argument("--offline", action="store_true", help="print the offline settings as NAME=VALUE words")
    parser.add_argument("--threads", action="store_true", help="print the one-thread settings as NAME=VALUE words")
    args = parser.parse_args(argv)
    if args.offline or args.threads:
        print(" ".join(f"{name}={value}" for name, value in (OFFLINE_ENV if args.offline else THREAD_ENV).items()))
        return 0
    try:
        print(pinned_minor(args.package) if args.minor else pinned(args.package))
    except KeyError as error:
        print(f"tools.pins: {error.args[0]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
