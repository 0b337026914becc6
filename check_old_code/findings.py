"""What the checker reports: a :class:`Finding`, the :class:`Report` of a run, the error for bad input, and the
lesson that teaches each kind of finding (read from ``lessons.toml``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from course_facts.registry import lessons

MARKER = "check-old-code: expected"


# Which lesson teaches each kind of finding: (where to look in lessons.toml, the text to find there).
KIND_LESSONS = {
    "renamed-argument": ("pitfall", "renamed or removed"),
    "removed-argument": ("pitfall", "renamed or removed"),
    "unknown-argument": ("pitfall", "renamed or removed"),
    "removed-field": ("pitfall", "renamed or removed"),
    "removed-attribute": ("pitfall", "renamed or removed"),
    "removed-value": ("pitfall", "renamed or removed"),
    "changed-value": ("pitfall", "renamed or removed"),
    "trainer-tokenizer": ("pitfall", "processing_class"),
    "tokenizer-attribute": ("pitfall", "processing_class"),
    "callback-tokenizer": ("pitfall", "processing_class"),
    "trainer-argument": ("goal", "every constructor argument"),
    "trainer-positional": ("goal", "every constructor argument"),
    "trl-argument": ("title", "Reading real subclasses"),
    "compute-loss-signature": ("pitfall", "`compute_loss` override"),
    "training-step-signature": ("pitfall", "`training_step` override"),
    "method-signature": ("title", "other methods to override"),
    "call-signature": ("title", "other methods to override"),
    "missing-method": ("title", "other methods to override"),
    "removed-method": ("title", "other methods to override"),
    "uncalled-method": ("title", "other methods to override"),
    "method-return": ("title", "other methods to override"),
    "not-an-event": ("pitfall", "misspelt event"),
    "removed-import": ("title", "Start here"),
}


class CheckOldCodeError(ValueError):
    """A path that does not exist or a file that cannot be read; the message says which and what to do."""


@dataclass(frozen=True)
class Finding:
    """One thing the installed transformers will refuse or ignore.

    Attributes:
        path: the file, as given (or found under a given folder).
        line: the line in the file, or in the notebook cell.
        kind: a short key (``renamed-argument``, ``compute-loss-signature``, ...).
        message: what is wrong, on the installed release.
        fix: what to write instead.
        lesson: the lesson (and section) that teaches it, from ``lessons.toml``.
        cell: for a notebook, the cell's number (1-based, counting every cell); ``None`` for a Python file.
    """

    path: str
    line: int
    kind: str
    message: str
    fix: str
    lesson: str
    cell: int | None = None

    @property
    def location(self) -> str:
        """``path:line``, or ``path cell N:line`` in a notebook."""
        return f"{self.path}:{self.line}" if self.cell is None else f"{self.path} cell {self.cell}:{self.line}"

    def format(self) -> str:
        """The finding as the command line prints it: where, what, the fix and the lesson."""
        return f"{self.location}: {self.message}\n    fix: {self.fix}\n    taught in: {self.lesson}"


@dataclass
class Report:
    """What :func:`check_paths` found: the findings, the ones left out on purpose (expected errors), the files read,
    the notebook cells skipped (not Python) and the paths that could not be read (``errors``, one message each)."""

    findings: list[Finding] = field(default_factory=list)
    expected: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped_cells: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    @property
    def exit_status(self) -> int:
        """2 when a path could not be read, else 1 when something was found, else 0."""
        return 2 if self.errors else 1 if self.findings else 0


def lesson_for(kind: str) -> str:
    """The lesson (and section) of ``lessons.toml`` that teaches a kind of finding."""
    return _lesson_for(kind)


@cache
def _lesson_for(kind: str) -> str:
    """The lesson of a kind of finding, looked up in ``lessons.toml`` once per kind."""
    place, needle = KIND_LESSONS[kind]
    for entry in lessons():
        if place == "pitfall":
            for pitfall in entry.pitfalls:
                if needle in pitfall.text:
                    return f"lesson {entry.number}, section {pitfall.section}"
        elif place == "goal" and any(needle in goal for goal in entry.goals):
            return f"lesson {entry.number} ({entry.title})"
        elif place == "title" and needle in entry.title:
            return f"lesson {entry.number} ({entry.title})"
    raise LookupError(f"lessons.toml has no {place} that mentions {needle!r} (for {kind} findings).")
