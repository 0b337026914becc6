"""Reference solutions of the capstone (lesson 12), and realistic wrong answers the checks must catch."""

import torch
import torch.nn.functional as F
from transformers import DataCollatorWithPadding, Trainer, TrainerCallback, TrainingArguments

import helpers
from helpers import capstone
from helpers.metrics import make_compute_metrics


class WeightedTrainer(Trainer):  # lesson 07's class-weighted loss
    def __init__(self, *args, class_weights, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        weights = self.class_weights.to(outputs.logits.device, outputs.logits.dtype)
        per_review = F.cross_entropy(outputs.logits, labels, weight=weights, reduction="none")
        loss = per_review.sum() / (num_items_in_batch if num_items_in_batch is not None else labels.numel())
        return (loss, outputs) if return_outputs else loss


class StopAtTargetF1(TrainerCallback):
    def __init__(self, target):
        self.target = target

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if metrics is not None and metrics.get("eval_f1", float("-inf")) >= self.target:
            control.should_training_stop = True


def make_capstone_trainer():
    profile = helpers.course_profile()
    data = capstone.load_data()
    counts = torch.bincount(torch.tensor(data["train"]["label"]), minlength=2).float()
    args = TrainingArguments(
        output_dir=str(helpers.run_dir("12_capstone")),
        seed=42,
        report_to="none",
        num_train_epochs=capstone.EPOCHS,
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
        **profile.precision_kwargs(),
    )
    return WeightedTrainer(
        model_init=capstone.model_init,  # the Trainer seeds with args.seed before it builds the model
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(helpers.models.load_tokenizer()),
        compute_metrics=make_compute_metrics(),
        callbacks=[StopAtTargetF1(target=capstone.GOAL_F1 + 0.1)],
        class_weights=counts.sum() / (2 * counts),  # "balanced": the rare class weighs 9 times more
    )


# ---- realistic wrong answers (the tests prove each is caught) ----


class StopAtTargetF1WithoutPrefix(StopAtTargetF1):
    """Looks for 'f1', but the Trainer hands the callbacks 'eval_f1': it never stops."""

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        if metrics.get("f1", 0.0) >= self.target:
            control.should_training_stop = True


def make_trainer_kept_by_loss():
    """Keeps the best model by eval_loss, which the majority class dominates."""
    trainer = make_capstone_trainer()
    trainer.args.metric_for_best_model, trainer.args.greater_is_better = "loss", False
    return trainer
