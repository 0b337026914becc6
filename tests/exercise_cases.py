"""Shared by the tests/test_answers_lesson_NN.py files: each lists, per exercise of its lesson, answers written
the way learners write them (CORRECT must pass, MISTAKES must fail with the hint that names the mistake)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

from helpers.checks import PASSED, WRONG


def exercise(name: str) -> Any:
    """The exercise ``"NN.k"``: ``helpers.checks.lesson_NN.qk``."""
    lesson, number = name.split(".")
    return getattr(importlib.import_module(f"helpers.checks.lesson_{lesson}"), f"q{int(number)}")


def answer_tests(
    correct: dict[str, list[Any]], mistakes: dict[str, list[tuple[Any, str]]]
) -> tuple[Callable[..., None], Callable[..., None]]:
    """The two parametrised tests of a lesson's answers."""
    cases = [(name, answer) for name, answers in correct.items() for answer in answers]
    wrong = [(name, answer, hint) for name, pairs in mistakes.items() for answer, hint in pairs]

    @pytest.mark.parametrize("name, answer", cases, ids=[f"{n}-{i}" for i, (n, _) in enumerate(cases)])
    def passes(name: str, answer: Any) -> None:
        verdict = exercise(name).evaluate(answer)
        assert verdict.status == PASSED, verdict

    @pytest.mark.parametrize("name, answer, hint", wrong, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(wrong)])
    def fails(name: str, answer: Any, hint: str) -> None:
        verdict = exercise(name).evaluate(answer)
        assert verdict.status == WRONG and hint in verdict.message, verdict

    return passes, fails
