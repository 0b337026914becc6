"""Exercises of lesson 05 (callback events): a callback run inside a real Trainer, and event counts."""

from __future__ import annotations

import inspect
from typing import Any

from helpers.checks.core import Exercise, Wrong
from helpers.checks.lesson_02 import tiny_trainer
from helpers.solutions import lesson_05 as solutions

TRAIN_EXAMPLES = 64  # what tiny_trainer trains on


def _check_eval_loss_history(answer: Any) -> None:
    from transformers import TrainerCallback

    if not (inspect.isclass(answer) and issubclass(answer, TrainerCallback)):
        raise Wrong(f"EvalLossHistory should be a class that subclasses TrainerCallback, got {answer!r}.")
    for eval_steps in (2, 3):
        callback = answer()
        trainer = tiny_trainer(
            {
                "per_device_train_batch_size": 8,
                "max_steps": 6,
                "eval_strategy": "steps",
                "eval_steps": eval_steps,
                "logging_strategy": "steps",
                "logging_steps": 1,
            },
            callbacks=[callback],
        )
        trainer.train()
        expected = [(entry["step"], entry["eval_loss"]) for entry in trainer.state.log_history if "eval_loss" in entry]
        history = getattr(callback, "history", None)
        if not isinstance(history, list):
            raise Wrong("each instance needs a list attribute `history` (create it in __init__).")
        if len(history) > len(expected):
            raise Wrong(
                f"history has {len(history)} entries for {len(expected)} evaluations: record only evaluations "
                "(on_evaluate), not every log, and give each instance its own list (in __init__)."
            )
        if len(history) < len(expected):
            raise Wrong(
                f"history has {len(history)} entries for {len(expected)} evaluations; which event fires once "
                "per evaluation?"
            )
        for (step, loss), (true_step, true_loss) in zip(history, expected):
            if step != true_step:
                raise Wrong(
                    f"you recorded step {step} for the evaluation at global_step {true_step}; "
                    "use state.global_step as it is."
                )
            if not isinstance(loss, float) or abs(loss - true_loss) > 1e-6:
                raise Wrong(
                    f"at step {step} you recorded {loss!r}, the evaluation gave eval_loss={true_loss:.4f}; "
                    "read it from the metrics kwarg."
                )


def _check_expected_counts(answer: Any) -> None:
    from helpers.callbacks import EventRecorder

    if not callable(answer):
        raise Wrong(f"expected_counts should be a function, got {type(answer).__name__}.")
    for batch_size, accumulation, epochs in ((8, 2, 1), (12, 2, 2)):
        recorder = EventRecorder()
        trainer = tiny_trainer(
            {
                "per_device_train_batch_size": batch_size,
                "gradient_accumulation_steps": accumulation,
                "num_train_epochs": epochs,
            },
            callbacks=[recorder],
        )
        trainer.train()
        counts = recorder.counts()
        measured = {event: counts[event] for event in ("on_step_end", "on_substep_end", "on_epoch_end")}
        given = answer(TRAIN_EXAMPLES, batch_size, accumulation, epochs)
        if not isinstance(given, dict):
            raise Wrong(f"expected_counts should return a dict, got {type(given).__name__}.")
        wrong = {event: (given.get(event), true) for event, true in measured.items() if given.get(event) != true}
        if wrong:
            details = ", ".join(
                f"{event}: you said {said}, the run fired it {true} times" for event, (said, true) in wrong.items()
            )
            raise Wrong(
                f"{TRAIN_EXAMPLES} examples, batch {batch_size}, accumulation {accumulation}, "
                f"{epochs} epoch(s): {details}. A smaller last batch still counts, and a step can be short."
            )


q1 = Exercise(
    name="05.1",
    answer_name="EvalLossHistory",
    checker=_check_eval_loss_history,
    hint_text="Subclass TrainerCallback, create self.history = [] in __init__, and append "
    "(state.global_step, metrics['eval_loss']) in on_evaluate(self, args, state, control, metrics=None, **kwargs).",
    solution_obj=solutions.EvalLossHistory,
    wrong_answers=solutions.WRONG_CALLBACKS,
)

q2 = Exercise(
    name="05.2",
    answer_name="expected_counts",
    checker=_check_expected_counts,
    hint_text="batches = ceil(examples / batch); steps per epoch = ceil(batches / accumulation); every batch that "
    "does not end a step ends with on_substep_end.",
    solution_obj=solutions.expected_counts,
    wrong_answers=solutions.WRONG_COUNTS,
)
