"""The capstone's exercises (lesson 12). The task they score (data, model, score) is :mod:`helpers.capstone`.

* ``q1``: ``StopAtTargetF1``, a callback that stops training once the evaluated minority F1 reaches a target;
* ``q2``: ``make_capstone_trainer()``, the whole project: the check builds it from a seeded start, trains it and
  scores the model it keeps.
"""

from __future__ import annotations

from typing import Any

from helpers import capstone
from helpers.checks import fixtures
from helpers.checks.core import PASSED, Exercise, Verdict, Wrong, learner_code, validated_callback
from helpers.solutions import lesson_12 as solutions

# (the eval_f1 reported at evaluations 1, 2, ..., target, the update training should stop after)
STOP_CASES = (((0.2, 0.5, 0.7, 0.9), 0.6, 3), ((0.4, 0.5, 0.3, 0.8), 0.5, 2), ((0.1, 0.2, 0.3, 0.4), 0.9, 4))


def _check_stop_callback(callback_class: Any) -> None:
    from transformers import TrainerCallback

    if not isinstance(callback_class, type) or not issubclass(callback_class, TrainerCallback):
        raise Wrong("StopAtTargetF1 must be a class that inherits transformers.TrainerCallback.")
    for reported, target, expected in STOP_CASES:
        with learner_code(f"creating StopAtTargetF1(target={target})"):
            callback = callback_class(target=target)
        scores = iter(reported)
        trainer = fixtures.trainer(
            {},
            fixed={"max_steps": len(reported), "eval_strategy": "steps", "eval_steps": 1},
            eval_dataset=fixtures.random_ids(8),
            compute_metrics=lambda prediction, scores=scores: {"f1": next(scores)},
            callbacks=[validated_callback(callback)],
        )
        stopped = fixtures.train(trainer, "training with your callback").state.global_step
        if stopped != expected:
            raise Wrong(
                f"eval_f1 was {list(reported)} at updates 1 to {len(reported)}; with target={target} training "
                f"should stop after update {expected}, but it stopped after {stopped}. on_evaluate receives the "
                "metrics with the 'eval_' prefix (eval_f1); set control.should_training_stop = True once it is "
                ">= the target, and not before."
            )


q1 = Exercise(
    name="12.1",
    answer_name="StopAtTargetF1",
    checker=_check_stop_callback,
    hint_text=(
        "In on_evaluate(self, args, state, control, metrics=None, **kwargs), read metrics['eval_f1'] (the "
        "Trainer adds 'eval_' to every key) and set control.should_training_stop = True when it is >= self.target."
    ),
    solution_obj=solutions.StopAtTargetF1,
    wrong_answers=[solutions.StopAtTargetF1WithoutPrefix],
)

SEEDED = f"the check seeded Python, NumPy and torch with {capstone.SEED} before it called make_capstone_trainer()"


def _require_settings(trainer: Any, twin: Any) -> None:
    """The checks that need no training: what the function returns, and the settings that keep the best model."""
    from transformers import Trainer

    if not isinstance(trainer, Trainer) or trainer.state.global_step:
        raise Wrong(f"make_capstone_trainer() must return an untrained Trainer, got {type(trainer).__name__}.")
    if trainer.model is twin.model:
        raise Wrong(
            "two calls of make_capstone_trainer() returned the same model object, so each run trains it further: "
            "build it inside the function, best with model_init=capstone.model_init (the Trainer seeds it)."
        )
    if not trainer.args.load_best_model_at_end or trainer.args.metric_for_best_model not in ("f1", "eval_f1"):
        raise Wrong(
            "the model kept must be the one with the best minority-class F1: set load_best_model_at_end=True and "
            f"metric_for_best_model='f1' (yours: {trainer.args.load_best_model_at_end}, "
            f"{trainer.args.metric_for_best_model!r}); the loss is dominated by the majority class."
        )
    known = {tuple(ids) for ids in capstone.load_data()["train"]["input_ids"]}
    columns = getattr(trainer.train_dataset, "column_names", None) or ()
    if "input_ids" not in columns or any(tuple(ids) not in known for ids in trainer.train_dataset["input_ids"]):
        raise Wrong("train on capstone.load_data()['train'] (resampling it is fine, other reviews are not).")


def _check_capstone(make_trainer: Any) -> Verdict | None:
    if not callable(make_trainer):
        raise Wrong("make_capstone_trainer must be a function that returns a Trainer.")
    with learner_code("calling your make_capstone_trainer()"):
        twin = make_trainer()
        trainer = capstone.seeded_trainer(make_trainer)
    _require_settings(trainer, twin)
    with learner_code("training the Trainer that make_capstone_trainer() returned"):
        trainer.train()
    score = capstone.minority_f1(trainer.model, capstone.load_data()["validation"])
    if score < capstone.GOAL_F1:
        raise Wrong(
            f"the minority-class F1 on the validation split is {score:.3f}; the goal is {capstone.GOAL_F1} "
            f"({SEEDED}, so this answer scores the same in every run). Weigh the rare class in the loss (lesson "
            "07's class-weighted Trainer) and check the learning rate."
        )
    return Verdict(
        PASSED,
        f"minority-class F1 on the validation split: {score:.3f}, goal {capstone.GOAL_F1} "
        f"({SEEDED}, so this answer scores the same in every run).",
        "12.2",
    )


q2 = Exercise(
    name="12.2",
    answer_name="make_capstone_trainer",
    checker=_check_capstone,
    hint_text=(
        "Start from the starter code (capstone.make_starter_trainer): use lesson 07's class-weighted Trainer "
        "with class_weights from the class counts, eval and save every epoch, load_best_model_at_end=True with "
        "metric_for_best_model='f1', a warmup + decay schedule, and StopAtTargetF1 (q1) to stop early."
    ),
    solution_obj=solutions.make_capstone_trainer,
    wrong_answers=[capstone.make_starter_trainer, solutions.make_trainer_kept_by_loss],
)
