"""Reference solutions of the capstone (lesson 12), and realistic wrong answers the checks must catch."""

from __future__ import annotations

from typing import Any

import torch
from transformers import DataCollatorWithPadding, Trainer, TrainerCallback, TrainingArguments

from helpers.solutions.lesson_07 import MyWeightedTrainer  # lesson 07's exercise 1: the class-weighted loss

# --- q1 ------------------------------------------------------------------------------------------------------


class StopAtTargetF1(TrainerCallback):
    """Stops training after the first evaluation whose minority-class F1 (``eval_f1``) reaches ``target``."""

    def __init__(self, target: float) -> None:
        self.target = target

    def on_evaluate(
        self, args: Any, state: Any, control: Any, metrics: dict[str, float] | None = None, **kwargs: Any
    ) -> None:
        if metrics is not None and metrics.get("eval_f1", float("-inf")) >= self.target:
            control.should_training_stop = True


class StopAtTargetF1WithoutPrefix(StopAtTargetF1):
    """Wrong: looks for 'f1', but the Trainer hands the callbacks 'eval_f1'; it never stops."""

    def on_evaluate(
        self, args: Any, state: Any, control: Any, metrics: dict[str, float] | None = None, **kwargs: Any
    ) -> None:
        if metrics is not None and metrics.get("f1", 0.0) >= self.target:
            control.should_training_stop = True


class StopAfterFirstEvaluation(StopAtTargetF1):
    """Wrong: stops at the first evaluation whatever the score."""

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        control.should_training_stop = True


# --- q2 ------------------------------------------------------------------------------------------------------


def make_capstone_trainer() -> Trainer:
    """The whole project: weighted loss, the course metrics, the best model kept by eval_f1, a cosine schedule
    with warmup, and a stop once the goal is reached. Returns the Trainer before training."""
    import helpers
    from helpers.checks.lesson_12 import EPOCHS, GOAL_F1, capstone_data, capstone_model
    from helpers.metrics import make_compute_metrics

    profile = helpers.course_profile()
    helpers.seed_everything(42)
    tokenizer = helpers.models.load_tokenizer()
    data = capstone_data(tokenizer, profile)
    counts = torch.bincount(torch.tensor(data["train"]["label"]), minlength=2).float()
    class_weights = counts.sum() / (len(counts) * counts)  # "balanced": the rare class weighs 9 times more
    args = TrainingArguments(
        output_dir=str(helpers.run_dir("12_capstone_reference")),
        seed=42,
        report_to="none",
        num_train_epochs=EPOCHS,
        learning_rate=1e-3 if profile.name == "cpu" else profile.learning_rate,
        per_device_train_batch_size=profile.batch_size,
        per_device_eval_batch_size=profile.eval_batch_size,
        lr_scheduler_type="cosine",
        warmup_steps=0.1,
        eval_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=1,
        load_best_model_at_end=True,
        metric_for_best_model="f1",
        greater_is_better=True,
        logging_steps=10,
        disable_tqdm=True,
        **profile.precision_kwargs(),
    )
    return MyWeightedTrainer(
        model=capstone_model(profile),
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=make_compute_metrics(),
        callbacks=[StopAtTargetF1(target=GOAL_F1 + 0.1)],
        class_weights=class_weights,
    )


def make_starter_trainer() -> Trainer:
    """Wrong (the starter code as handed out): plain loss, and the model kept at the end is the last one."""
    import helpers
    from helpers.checks.lesson_12 import EPOCHS, capstone_data, capstone_model
    from helpers.metrics import make_compute_metrics

    profile = helpers.course_profile()
    tokenizer = helpers.models.load_tokenizer()
    data = capstone_data(tokenizer, profile)
    args = TrainingArguments(
        output_dir=str(helpers.run_dir("12_capstone_starter")),
        seed=42,
        report_to="none",
        num_train_epochs=EPOCHS,
        learning_rate=1e-3,
        per_device_train_batch_size=profile.batch_size,
        eval_strategy="epoch",
        save_strategy="no",
        disable_tqdm=True,
        **profile.precision_kwargs(),
    )
    return Trainer(
        model=capstone_model(profile),
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(tokenizer),
        compute_metrics=make_compute_metrics(),
    )


def make_trainer_kept_by_loss() -> Trainer:
    """Wrong: keeps the best model, but judged by eval_loss, which the majority class dominates."""
    trainer = make_capstone_trainer()
    trainer.args.metric_for_best_model = "loss"
    trainer.args.greater_is_better = False
    return trainer
