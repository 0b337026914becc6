"""Every exercise of every lesson but the capstone (whose answers are in tests/test_capstone.py) has, in
tests/lesson_NN/test_answers.py, at least two correct answers written differently from the solution and two
realistic mistakes: the course's one list of wrong answers."""

from __future__ import annotations

import importlib

from course_facts.registry import lessons

CAPSTONE = "12"


def test_every_exercise_has_two_alternatives_and_two_mistakes() -> None:
    for lesson in lessons():
        checks = importlib.import_module(f"exercises.checks.lesson_{lesson.number}") if lesson.number != "00" else None
        keys = {key for key in vars(checks) if key[:1] == "q" and key[1:].isdigit()} if checks else set()
        if not keys or lesson.number == CAPSTONE:
            continue
        answers = importlib.import_module(f"lesson_{lesson.number}.test_answers")
        assert keys == set(answers.CORRECT) == set(answers.MISTAKES), lesson.number
        assert all(len(answers.CORRECT[k]) >= 2 and len(answers.MISTAKES[k]) >= 2 for k in keys), lesson.number
