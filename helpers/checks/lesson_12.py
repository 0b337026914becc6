"""The capstone (lesson 12): the task, its data and model, the score, and the three exercises that build it.

The task: positive reviews are rare (1 in 10). Fine-tune the course model so that the **minority-class F1**
(the F1 of ``positive``) on the capstone's validation split reaches :data:`GOAL_F1`.

The task is defined once, here, so the notebook, the reference solution and the check agree on it:
:func:`capstone_data` (the 1:9 splits), :func:`capstone_model` (the model, with the part that trains) and
:func:`minority_f1` (the score). The exercises:

* ``q1``: ``StopAtTargetF1``, a callback that stops training once the evaluated minority F1 reaches a target;
* ``q2``: ``make_capstone_trainer()``, the whole project: the check trains it and scores the best model kept.

The class-weighted loss is lesson 07's exercise 1 (``MyWeightedTrainer``); the project reuses it.
"""

from __future__ import annotations

from typing import Any

from helpers.checks.core import PASSED, Exercise, Verdict, Wrong, validated_callback
from helpers.checks.lesson_02 import tiny_trainer
from helpers.solutions import lesson_12 as solutions

POSITIVE_SHARE = 0.1  # 1 positive review for 9 negative ones, in training and validation alike
GOAL_F1 = 0.2  # set from a measured run (cpu profile): the reference solution reached 0.257, the starter 0.095
SPLIT_SEED = 12
# (train, validation) reviews per profile: small on a CPU so the whole project trains in about a minute.
SIZES = {"cpu": (320, 200), "mps": (2000, 600), "cuda": (4000, 1000)}
EPOCHS = 2  # for the starter and the reference alike
CPU_MAX_LENGTH = 32  # tokens; on a CPU the capstone cuts the longest reviews to save time


def imbalanced_sample(split: Any, size: int, positive_share: float = POSITIVE_SHARE, seed: int = SPLIT_SEED) -> Any:
    """A shuffled, seeded sample of ``size`` reviews of which ``round(size * positive_share)`` are positive.

    Raises:
        ValueError: the split has too few reviews of a class for the sample asked for.
    """
    if not 0 < positive_share < 1 or not isinstance(size, int) or size < 2:
        raise ValueError(f"need 0 < positive_share < 1 and an int size >= 2, got {positive_share!r}, {size!r}.")
    from datasets import concatenate_datasets

    wanted = {1: round(size * positive_share), 0: size - round(size * positive_share)}
    parts = []
    for label, count in wanted.items():
        rows = split.filter(lambda batch, label=label: [value == label for value in batch["label"]], batched=True)
        if len(rows) < count:
            raise ValueError(
                f"the split has {len(rows)} reviews labelled {label}, fewer than the {count} asked for; "
                "ask for a smaller size."
            )
        parts.append(rows.shuffle(seed=seed).select(range(count)))
    return concatenate_datasets(parts).shuffle(seed=seed)


def capstone_data(tokenizer: Any, profile: Any = None) -> Any:
    """The capstone's tokenized ``DatasetDict(train, validation)``, both at 1 positive for 9 negatives.

    Training reviews come from the course's train split and validation reviews from its validation split
    (different movies). Sizes follow the profile (:data:`SIZES`); on the cpu profile reviews are cut at
    :data:`CPU_MAX_LENGTH` tokens.
    """
    import datasets

    import helpers

    profile = profile or helpers.course_profile()
    train_size, validation_size = SIZES[profile.name]
    reviews = helpers.load_reviews()
    raw = datasets.DatasetDict(
        {
            "train": imbalanced_sample(reviews["train"], train_size),
            "validation": imbalanced_sample(reviews["validation"], validation_size),
        }
    )
    max_length = min(profile.max_length, CPU_MAX_LENGTH) if profile.name == "cpu" else profile.max_length
    return helpers.tokenize_reviews(raw, tokenizer, max_length)


def capstone_model(profile: Any = None) -> Any:
    """The course model for the capstone. On the cpu profile only the top encoder layer, the pooler and the
    classification head train (the rest is frozen), so a run fits the CPU budget; elsewhere everything trains."""
    import helpers

    profile = profile or helpers.course_profile()
    model = helpers.models.load_model(num_layers=profile.num_layers)
    if profile.name == "cpu":
        top = f"encoder.layer.{model.config.num_hidden_layers - 1}."
        for name, parameter in model.named_parameters():
            parameter.requires_grad = name.startswith("classifier") or ".pooler." in name or top in name
    return model


def minority_f1(model: Any, dataset: Any, tokenizer: Any) -> float:
    """The F1 of the positive (minority) class of ``model`` on ``dataset``, computed by the course metrics."""
    import tempfile

    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    import helpers
    from helpers.metrics import make_compute_metrics

    profile = helpers.course_profile()
    with tempfile.TemporaryDirectory() as folder:
        args = TrainingArguments(
            output_dir=folder,
            per_device_eval_batch_size=profile.eval_batch_size,
            report_to="none",
            **profile.precision_kwargs(),
        )
        scorer = Trainer(model=model, args=args, data_collator=DataCollatorWithPadding(tokenizer))
        prediction = scorer.predict(dataset)
    return float(make_compute_metrics()(prediction)["f1"])


# --- q1: a callback that stops on a custom criterion ---------------------------------------------------------


def _scripted_f1(values: list[float]) -> Any:
    """A compute_metrics that reports ``values`` in turn as 'f1' (so the check knows when the target is reached)."""
    remaining = list(values)

    def compute_metrics(prediction: Any) -> dict[str, float]:
        return {"f1": remaining.pop(0) if remaining else values[-1]}

    return compute_metrics


def _check_stop_callback(callback_class: Any) -> None:
    from transformers import TrainerCallback

    if not isinstance(callback_class, type) or not issubclass(callback_class, TrainerCallback):
        raise Wrong(
            "StopAtTargetF1 must be a class that inherits transformers.TrainerCallback, built as "
            "StopAtTargetF1(target=0.6)."
        )
    scripted = [0.2, 0.5, 0.7, 0.9, 0.95, 0.97]
    settings = {"max_steps": 6, "eval_strategy": "steps", "eval_steps": 1, "per_device_train_batch_size": 8}
    for target, expected_stop in ((0.6, 3), (0.5, 2), (0.99, 6)):
        trainer = tiny_trainer(
            settings,
            num_layers=1,
            compute_metrics=_scripted_f1(scripted),
            callbacks=[validated_callback(callback_class(target=target))],
        )
        trainer.train()
        stopped = trainer.state.global_step
        if stopped != expected_stop:
            reached = (
                f"eval_f1 reached {target} at update {expected_stop}"
                if expected_stop < 6
                else f"eval_f1 never reached {target}"
            )
            raise Wrong(
                f"with target={target}, training stopped after update {stopped}; {reached}. The metrics "
                "that on_evaluate receives carry the 'eval_' prefix (eval_f1); set "
                "control.should_training_stop = True once it is >= the target, and not before."
            )


q1 = Exercise(
    name="12.1",
    answer_name="StopAtTargetF1",
    checker=_check_stop_callback,
    hint_text=(
        "In on_evaluate(self, args, state, control, metrics=None, **kwargs), read metrics['eval_f1'] (the "
        "Trainer adds 'eval_' to every key) and set control.should_training_stop = True when it is >= "
        "self.target."
    ),
    solution_obj=solutions.StopAtTargetF1,
    wrong_answers=[solutions.StopAtTargetF1WithoutPrefix, solutions.StopAfterFirstEvaluation],
)


# --- q2: the project ----------------------------------------------------------------------------------------


def _require_capstone_settings(trainer: Any) -> None:
    """Cheap checks before the (minute-long) training run."""
    from transformers import Trainer

    if not isinstance(trainer, Trainer):
        raise Wrong(f"make_capstone_trainer() must return a Trainer (not yet trained), got {type(trainer).__name__}.")
    if trainer.state.global_step:
        raise Wrong("return the Trainer before calling train(); the check trains it and scores the result.")
    args = trainer.args
    if not args.load_best_model_at_end:
        raise Wrong(
            "the model after training is the last one, not the best: set load_best_model_at_end=True "
            "(with eval_strategy and save_strategy equal)."
        )
    if args.metric_for_best_model not in ("f1", "eval_f1"):
        raise Wrong(
            f"the best model is chosen on {args.metric_for_best_model!r}; the goal is the minority-class "
            "F1, so use metric_for_best_model='f1' with compute_metrics=make_compute_metrics()."
        )
    if trainer.compute_metrics is None:
        raise Wrong("the Trainer has no compute_metrics, so there is no eval_f1 to keep the best model by.")


def _require_training_reviews(trainer: Any, allowed: Any) -> None:
    """The learner may reweight or resample, but only train on the capstone's training reviews."""
    known = {tuple(ids) for ids in allowed["input_ids"]}
    used = trainer.train_dataset["input_ids"] if trainer.train_dataset is not None else []
    if not used:
        raise Wrong("the Trainer has no train_dataset; pass the capstone's training split.")
    strangers = sum(tuple(ids) not in known for ids in used)
    if strangers:
        raise Wrong(
            f"{strangers} training reviews are not from the capstone's training split; train only on "
            "data['train'] (resampling it is fine, adding validation reviews is not)."
        )


def _check_capstone(make_trainer: Any) -> Verdict:
    import helpers

    if not callable(make_trainer):
        raise Wrong("make_capstone_trainer must be a function that returns a Trainer.")
    trainer = make_trainer()
    _require_capstone_settings(trainer)
    tokenizer = helpers.models.load_tokenizer()
    data = capstone_data(tokenizer)
    _require_training_reviews(trainer, data["train"])
    trainer.train()
    score = minority_f1(trainer.model, data["validation"], tokenizer)
    if score < GOAL_F1:
        raise Wrong(
            f"the minority-class F1 on the validation split is {score:.3f}; the goal is {GOAL_F1}. Weigh the "
            "rare class in the loss (lesson 07's MyWeightedTrainer), keep the best model by eval_f1, "
            "and check the learning rate."
        )
    return Verdict(PASSED, f"minority-class F1 on the validation split: {score:.3f} (goal {GOAL_F1}).", "12.2")


q2 = Exercise(
    name="12.2",
    answer_name="make_capstone_trainer",
    checker=_check_capstone,
    hint_text=(
        "Start from the starter code: use your MyWeightedTrainer from lesson 07 with class_weights from the class "
        "counts, "
        "compute_metrics=make_compute_metrics(), eval and save every epoch, load_best_model_at_end=True "
        "with metric_for_best_model='f1', a warmup + decay schedule, and StopAtTargetF1 (q1) to stop early."
    ),
    solution_obj=solutions.make_capstone_trainer,
    wrong_answers=[solutions.make_starter_trainer, solutions.make_trainer_kept_by_loss],
)
