"""Reference solutions for the exercises of lesson 10."""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from transformers import Trainer, TrainerCallback


def steps_per_epoch(examples: int, per_device_batch: int, processes: int, accumulation: int) -> int:
    """Each process gets ceil(examples / global batch) batches; accumulation groups them into optimizer steps."""
    batches_per_process = math.ceil(examples / (per_device_batch * processes))
    return max(math.ceil(batches_per_process / accumulation), 1)


class RankZeroLossCollector(TrainerCallback):
    """Keeps the logged training losses, on process zero only."""

    def __init__(self) -> None:
        self.losses: list[float] = []

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        if state.is_world_process_zero and logs and "loss" in logs:
            self.losses.append(float(logs["loss"]))


class ClassLossTrainer(Trainer):
    """Logs the cross-entropy of each class, averaged over its reviews since the last log, on all processes."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_totals = torch.zeros(4)  # summed loss and count of the negative reviews, then of the positive

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs["labels"]
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        if model.training:
            per_review = F.cross_entropy(outputs.logits.detach().float(), labels, reduction="none")
            for label in (0, 1):
                chosen = labels == label
                self.class_totals[2 * label] += per_review[chosen].sum().item()
                self.class_totals[2 * label + 1] += chosen.sum().item()
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        if "loss" in logs:
            totals = self.accelerator.reduce(self.class_totals.to(self.accelerator.device), reduction="sum")
            for label, name in enumerate(("loss_negative", "loss_positive")):
                if totals[2 * label + 1] > 0:
                    logs[name] = float(totals[2 * label] / totals[2 * label + 1])
            self.class_totals = torch.zeros(4)
        super().log(logs, start_time)
