"""Every exercise of lessons 01 to 11 has, in tests/test_answers_lesson_NN.py, at least two correct answers written
differently from the solution and two realistic mistakes (the capstone's are in tests/test_capstone.py)."""

from __future__ import annotations

import importlib

from helpers.registry import lessons


def test_every_exercise_has_two_alternatives_and_two_mistakes() -> None:
    for lesson in lessons():
        if lesson.number in ("00", "12"):
            continue
        checks = importlib.import_module(f"helpers.checks.lesson_{lesson.number}")
        names = {f"{lesson.number}.{k}" for k in range(1, 6) if hasattr(checks, f"q{k}")}
        answers = importlib.import_module(f"test_answers_lesson_{lesson.number}")
        assert names == set(answers.CORRECT) == set(answers.MISTAKES), lesson.number
        assert all(len(answers.CORRECT[n]) >= 2 and len(answers.MISTAKES[n]) >= 2 for n in names), lesson.number
