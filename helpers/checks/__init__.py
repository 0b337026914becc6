"""Automatic checks for the exercises at the end of each lesson.

Each lesson has a module ``helpers.checks.lesson_NN`` that defines its exercises (``q1``, ``q2``, ...), each an
:class:`~helpers.checks.core.Exercise` with ``check()``, ``hint()`` and ``solution()``. The reference solutions
live in ``helpers.solutions.lesson_NN``, out of the learner's sight until they call ``solution()``.
"""

from helpers.checks.core import NOT_ATTEMPTED, PASSED, WRONG, Exercise, NotAttempted, Verdict, Wrong, is_stub

__all__ = ["Exercise", "Verdict", "Wrong", "NotAttempted", "is_stub", "PASSED", "WRONG", "NOT_ATTEMPTED"]
