"""Find Trainer code that the installed transformers no longer runs: ``python -m check_old_code PATH...``.

The command line: prints each finding, a summary line, and exits 1 when something was found, 0 when nothing
was, 2 when a path could not be read.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .checker import check_paths
from .installed import installed_version


def main(argv: Sequence[str] | None = None) -> int:
    """Run the checker on the paths in ``argv`` (default: the command line), print the findings; the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] in ("-h", "--help"):
        print(__doc__.strip().split("\n\n")[0])
        print("usage: python -m check_old_code PATH [PATH...]   (Python files, notebooks or folders)")
        return 0 if arguments else 2
    report = check_paths(arguments)
    for finding in report.findings:
        print(finding.format())
    for skipped in report.skipped_cells:
        print(f"note: skipped {skipped} (not Python)", file=sys.stderr)
    for error in report.errors:
        print(f"check_old_code: {error}", file=sys.stderr)
    expected = (
        f"; {len(report.expected)} expected (in a try that catches the error, or marked)" if report.expected else ""
    )
    unread = f"; {len(report.errors)} path(s) could not be read (see above)" if report.errors else ""
    print(
        f"{len(report.findings)} finding(s) in {len(report.files)} file(s) for transformers {installed_version()}"
        f"{expected}{unread}."
    )
    return report.exit_status
