"""What the old-code checker finds in a piece of source, as sorted ``(line, kind)`` pairs: the form the
tests/test_check_old_code_*.py modules compare."""

from __future__ import annotations

from check_old_code import check_source


def kinds(source: str) -> list[tuple[int, str]]:
    """``(line, kind)`` of each finding of ``source``, sorted."""
    return sorted((finding.line, finding.kind) for finding in check_source(source))
