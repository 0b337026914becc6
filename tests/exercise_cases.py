"""Shared by the tests/lesson_NN/test_answers.py files: each lists, per exercise of its lesson (keyed by the
exercise's variable, ``"q1"``), answers written the way learners write them: ``CORRECT`` must pass, ``MISTAKES``
must fail with the part of the hint that names the mistake. ``MISTAKES`` is the course's one list of realistic
wrong answers; the lesson is the test file's own number, so no file types an exercise id."""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from typing import Any

import pytest

from exercises.checks import PASSED, WRONG


def exercise(lesson: str, key: str) -> Any:
    """The exercise ``key`` (``"q1"``) of lesson ``lesson`` (``"05"``): ``exercises.checks.lesson_05.q1``."""
    return getattr(importlib.import_module(f"exercises.checks.lesson_{lesson}"), key)


def lesson_of(module_name: str) -> str:
    """``"05"`` for ``lesson_05.test_answers``; a clear error for any other module."""
    found = re.fullmatch(r"(?:.*\.)?lesson_(\d\d)\.test_answers", module_name)
    if found is None:
        raise ValueError(f"answer_tests() belongs in a file tests/lesson_NN/test_answers.py, not {module_name!r}.")
    return found.group(1)


def answer_tests(
    correct: dict[str, list[Any]], mistakes: dict[str, list[tuple[Any, str]]]
) -> tuple[Callable[..., None], Callable[..., None]]:
    """The two parametrised tests of a lesson's answers, for the lesson of the calling test file."""
    caller = inspect.currentframe().f_back  # type: ignore[union-attr]
    lesson = lesson_of(caller.f_globals["__name__"])  # type: ignore[union-attr]
    cases = [(key, answer) for key, answers in correct.items() for answer in answers]
    wrong = [(key, answer, hint) for key, pairs in mistakes.items() for answer, hint in pairs]

    @pytest.mark.parametrize("key, answer", cases, ids=[f"{k}-{i}" for i, (k, _) in enumerate(cases)])
    def passes(key: str, answer: Any) -> None:
        verdict = exercise(lesson, key).evaluate(answer)
        assert verdict.status == PASSED, verdict

    @pytest.mark.parametrize("key, answer, hint", wrong, ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(wrong)])
    def fails(key: str, answer: Any, hint: str) -> None:
        verdict = exercise(lesson, key).evaluate(answer)
        assert verdict.status == WRONG and hint in verdict.message, verdict

    return passes, fails
