"""Every exercise of every lesson: the solution passes, the untouched stub is 'not attempted', and each
exercise is named after its module and variable. Exercises are discovered, so a new lesson is covered; the
realistic wrong answers are tried in tests/lesson_NN/test_answers.py."""

from __future__ import annotations

import ast
import importlib
import pkgutil
import re

import pytest

import exercises.checks
from exercises.checks import NOT_ATTEMPTED, PASSED, Exercise
from exercises.checks.core import solution_source


def all_exercises() -> list[Exercise]:
    found = []
    for info in pkgutil.iter_modules(exercises.checks.__path__):
        if info.name.startswith("lesson_"):
            module = importlib.import_module(f"exercises.checks.{info.name}")
            found += [value for value in vars(module).values() if isinstance(value, Exercise)]
    return sorted(found, key=lambda exercise: exercise.name)


EXERCISES = all_exercises()
IDS = [exercise.name for exercise in EXERCISES]


def test_every_exercise_is_named_after_its_lesson_module_and_variable() -> None:
    for info in pkgutil.iter_modules(exercises.checks.__path__):
        if info.name.startswith("lesson_"):
            module = importlib.import_module(f"exercises.checks.{info.name}")
            for key, value in vars(module).items():
                if isinstance(value, Exercise):
                    assert value.name == f"{info.name[-2:]}.{key[1:]}", (info.name, key, value.name)


def test_every_lesson_has_two_to_four_exercises() -> None:
    per_lesson: dict[str, int] = {}
    for exercise in EXERCISES:
        per_lesson[exercise.name.split(".")[0]] = per_lesson.get(exercise.name.split(".")[0], 0) + 1
    assert per_lesson, "no exercises found under exercises/checks/lesson_*.py"
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


# A function of a check that models how a library calls the learner's answer (not what the lesson asks of it) is
# left out of the count, by name, here: kept in the lesson's check module, where a reader of the check looks, and
# not moved to a module of its own only to stay out of this count (issue 56: one lesson, at most 5 places).
LIBRARY_CALLS = {"18": "rewards_as_grpo_receives"}  # how trl's GRPOTrainer calls a reward function


@pytest.mark.parametrize("lesson", sorted({exercise.name.split(".")[0] for exercise in EXERCISES}))
def test_checks_and_solutions_are_not_longer_than_the_lessons_code(lesson: str) -> None:
    import importlib
    import inspect
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    (notebook,) = root.glob(f"notebooks/{lesson}_*.ipynb")
    cells = json.loads(notebook.read_text())["cells"]
    lesson_code = sum(_non_blank_lines("".join(cell["source"])) for cell in cells if cell["cell_type"] == "code")
    exercise_code = sum(
        _non_blank_lines((root / f"exercises/{part}/lesson_{lesson}.py").read_text())
        for part in ("checks", "solutions")
    )
    if lesson in LIBRARY_CALLS:
        check = importlib.import_module(f"exercises.checks.lesson_{lesson}")
        exercise_code -= _non_blank_lines(inspect.getsource(getattr(check, LIBRARY_CALLS[lesson])))
    assert exercise_code <= lesson_code, (
        f"lesson {lesson}: {exercise_code} lines of checks and solutions, {lesson_code} of notebook code"
    )


CODE_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|\S")
SHARED_TOKENS = 5  # a run of 5 tokens of the solution's code (`control.should_evaluate = True`) is code, not an idea


def _code_tokens(text: str) -> list[str]:
    return CODE_TOKEN.findall(text.replace('"', "'"))


def _solution_code(solution: object) -> str:
    """The solution's source as `solution()` prints it, without docstrings (comments go with ast.unparse)."""
    source = solution_source(solution)
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a value's repr
        return source
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            if isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def _shared_code(solution: object, hint_text: str) -> list[str]:
    """The runs of SHARED_TOKENS tokens of the solution's code that the hint holds too."""
    code, hint = _code_tokens(_solution_code(solution)), _code_tokens(hint_text)
    runs = {tuple(code[i : i + SHARED_TOKENS]) for i in range(len(code) - SHARED_TOKENS + 1)}
    return [
        " ".join(run)
        for i in range(len(hint) - SHARED_TOKENS + 1)
        if (run := tuple(hint[i : i + SHARED_TOKENS])) in runs
    ]


@pytest.mark.parametrize("exercise", EXERCISES, ids=IDS)
def test_no_hint_holds_its_solutions_code(exercise: Exercise) -> None:
    shared = _shared_code(exercise.solution_obj, exercise.hint_text)
    assert not shared, (
        f"{exercise.name}: the hint holds the solution's code {shared}; a hint names the mistake and the idea to use, "
        "solution() shows the code"
    )


def test_the_hint_check_finds_code_copied_from_a_solution() -> None:
    from exercises.solutions import lesson_05

    copied = "append (state.global_step, metrics['eval_loss']) in on_evaluate"  # the old hint of 05.1
    assert _shared_code(lesson_05.EvalLossHistory, copied)
