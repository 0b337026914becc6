"""Exercises of lesson 06 (callback control): callbacks that steer evaluation and saving, run in a real Trainer."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from helpers.checks import fixtures
from helpers.checks.core import Exercise, Wrong, learner_code
from helpers.solutions import lesson_06 as solutions


def _callback(answer: Any, name: str, **arguments: Any) -> Any:
    from transformers import TrainerCallback

    if not (inspect.isclass(answer) and issubclass(answer, TrainerCallback)):
        raise Wrong(
            f"{name} should be a class that subclasses TrainerCallback (the class, not an instance), got {answer!r}."
        )
    call = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    with learner_code(f"creating {name}({call})", f"the check builds it as {name}({call})."):
        return answer(**arguments)


def _check_evaluate_at_steps(answer: Any) -> None:
    for wanted in ([2, 5], [1, 3, 4]):
        callback = _callback(answer, "EvaluateAtSteps", steps=wanted)
        settings = {"per_device_train_batch_size": 8, "max_steps": 6, "eval_strategy": "no", "save_strategy": "no"}
        trainer = fixtures.trainer(settings, eval_dataset=fixtures.random_ids(16, seed=1), callbacks=[callback])
        steps = [step for step, _ in fixtures.log_entries(fixtures.train(trainer), "eval_loss")]
        if steps == [step + 1 for step in wanted]:
            raise Wrong(
                f"asked for {wanted}, the evaluations came one step late, after {steps}: at on_step_begin, "
                "global_step still counts the steps already done. Raise the flag once the step is done."
            )
        if steps != wanted:
            raise Wrong(
                f"asked for steps {wanted}, the Trainer evaluated after steps {steps}. Raise "
                "control.should_evaluate in an event that fires at the end of every optimizer step, for the "
                "steps given to __init__; on_evaluate only fires during an evaluation."
            )


def _check_no_early_checkpoints(answer: Any) -> None:
    for first, save_steps, expected in ((4, 1, [4, 5, 6]), (5, 2, [6])):
        callback = _callback(answer, "NoEarlyCheckpoints", first=first)
        settings = {"per_device_train_batch_size": 8, "max_steps": 6, "save_steps": save_steps, "save_only_model": True}
        trainer = fixtures.train(fixtures.trainer(settings, callbacks=[callback]))
        written = sorted(int(path.name.split("-")[1]) for path in Path(trainer.args.output_dir).glob("checkpoint-*"))
        if written == list(range(save_steps, 7, save_steps)):
            raise Wrong(
                f"with first={first}, every checkpoint was still written ({written}). If you lowered should_save "
                "in on_step_begin, DefaultFlowCallback raises it again at on_step_end, after your code ran."
            )
        if written != expected:
            raise Wrong(
                f"with first={first} and save_steps={save_steps}, checkpoints were written after steps {written}, "
                f"not {expected}: cancel the checkpoints before global_step {first}, and add none the arguments "
                "did not ask for."
            )


q1 = Exercise(
    name="06.1",
    answer_name="EvaluateAtSteps",
    checker=_check_evaluate_at_steps,
    hint_text="Keep the steps in __init__; in on_step_end, state.global_step already counts the step just done: set "
    "control.should_evaluate = True there when it is one of them.",
    solution_obj=solutions.EvaluateAtSteps,
    wrong_answers=solutions.WRONG_EVALUATORS,
)

q2 = Exercise(
    name="06.2",
    answer_name="NoEarlyCheckpoints",
    checker=_check_no_early_checkpoints,
    hint_text="DefaultFlowCallback raises should_save at on_step_end; your callback runs after it there, so lower the "
    "flag in on_step_end while state.global_step < first (never raise it).",
    solution_obj=solutions.NoEarlyCheckpoints,
    wrong_answers=solutions.WRONG_SAVERS,
)
