"""The exercise machinery: passed, wrong (with the step and the error named), not attempted (the stub only), and
check failed (a bug in the check, never blamed on the learner); check() shows the verdict once and returns None."""

from __future__ import annotations

import sys

import pytest

from exercises.checks import CHECK_FAILED, NOT_ATTEMPTED, PASSED, WRONG, Exercise, Wrong, learner_code


def _double_checker(answer):
    with learner_code("calling double(3) and double(-1)"):
        results = answer(3), answer(-1)
    if results != (6, -2):
        raise Wrong("double(x) should return 2 * x; try it on 3 and on -1.")


EXERCISE = Exercise("double", _double_checker, "multiply by two", lambda x: 2 * x, name="99.1")


def test_three_outcomes() -> None:
    assert EXERCISE.evaluate(lambda x: 2 * x).status == PASSED
    assert EXERCISE.evaluate(None).status == NOT_ATTEMPTED
    assert EXERCISE.evaluate(lambda x: x + 3).status == WRONG  # right on 3, wrong on -1: no constant passes


def test_learner_exceptions_name_the_step_and_the_error() -> None:
    verdict = EXERCISE.evaluate(lambda x: x / "2")
    assert verdict.status == WRONG
    assert "TypeError" in verdict.message and "calling double(3)" in verdict.message


def test_a_not_implemented_error_is_wrong_not_a_stub() -> None:
    def unfinished(x):
        raise NotImplementedError("You must implement a `state` function")

    verdict = EXERCISE.evaluate(unfinished)
    assert verdict.status == WRONG and "implement a `state`" in verdict.message and "library" in verdict.message


def test_the_notebook_stub_is_recognised_by_itself() -> None:
    def stub(x):
        return 0

    exercise = Exercise("double", _double_checker, "multiply by two", lambda x: 2 * x, stub=stub, name="99.2")
    assert exercise.evaluate(stub).status == NOT_ATTEMPTED
    assert exercise.evaluate(lambda x: 0).status == WRONG


def test_an_error_of_the_check_itself_is_reported_as_the_checks_bug() -> None:
    def broken_checker(answer):
        with learner_code("calling your function"):
            answer(1)
        return {}["missing"]  # the check's own bug

    verdict = Exercise("f", broken_checker, "", None, name="99.3").evaluate(lambda x: x)
    assert verdict.status == CHECK_FAILED
    assert "bug in the check, not in your answer" in verdict.message and "KeyError" in verdict.message
    assert "your code raised" not in verdict.message


@pytest.mark.parametrize("answer, shown", [(lambda x: 2 * x, "✔ Correct"), (None, "Not attempted")])
def test_check_prints_once_and_returns_none(monkeypatch, capsys, answer, shown) -> None:
    monkeypatch.setattr(sys.modules["__main__"], "double", answer, raising=False)
    assert EXERCISE.check() is None
    printed = capsys.readouterr().out
    assert printed.count(shown) == 1 and "Verdict(status=" not in printed


def test_a_wrong_callback_verdict_names_its_misspelled_events() -> None:
    from transformers import TrainerCallback

    from exercises.checks.lesson_05 import misspelled_events_note

    class Typo(TrainerCallback):
        def on_evaluated(self, args, state, control, **kwargs):  # never called: the event is on_evaluate
            control.should_training_stop = True

    class OwnHelper(TrainerCallback):
        def on_target_reached_log_it(self):  # an on_* helper of its own, close to no event
            return None

    def always_wrong(answer):
        raise Wrong("training should have stopped after update 3.")

    exercise = Exercise(
        "Stopper", always_wrong, "use on_evaluate", None, wrong_note=misspelled_events_note, name="99.2"
    )
    for answer in (Typo, Typo()):
        message = exercise.evaluate(answer).message
        assert message.startswith("training should") and "on_evaluated (did you mean on_evaluate?)" in message
    assert exercise.evaluate(OwnHelper).message == "training should have stopped after update 3."
    passing = Exercise("Stopper", lambda answer: None, "", None, name="99.3")
    assert passing.evaluate(Typo).status == PASSED  # the note is added to wrong verdicts only


def test_bind_exercises_names_each_exercise_after_its_module_and_variable() -> None:
    from exercises.checks.core import bind_exercises

    first, second = (Exercise("a", _double_checker, "", None) for _ in range(2))
    assert bind_exercises({"__name__": "exercises.checks.lesson_21", "q1": first, "q2": second}) == [first, second]
    assert (first.name, second.name) == ("21.1", "21.2")
    with pytest.raises(ValueError, match="without a gap"):
        bind_exercises({"__name__": "exercises.checks.lesson_21", "q1": first, "q3": second})
    with pytest.raises(ValueError, match="lesson_NN"):
        bind_exercises({"__name__": "exercises.checks.core", "q1": first})
    with pytest.raises(ValueError, match="not an Exercise"):
        bind_exercises({"__name__": "exercises.checks.lesson_21", "q1": "first"})


def test_a_hang_names_the_learners_call_not_the_course_helper_it_went_through():
    """A learner who calls lesson 07's RunningMeans.pop_means on process zero only hangs in all_reduce; the
    message names their own line, and the course helper only as the way the call went."""
    import os

    import helpers
    from exercises.checks.processes import waiting_in_collective

    course = os.path.dirname(helpers.__file__)
    stack = "\n".join(
        [
            'File "/venv/lib/python3.11/site-packages/torch/distributed/distributed_c10d.py", line 2800 in all_reduce',
            'File "/venv/lib/python3.11/site-packages/accelerate/utils/operations.py", line 700 in reduce',
            'File "/venv/lib/python3.11/site-packages/accelerate/accelerator.py", line 2900 in reduce',
            f'File "{course}/lessons/lesson_07.py", line 181 in pop_means',
            'File "/home/me/my_notebook.py", line 12 in log',
            'File "/venv/lib/python3.11/site-packages/transformers/trainer.py", line 1900 in _maybe_log_save_evaluate',
        ]
    )
    where = waiting_in_collective(stack)
    assert where == "all_reduce (through pop_means, lesson_07.py:181, called from log, my_notebook.py:12)", where


def test_a_check_runs_on_one_torch_thread_and_puts_the_kernels_count_back() -> None:
    """The checks' models are 32 wide: on two threads each operation waits at a barrier for the other thread, which
    on a busy 2-core machine made first checks take 16 to 42 s; one thread, then the kernel's count back."""
    import torch

    seen = []
    exercise = Exercise("x", lambda answer: seen.append(torch.get_num_threads()), "", None, name="99.2")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert exercise.evaluate(1).status == PASSED
        assert seen == [1] and torch.get_num_threads() == 2
        exercise.one_thread = False  # the capstone's project trains on the kernel's threads
        exercise.evaluate(1)
        assert seen == [1, 2]
    finally:
        torch.set_num_threads(before)
