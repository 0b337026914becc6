"""Lesson 17's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

from exercise_cases import answer_tests
from transformers import TrainerCallback
from transformers.trainer_utils import IntervalStrategy

from check_old_code.old_arguments import port_kwargs

OLD_CALL = {
    "evaluation_strategy": "steps",
    "eval_steps": 5,
    "per_gpu_train_batch_size": 8,
    "warmup_ratio": 0.2,
    "no_cuda": True,
    "group_by_length": True,
    "adafactor": True,
}
PORTED = {
    "optim": "adafactor",
    "train_sampling_strategy": "group_by_length",
    "use_cpu": True,
    "warmup_steps": 0.2,
    "per_device_train_batch_size": 8,
    "eval_steps": 5,
    "eval_strategy": IntervalStrategy.STEPS,
}


def ported_with(**changes):
    """The ported answer with one learner's slip in it (a value changed, or a key put back as it was)."""
    answer = {**PORTED, **changes}
    return {key: value for key, value in answer.items() if value is not None}


class RecorderFromLogs(TrainerCallback):
    """Reads eval_loss from the logs and the epoch from the state at each epoch's end."""

    def __init__(self):
        super().__init__()
        self.epochs, self.eval_losses = [], []

    def on_epoch_end(self, args, state, control, **kwargs):
        self.epochs += [float(state.epoch)]

    def on_log(self, args, state, control, logs=None, **kwargs):
        if "eval_loss" in logs:
            self.eval_losses.append(logs["eval_loss"])


class RecorderFromKwargs(TrainerCallback):
    def __init__(self, *args, **kwargs):
        self.epochs = list()
        self.eval_losses = list()

    def on_epoch_end(self, args, state, control, **kwargs):
        self.epochs.append(state.epoch)

    def on_evaluate(self, args, state, control, **kwargs):
        self.eval_losses.append(kwargs["metrics"]["eval_loss"])


class RecorderAsTheOldExample(TrainerCallback):
    """The example script's method names, kept: neither is an event, so nothing is ever recorded."""

    def __init__(self):
        self.epochs, self.eval_losses = [], []

    def on_epoch_ended(self, args, state, control, **kwargs):
        self.epochs.append(state.epoch)

    def on_evaluation(self, args, state, control, metrics=None, **kwargs):
        self.eval_losses.append(metrics["eval_loss"])


class RecorderWithClassLists(TrainerCallback):
    epochs: list = []  # noqa: RUF012 - the mistake under test
    eval_losses: list = []  # noqa: RUF012

    def on_epoch_end(self, args, state, control, **kwargs):
        self.epochs.append(state.epoch)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.eval_losses.append(metrics["eval_loss"])


class RecorderOfSteps(TrainerCallback):
    """Records the update count where the epoch was asked for."""

    def __init__(self):
        self.epochs, self.eval_losses = [], []

    def on_epoch_end(self, args, state, control, **kwargs):
        self.epochs.append(state.global_step)

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.eval_losses.append(metrics["eval_loss"])


CORRECT = {
    "q1": [PORTED, {**port_kwargs(OLD_CALL)[0], "seed": 7}],
    "q2": [RecorderFromLogs, RecorderFromKwargs],
}

MISTAKES = {
    "q1": [
        (ported_with(warmup_steps=None, warmup_ratio=0.2), "has no such field"),
        (ported_with(train_sampling_strategy=None, group_by_length=True), "train_sampling_strategy='group_by_length'"),
        (ported_with(warmup_steps=4), "a float below 1 is a fraction"),
        (ported_with(use_cpu=False), "use_cpu=True"),
        (ported_with(optim=None), "optim='adafactor'"),
        (ported_with(eval_strategy="epoch"), "eval_strategy"),
        (ported_with(eval_steps=None), "you left eval_steps out"),
    ],
    "q2": [
        (RecorderAsTheOldExample, "the Trainer never calls on_epoch_ended"),
        (RecorderWithClassLists, "the lists belong to the class"),
        (RecorderOfSteps, "append state.epoch"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
