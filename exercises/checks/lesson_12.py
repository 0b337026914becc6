"""The capstone's exercises: ``q1`` StopAtTargetF1; ``q2`` the project, judged by :func:`run_project`."""

import random
from typing import Any

import torch
from transformers import Trainer, TrainerCallback

from exercises.checks import fixtures
from exercises.checks.core import PASSED, Exercise, LearnerError, Verdict, Wrong, bind_exercises, learner_code
from exercises.checks.lesson_05 import misspelled_events_note, validated_callback
from exercises.solutions import lesson_12 as solutions
from helpers import capstone, quiet

STOP_SEED = 121  # the check draws its cases from this seed each time it runs; none is a case the lesson shows
EPOCHS, UPDATES_PER_EPOCH = 3, 4  # long enough that ending an epoch early is not ending the run
STOP_RUN = dict(num_train_epochs=EPOCHS, per_device_train_batch_size=2, eval_strategy="steps", eval_steps=1)
SEEDED = (
    f"the check seeded Python, NumPy and torch with {capstone.SEED} first: this code trains the same model in every "
    "run; its score moves by about 0.01 from one check to the next, the samples being new each time"
)


def _stop_cases(seed: int = STOP_SEED) -> list[tuple[list[float], float, int]]:
    """``(eval_f1 at each evaluation, target, update to stop after)``: F1 = target, > target, never; in epochs 1-2."""
    rng, total, cases = random.Random(seed), EPOCHS * UPDATES_PER_EPOCH, []
    for kind in ("equal", "above", "never"):
        target = round(rng.uniform(0.3, 0.7), 2)
        scores = [round(rng.uniform(0.05, target - 0.01), 2) for _ in range(total)]
        stop = total if kind == "never" else rng.randint(2, total - UPDATES_PER_EPOCH)
        if kind != "never":
            scores[stop - 1] = target if kind == "equal" else round(target + rng.uniform(0.01, 0.2), 2)
            scores[stop:] = [round(rng.uniform(0.05, 0.95), 2) for _ in scores[stop:]]
        cases.append((scores, target, stop))
    return cases


def _check_stop_callback(callback_class: Any) -> None:
    if not isinstance(callback_class, type):
        what = "an instance" if isinstance(callback_class, TrainerCallback) else type(callback_class).__name__
        raise Wrong(f"StopAtTargetF1 must be the class itself (the check builds it with target=...), got {what}.")
    for reported, target, expected in _stop_cases():
        with learner_code(f"creating StopAtTargetF1(target={target})"):
            callback = callback_class(target=target)
        scores = iter(reported)
        trainer = fixtures.trainer(
            {},
            fixed=STOP_RUN,
            train_dataset=fixtures.random_ids(2 * UPDATES_PER_EPOCH),
            eval_dataset=fixtures.random_ids(8),
            compute_metrics=lambda prediction, scores=scores: {"f1": next(scores)},
            callbacks=[validated_callback(callback)],  # says so if it is no TrainerCallback
        )
        stopped = fixtures.train(trainer, "training with your callback").state.global_step
        if stopped != expected:
            raise Wrong(
                f"over {EPOCHS} epochs of {UPDATES_PER_EPOCH} updates, evaluated after each, eval_f1 was {reported}; "
                f"with target={target} training should stop after update {expected}, but it stopped after {stopped}. "
                "on_evaluate receives 'eval_f1' (the Trainer adds 'eval_'); once it is >= the target, set "
                "control.should_training_stop (should_epoch_stop only ends the epoch)."
            )


class _Rules(TrainerCallback):
    """The rules: a fresh model, and no forward pass with gradients on reviews outside the training split."""

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if not capstone.is_fresh(model):
            raise Wrong(
                "the model your Trainer starts from is not a fresh capstone model (it was trained or changed before): "
                "build it inside, with model_init=capstone.model_init; change how it trains, not where it starts."
            )
        encoders = [module for module in model.modules() if hasattr(module, "embeddings")] + [model]
        self.hooks = [module.register_forward_pre_hook(self.guarded, with_kwargs=True) for module in encoders]

    def on_train_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        for hook in self.hooks:
            hook.remove()

    def guarded(self, module: Any, args: Any, kwargs: Any) -> None:
        ids = kwargs.get("input_ids", args[0] if args else None)
        other = {capstone.split_of(row) for row in ids.tolist()} - {"train"} if torch.is_grad_enabled() else set()
        if other:
            where = "the validation split" if "validation" in other else "reviews that are not in it"
            raise Wrong(
                f"your Trainer trained on {where}: train on capstone.load_data()['train'] only (resampling or "
                "weighting it is fine); the validation split is there to choose a model, not to learn from."
            )


def run_project(make_trainer: Any, seed: int | None = None, draw: int | None = None) -> tuple[Any, dict[str, float]]:
    """Seed, build and train the learner's Trainer under :class:`_Rules`; it and its kept model's held-out scores."""
    if isinstance(make_trainer, Trainer) or not callable(make_trainer):
        raise Wrong(
            f"make_capstone_trainer must be the function that builds the Trainer, got {type(make_trainer).__name__}: "
            "define `def make_capstone_trainer(): ... return trainer`, and name it without calling it."
        )
    with learner_code("calling your make_capstone_trainer()"):
        twin, trainer = make_trainer(), capstone.seeded_trainer(make_trainer, capstone.SEED if seed is None else seed)
    if not isinstance(trainer, Trainer) or trainer.state.global_step:
        raise Wrong(f"make_capstone_trainer() must return an untrained Trainer, got {type(trainer).__name__}.")
    if trainer.model is not None and trainer.model is twin.model:
        raise Wrong("two calls returned the same model object: build it inside, with model_init=capstone.model_init.")
    trainer.args.seed = trainer.args.seed if seed is None else seed
    quiet(trainer).add_callback(_Rules())
    try:
        with learner_code("training the Trainer that make_capstone_trainer() returned"):
            trainer.train()
    except LearnerError as error:
        if "0-d tensor" not in str(error):
            raise
        raise Wrong(
            f"{error} When it evaluates, the Trainer calls compute_loss(..., return_outputs=True) and unpacks "
            "(loss, outputs): end compute_loss with `return (loss, outputs) if return_outputs else loss` (lesson 07)."
        ) from error
    if not trainer.state.global_step:
        raise Wrong("trainer.train() made no update: the check scores the model your Trainer trains.")
    try:  # scores the check's own capstone model, with the kept weights
        return trainer, capstone.held_out_scores(trainer.model, draw)
    except ValueError as error:
        raise Wrong(f"the check scores the model your Trainer kept, and {error}") from None


def _check_capstone(make_trainer: Any) -> Verdict:
    trainer, scores = run_project(make_trainer)
    held_out, called = capstone.SIZES["held_out"], scores["predicted_positive"]
    said = f"minority-class F1 on held-out reviews your code never saw ({capstone.DRAWS} samples of {held_out}, "
    said += f"seed {scores['draw']}, drawn now): {scores['f1']:.3f} on average, goal {capstone.GOAL_F1} ({SEEDED})"
    if scores["f1"] >= capstone.GOAL_F1:
        return Verdict(PASSED, f"{said}.", q2.name)  # the id bind_exercises gave q2
    advice = [f"; your model calls {called} of them positive ({held_out // 10} are)."]
    if called < held_out // 20:
        advice.append("The mean loss lets it ignore the rare class: weigh that class in the loss (lesson 07).")
    if not trainer.args.load_best_model_at_end or trainer.args.metric_for_best_model not in ("f1", "eval_f1"):
        advice.append("You keep the last model: keep the best by F1 (metric_for_best_model='f1').")
    raise Wrong(said + " ".join(advice))


q1 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="StopAtTargetF1",
    checker=_check_stop_callback,
    hint_text=(
        "The metrics on_evaluate receives carry the 'eval_' prefix the Trainer adds to every key. Once the F1 reaches"
        " the target (equal counts), ask the Trainer to stop the whole run, not only the epoch."
    ),
    solution_obj=solutions.StopAtTargetF1,
)
q2 = Exercise(
    answer_name="make_capstone_trainer",
    checker=_check_capstone,
    hint_text="Start from make_starter_trainer: lesson 07's WeightedLossTrainer with balanced class weights counted "
    "on the training split, evaluation and saving every epoch, the best model kept by F1, warmup and a decay.",
    solution_obj=solutions.make_capstone_trainer,
    one_thread=False,  # trains the course model for a minute: it uses the kernel's threads, as the lesson does
)

bind_exercises(globals())
