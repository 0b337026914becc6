"""Reference solutions for lesson 20's exercises (tracking and comparing runs)."""

from __future__ import annotations

import math

from transformers import Trainer


# Exercise 1: a value of your own in the Trainer's training logs, counted over examples since the last log.
class AccuracyLoggingTrainer(Trainer):
    """Adds ``train_accuracy`` to every training log: the share of training examples classified correctly since
    the previous training log."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.correct, self.seen = 0, 0

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        labels = inputs["labels"]
        loss, outputs = super().compute_loss(model, inputs, True, **kwargs)
        if model.training:  # evaluation runs compute_loss too
            self.correct += (outputs.logits.argmax(-1) == labels).sum().item()
            self.seen += labels.numel()
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        if "loss" in logs and self.seen:  # a training log
            logs["train_accuracy"] = self.correct / self.seen
            self.correct, self.seen = 0, 0
        super().log(logs, start_time)


# Exercise 2: the global steps at which a run logs its training loss.
def training_log_steps(max_steps: int, logging_steps: float, logging_first_step: bool = False) -> list[int]:
    """Every ``logging_steps`` steps (a float below 1 is a fraction of ``max_steps``, rounded up), and step 1 with
    ``logging_first_step``; the last step only when it falls on the interval."""
    every = math.ceil(max_steps * logging_steps) if logging_steps < 1 else int(logging_steps)
    steps = set(range(every, max_steps + 1, every))
    if logging_first_step:
        steps.add(1)
    return sorted(steps)
