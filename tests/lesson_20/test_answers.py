"""Lesson 20's exercises, tried as learners write them: correct answers written differently from the reference
solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake). The answers
are written here, not imported from the solutions."""

from __future__ import annotations

import math

import torch
from exercise_cases import answer_tests
from transformers import Trainer


class AccuracyFromLabelsPopped(Trainer):
    """Computes the loss itself, labels taken out of the inputs, and counts in tensors."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.counts = torch.zeros(2)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        inputs = dict(inputs)
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = torch.nn.functional.cross_entropy(outputs.logits, labels)
        if self.model.training:
            self.counts += torch.tensor([(outputs.logits.argmax(-1) == labels).sum().item(), len(labels)])
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, *args, **kwargs):
        if "loss" in logs:
            correct, seen = self.counts.tolist()
            logs["train_accuracy"] = correct / seen
            self.counts.zero_()
        return super().log(logs, *args, **kwargs)


class AccuracyInLists(Trainer):
    """Keeps one flag per example and takes the mean at the log."""

    hits: list[bool] | None = None

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        result = super().compute_loss(model, inputs, return_outputs=True, **kwargs)
        if model.training:
            self.hits = (self.hits or []) + (result[1].logits.argmax(dim=1) == inputs["labels"]).tolist()
        return result if return_outputs else result[0]

    def log(self, logs, start_time=None):
        if self.hits and "loss" in logs:
            logs["train_accuracy"] = sum(self.hits) / len(self.hits)
            self.hits = []
        super().log(logs, start_time)


class AccuracyPerBatch(AccuracyInLists):
    """Averages the batches' accuracies: wrong when the last batch of an epoch is smaller."""

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        result = Trainer.compute_loss(self, model, inputs, return_outputs=True, **kwargs)
        if model.training:
            batch = (result[1].logits.argmax(-1) == inputs["labels"]).float().mean().item()
            self.hits = (self.hits or []) + [batch]
        return result if return_outputs else result[0]


class AccuracyNeverReset(Trainer):
    """Counts from the start of training and never starts again."""

    correct = seen = 0

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, **kwargs)
        if model.training:
            self.correct += (outputs.logits.argmax(-1) == inputs["labels"]).sum().item()
            self.seen += len(inputs["labels"])
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        if "loss" in logs:
            logs["train_accuracy"] = self.correct / self.seen
        super().log(logs, start_time)


class AccuracyCountsEvaluation(Trainer):
    """Resets at each log, but counts evaluation batches too (compute_loss runs during evaluation)."""

    correct = seen = 0

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, **kwargs)
        self.correct += (outputs.logits.argmax(-1) == inputs["labels"]).sum().item()
        self.seen += len(inputs["labels"])
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        if "loss" in logs and self.seen:
            logs["train_accuracy"] = self.correct / self.seen
            self.correct = self.seen = 0
        super().log(logs, start_time)


class AccuracyLoggedEachStep(Trainer):
    """Calls self.log with its value at every training batch: entries of its own, between the Trainer's."""

    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, **kwargs)
        if model.training:
            accuracy = (outputs.logits.argmax(-1) == inputs["labels"]).float().mean().item()
            self.log({"train_accuracy": accuracy})
        return (loss, outputs) if return_outputs else loss


class AccuracyInEveryLog(AccuracyInLists):
    """Adds the key to every log, evaluation logs included."""

    def log(self, logs, start_time=None):
        if self.hits:
            logs["train_accuracy"] = sum(self.hits) / len(self.hits)
            self.hits = []
        Trainer.log(self, logs, start_time)


def log_steps_by_loop(max_steps, logging_steps, logging_first_step=False):
    every = logging_steps if logging_steps >= 1 else math.ceil(logging_steps * max_steps)
    return [step for step in range(1, max_steps + 1) if step % every == 0 or (step == 1 and logging_first_step)]


def log_steps_as_tuple(max_steps, logging_steps, logging_first_step):
    every = int(logging_steps) if logging_steps >= 1 else -(-max_steps * logging_steps // 1)
    steps = list(range(int(every), max_steps + 1, int(every)))
    return tuple([1] + steps if logging_first_step and steps[:1] != [1] else steps)


def log_steps_with_last(max_steps, logging_steps, logging_first_step):
    steps = log_steps_by_loop(max_steps, logging_steps, logging_first_step)
    return steps if steps and steps[-1] == max_steps else steps + [max_steps]


def log_steps_rounded(max_steps, logging_steps, logging_first_step):
    every = logging_steps if logging_steps >= 1 else max(1, round(logging_steps * max_steps))
    return [s for s in range(1, max_steps + 1) if s % every == 0 or (s == 1 and logging_first_step)]


def log_steps_first_twice(max_steps, logging_steps, logging_first_step):
    every = logging_steps if logging_steps >= 1 else math.ceil(logging_steps * max_steps)
    return [1] * logging_first_step + list(range(every, max_steps + 1, every))


CORRECT = {
    "q1": [AccuracyFromLabelsPopped, AccuracyInLists],
    "q2": [log_steps_by_loop, log_steps_as_tuple],
}

MISTAKES = {
    "q1": [
        (AccuracyPerBatch, "average over examples, not over batches"),
        (AccuracyNeverReset, "reset your counts after each training log"),
        (AccuracyCountsEvaluation, "leave evaluation batches out"),
        (AccuracyLoggedEachStep, "instead of logging entries of your own"),
        (AccuracyInEveryLog, "add it to training logs only"),
        (Trainer, "has no train_accuracy"),
        (lambda: None, "should be a class that subclasses transformers.Trainer"),
    ],
    "q2": [
        (log_steps_with_last, "the last step logs only when it falls on the interval"),
        (log_steps_rounded, "ceil(max_steps x"),
        (log_steps_first_twice, "step 1 logs once"),
        (lambda m, every, first: None, "should return a list of steps"),
    ],
}

test_correct_answers_pass, test_mistakes_fail_with_the_right_hint = answer_tests(CORRECT, MISTAKES)
