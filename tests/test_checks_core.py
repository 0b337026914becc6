"""The exercise machinery reports passed, wrong (with a message) or not attempted, and never raises."""

from __future__ import annotations

import sys

from helpers.checks import NOT_ATTEMPTED, PASSED, WRONG, Exercise, Wrong


def _double_checker(answer):
    if answer(3) != 6 or answer(-1) != -2:
        raise Wrong("double(x) should return 2 * x; try it on 3 and on -1.")


EXERCISE = Exercise("99.1", "double", _double_checker, "multiply by two", lambda x: 2 * x)


def test_three_outcomes() -> None:
    assert EXERCISE.evaluate(lambda x: 2 * x).status == PASSED
    assert EXERCISE.evaluate(None).status == NOT_ATTEMPTED
    assert EXERCISE.evaluate(lambda x: x + 3).status == WRONG  # right on 3, wrong on -1: no constant passes


def test_learner_exceptions_become_wrong_with_the_error_named() -> None:
    verdict = EXERCISE.evaluate(lambda x: x / "2")
    assert verdict.status == WRONG and "TypeError" in verdict.message


def test_not_implemented_is_not_attempted() -> None:
    def stub(x):
        raise NotImplementedError

    assert EXERCISE.evaluate(stub).status == NOT_ATTEMPTED


def test_check_reads_the_notebook_variable(monkeypatch) -> None:
    monkeypatch.setattr(sys.modules["__main__"], "double", lambda x: 2 * x, raising=False)
    assert EXERCISE.check().status == PASSED
