"""Exercises of lesson 06 (callback control): callbacks that steer evaluation and saving, run in a real Trainer."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from helpers.checks.core import Exercise, Wrong
from helpers.checks.lesson_02 import tiny_trainer
from helpers.solutions import lesson_06 as solutions


def _callback_class(answer: Any, name: str) -> None:
    from transformers import TrainerCallback

    if not (inspect.isclass(answer) and issubclass(answer, TrainerCallback)):
        raise Wrong(
            f"{name} should be a class that subclasses TrainerCallback (pass the class, not an instance), "
            f"got {answer!r}."
        )


def _check_evaluate_at_steps(answer: Any) -> None:
    _callback_class(answer, "EvaluateAtSteps")
    trainer = tiny_trainer(
        {"per_device_train_batch_size": 8, "max_steps": 6, "eval_strategy": "no"}, callbacks=[answer()]
    )
    trainer.train()
    steps = [entry["step"] for entry in trainer.state.log_history if "eval_loss" in entry]
    if steps == [3, 6]:
        raise Wrong(
            "the evaluations came after steps 3 and 6: at on_step_begin, global_step still counts the steps "
            "already done. Raise the flag once the step is done."
        )
    if steps != [2, 5]:
        raise Wrong(
            f"the Trainer evaluated after steps {steps}, not [2, 5]. Raise control.should_evaluate in an event "
            "that fires at the end of every optimizer step; on_evaluate only fires during an evaluation."
        )


def _check_no_early_checkpoints(answer: Any) -> None:
    _callback_class(answer, "NoEarlyCheckpoints")
    trainer = tiny_trainer(
        {
            "per_device_train_batch_size": 8,
            "max_steps": 6,
            "save_strategy": "steps",
            "save_steps": 1,
            "save_only_model": True,
        },
        callbacks=[answer()],
    )
    trainer.train()
    written = sorted(int(path.name.split("-")[1]) for path in Path(trainer.args.output_dir).glob("checkpoint-*"))
    if written == [1, 2, 3, 4, 5, 6]:
        raise Wrong(
            "every step still wrote a checkpoint. If you lowered should_save in on_step_begin, "
            "DefaultFlowCallback raises it again at on_step_end, after your code ran."
        )
    if written != [4, 5, 6]:
        raise Wrong(
            f"checkpoints were written after steps {written}; keep those from step 4 on ([4, 5, 6]) and "
            "cancel only the earlier ones."
        )


q1 = Exercise(
    name="06.1",
    answer_name="EvaluateAtSteps",
    checker=_check_evaluate_at_steps,
    hint_text="In on_step_end, state.global_step already counts the step just done; set control.should_evaluate = True "
    "there when it is 2 or 5.",
    solution_obj=solutions.EvaluateAtSteps,
    wrong_answers=solutions.WRONG_EVALUATORS,
)

q2 = Exercise(
    name="06.2",
    answer_name="NoEarlyCheckpoints",
    checker=_check_no_early_checkpoints,
    hint_text="DefaultFlowCallback raises should_save at on_step_end; your callback runs after it there, so lower the "
    "flag in on_step_end while state.global_step < 4.",
    solution_obj=solutions.NoEarlyCheckpoints,
    wrong_answers=solutions.WRONG_SAVERS,
)
