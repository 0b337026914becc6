"""Reference solutions for lesson 17's exercises (old Trainer code on 5.x)."""

from __future__ import annotations

from transformers import TrainerCallback

# Exercise 1: the old call, ported to the installed TrainingArguments (output_dir left out).
ported_arguments = {
    "eval_strategy": "steps",
    "eval_steps": 5,
    "per_device_train_batch_size": 8,
    "warmup_steps": 0.2,
    "use_cpu": True,
    "train_sampling_strategy": "group_by_length",
    "optim": "adafactor",
}


# Exercise 2: the example's EpochReport, with real event names, keeping what it saw.
class EpochRecorder(TrainerCallback):
    """The epoch at the end of each epoch, and the eval_loss of each evaluation."""

    def __init__(self) -> None:
        self.epochs: list[float] = []
        self.eval_losses: list[float] = []

    def on_epoch_end(self, args, state, control, **kwargs):
        self.epochs.append(state.epoch)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.eval_losses.append(metrics["eval_loss"])
