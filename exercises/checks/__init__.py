"""Automatic checks for the exercises at the end of each lesson.

Each lesson has a module ``exercises.checks.lesson_NN`` that defines its exercises (``q1``, ``q2``, ...), each an
:class:`~exercises.checks.core.Exercise` with ``check()``, ``hint()`` and ``solution()``. The reference solutions
live in ``exercises.solutions.lesson_NN``, out of the learner's sight until they call ``solution()``. The small
models, datasets and Trainers the checks share live in :mod:`exercises.checks.fixtures`.
"""

from exercises.checks.core import (
    CHECK_FAILED,
    NOT_ATTEMPTED,
    PASSED,
    WRONG,
    Exercise,
    NotAttempted,
    Verdict,
    Wrong,
    is_stub,
    learner_code,
)

__all__ = [
    "Exercise",
    "Verdict",
    "Wrong",
    "NotAttempted",
    "is_stub",
    "learner_code",
    "PASSED",
    "WRONG",
    "NOT_ATTEMPTED",
    "CHECK_FAILED",
]
