"""Every exercise of every lesson: the solution passes, the untouched stub is 'not attempted', and each
exercise is named after its module and variable. Exercises are discovered, so a new lesson is covered; the
realistic wrong answers are tried in tests/test_answers_lesson_NN.py."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import helpers.checks
from helpers.checks import NOT_ATTEMPTED, PASSED, Exercise


def all_exercises() -> list[Exercise]:
    found = []
    for info in pkgutil.iter_modules(helpers.checks.__path__):
        if info.name.startswith("lesson_"):
            module = importlib.import_module(f"helpers.checks.{info.name}")
            found += [value for value in vars(module).values() if isinstance(value, Exercise)]
    return sorted(found, key=lambda exercise: exercise.name)


EXERCISES = all_exercises()
IDS = [exercise.name for exercise in EXERCISES]


def test_every_exercise_is_named_after_its_lesson_module_and_variable() -> None:
    for info in pkgutil.iter_modules(helpers.checks.__path__):
        if info.name.startswith("lesson_"):
            module = importlib.import_module(f"helpers.checks.{info.name}")
            for key, value in vars(module).items():
                if isinstance(value, Exercise):
                    assert value.name == f"{info.name[-2:]}.{key[1:]}", (info.name, key, value.name)


def test_every_lesson_has_two_to_four_exercises() -> None:
    per_lesson: dict[str, int] = {}
    for exercise in EXERCISES:
        per_lesson[exercise.name.split(".")[0]] = per_lesson.get(exercise.name.split(".")[0], 0) + 1
    assert per_lesson, "no exercises found under helpers/checks/lesson_*.py"
    for lesson, count in per_lesson.items():
        assert 2 <= count <= 4, f"lesson {lesson} has {count} exercises; the course asks for 2 to 4"


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_solution_passes(exercise: Exercise) -> None:
    verdict = exercise.evaluate(exercise.solution_obj)
    assert verdict.status == PASSED, f"{exercise.name}: the reference solution did not pass: {verdict}"


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_stub_is_not_attempted(exercise: Exercise) -> None:
    verdict = exercise.evaluate(exercise.stub)
    assert verdict.status == NOT_ATTEMPTED, f"{exercise.name}: the stub gave {verdict}"


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_hint_and_solution_print(exercise: Exercise, capsys: pytest.CaptureFixture[str]) -> None:
    exercise.hint()
    exercise.solution()
    printed = capsys.readouterr().out
    assert exercise.hint_text in printed and "Solution" in printed


def _non_blank_lines(text: str) -> int:
    return sum(1 for line in text.splitlines() if line.strip())


@pytest.mark.parametrize("lesson", sorted({exercise.name.split(".")[0] for exercise in EXERCISES}))
def test_checks_and_solutions_are_not_longer_than_the_lessons_code(lesson: str) -> None:
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    (notebook,) = root.glob(f"notebooks/{lesson}_*.ipynb")
    cells = json.loads(notebook.read_text())["cells"]
    lesson_code = sum(_non_blank_lines("".join(cell["source"])) for cell in cells if cell["cell_type"] == "code")
    exercise_code = sum(
        _non_blank_lines((root / f"helpers/{part}/lesson_{lesson}.py").read_text()) for part in ("checks", "solutions")
    )
    assert exercise_code <= lesson_code, (
        f"lesson {lesson}: {exercise_code} lines of checks and solutions, {lesson_code} of notebook code"
    )
