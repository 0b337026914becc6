"""The capstone's exercises: ``q1`` StopAtTargetF1, ``q2`` the whole project (its task: :mod:`helpers.capstone`)."""

from typing import Any

from transformers import Trainer

from helpers import capstone
from helpers.checks import fixtures
from helpers.checks.core import PASSED, Exercise, Verdict, Wrong, learner_code, validated_callback
from helpers.solutions import lesson_12 as solutions

# (the eval_f1 reported at evaluations 1, 2, ..., target, the update training should stop after)
STOP_CASES = (((0.2, 0.5, 0.7, 0.9), 0.6, 3), ((0.4, 0.5, 0.3, 0.8), 0.5, 2), ((0.1, 0.2, 0.3, 0.4), 0.9, 4))
SEEDED = f"the check seeded Python, NumPy and torch with {capstone.SEED} first: this code scores the same in every run"


def _check_stop_callback(callback_class: Any) -> None:
    for reported, target, expected in STOP_CASES:
        with learner_code(f"creating StopAtTargetF1(target={target})"):
            callback = callback_class(target=target)
        scores = iter(reported)
        trainer = fixtures.trainer(
            {},
            fixed={"max_steps": len(reported), "eval_strategy": "steps", "eval_steps": 1},
            eval_dataset=fixtures.random_ids(8),
            compute_metrics=lambda prediction, scores=scores: {"f1": next(scores)},
            callbacks=[validated_callback(callback)],  # says so if it is no TrainerCallback
        )
        stopped = fixtures.train(trainer, "training with your callback").state.global_step
        if stopped != expected:
            raise Wrong(
                f"eval_f1 was {list(reported)} at updates 1 to {len(reported)}; with target={target} training should "
                f"stop after update {expected}, but it stopped after {stopped}. on_evaluate receives 'eval_f1' (the "
                "Trainer adds the 'eval_' prefix); stop once it is >= the target, and not before."
            )


def _check_capstone(make_trainer: Any) -> Verdict:
    with learner_code("calling your make_capstone_trainer()"):
        twin, trainer = make_trainer(), capstone.seeded_trainer(make_trainer)
    if not isinstance(trainer, Trainer) or trainer.state.global_step:
        raise Wrong(f"make_capstone_trainer() must return an untrained Trainer, got {type(trainer).__name__}.")
    if trainer.model is twin.model:
        raise Wrong("two calls returned the same model object: build it inside, with model_init=capstone.model_init.")
    args = trainer.args
    if not args.load_best_model_at_end or args.metric_for_best_model not in ("f1", "eval_f1"):
        raise Wrong(
            "keep the model with the best minority F1 (the majority class rules the loss): load_best_model_at_end="
            f"True, metric_for_best_model='f1' (yours: {args.load_best_model_at_end}, {args.metric_for_best_model!r})."
        )
    known = {tuple(ids) for ids in capstone.load_data()["train"]["input_ids"]}
    columns = getattr(trainer.train_dataset, "column_names", None) or ()
    if "input_ids" not in columns or any(tuple(ids) not in known for ids in trainer.train_dataset["input_ids"]):
        raise Wrong("train on capstone.load_data()['train'] (resampling it is fine, other reviews are not).")
    with learner_code("training the Trainer that make_capstone_trainer() returned"):
        trainer.train()
    score = capstone.minority_f1(trainer.model, capstone.load_data()["validation"])
    said = f"minority-class F1 on the validation split: {score:.3f}, goal {capstone.GOAL_F1} ({SEEDED})"
    if score < capstone.GOAL_F1:
        raise Wrong(f"{said}. Weigh the rare class in the loss (lesson 07's class-weighted Trainer).")
    return Verdict(PASSED, f"{said}.", "12.2")


q1 = Exercise(
    name="12.1",
    answer_name="StopAtTargetF1",
    checker=_check_stop_callback,
    hint_text="In on_evaluate(self, args, state, control, metrics=None, **kwargs), set control.should_training_stop"
    " = True when metrics['eval_f1'] (the Trainer adds 'eval_' to every key) is >= self.target.",
    solution_obj=solutions.StopAtTargetF1,
    wrong_answers=[solutions.StopAtTargetF1WithoutPrefix],
)
q2 = Exercise(
    name="12.2",
    answer_name="make_capstone_trainer",
    checker=_check_capstone,
    hint_text="Start from capstone.make_starter_trainer: lesson 07's class-weighted Trainer, eval and save every "
    "epoch, load_best_model_at_end=True with metric_for_best_model='f1', warmup + decay, StopAtTargetF1 (q1).",
    solution_obj=solutions.make_capstone_trainer,
    wrong_answers=[capstone.make_starter_trainer, solutions.make_trainer_kept_by_loss],
)
