"""Reference solutions (and realistic wrong answers) for lesson 13's exercises."""

from __future__ import annotations

from transformers import Trainer
from trl import SFTTrainer


class MyAccuracyLoggingTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.noted = {"train": [], "eval": []}

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs["labels"]
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        mode = "train" if self.model.training else "eval"
        self.noted[mode].append((outputs.logits.argmax(-1) == labels).float().mean().item())
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        mode = "train" if self.model.training else "eval"
        if self.noted[mode]:
            logs["batch_accuracy" if mode == "train" else "eval_batch_accuracy"] = sum(self.noted[mode]) / len(
                self.noted[mode]
            )
            self.noted[mode].clear()
        super().log(logs, start_time)


class MyLengthSFTTrainer(SFTTrainer):
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        mode = "train" if self.model.training else "eval"
        self._metrics[mode]["tokens_per_sequence"].append(inputs["attention_mask"].sum(dim=1).float().mean().item())
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)


# ---- realistic wrong answers (the tests prove each is caught) ----


class LogInsideComputeLoss(MyAccuracyLoggingTrainer):
    """Calls self.log in compute_loss: one row per micro-batch, nothing in the Trainer's training logs."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        result = super().compute_loss(model, inputs, return_outputs, num_items_in_batch)
        self.log({"batch_accuracy": self.noted["train" if self.model.training else "eval"].pop()})
        return result

    def log(self, logs, start_time=None):
        Trainer.log(self, logs, start_time)


class NeverCleared(MyAccuracyLoggingTrainer):
    """Averages every micro-batch since the start of training: it never starts again."""

    def log(self, logs, start_time=None):
        noted = self.noted["train" if self.model.training else "eval"]
        if noted:
            logs["batch_accuracy" if self.model.training else "eval_batch_accuracy"] = sum(noted) / len(noted)
        Trainer.log(self, logs, start_time)


WRONG_ACCURACY_TRAINERS = [LogInsideComputeLoss, NeverCleared]


class PaddedLengthSFTTrainer(SFTTrainer):
    """Counts the padded width of the micro-batch, not the real tokens of each sequence."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        self._metrics["train" if self.model.training else "eval"]["tokens_per_sequence"].append(
            float(inputs["input_ids"].shape[1])
        )
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)


WRONG_LENGTH_TRAINERS = [PaddedLengthSFTTrainer]
