"""Reference solutions for lesson 13's exercises."""

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
