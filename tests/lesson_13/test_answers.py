"""Lesson 13's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

from collections import defaultdict

import torch
from exercise_cases import answer_tests
from transformers import Trainer
from trl import SFTTrainer


class AccuracyRunningSums(Trainer):
    """One running sum and count per mode; the training log is recognised by its 'loss' key."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.sums, self.counts = {"train": 0.0, "eval": 0.0}, {"train": 0, "eval": 0}

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        mode = "train" if model.training else "eval"
        self.sums[mode] += float((outputs.logits.argmax(dim=-1) == inputs["labels"]).sum()) / len(inputs["labels"])
        self.counts[mode] += 1
        return (outputs.loss, outputs) if return_outputs else outputs.loss

    def log(self, logs, start_time=None):
        if "loss" in logs and self.counts["train"]:
            logs["batch_accuracy"] = self.sums["train"] / self.counts["train"]
            self.sums["train"], self.counts["train"] = 0.0, 0
        elif "eval_loss" in logs and self.counts["eval"]:
            logs["eval_batch_accuracy"] = self.sums["eval"] / self.counts["eval"]
            self.sums["eval"], self.counts["eval"] = 0.0, 0
        super().log(logs, start_time)


class AccuracyTrlStyle(Trainer):
    """TRL's own shape: a defaultdict of lists per mode, every key merged, eval keys prefixed."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._noted = {"train": defaultdict(list), "eval": defaultdict(list)}

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, outputs = super().compute_loss(model, inputs, True, num_items_in_batch)
        mode = "train" if self.model.training else "eval"
        hits = outputs.logits.argmax(-1).eq(inputs["labels"]).float()
        self._noted[mode]["batch_accuracy"].append(hits.mean().item())
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        mode = "train" if self.model.training else "eval"
        means = {key: sum(values) / len(values) for key, values in self._noted[mode].items()}
        logs.update({(f"eval_{key}" if mode == "eval" else key): value for key, value in means.items()})
        super().log(logs, start_time)
        self._noted[mode].clear()


class AccuracyLoggedInStep(Trainer):
    """self.log inside compute_loss, the first idea of lesson 07, section 8."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        accuracy = (outputs.logits.argmax(-1) == inputs["labels"]).float().mean().item()
        self.log({"batch_accuracy": accuracy} if model.training else {"eval_batch_accuracy": accuracy})
        return (outputs.loss, outputs) if return_outputs else outputs.loss


class AccuracyNeverRestarted(AccuracyRunningSums):
    """Forgets to start again after a log: the mean since the start of training."""

    def log(self, logs, start_time=None):
        if "loss" in logs and self.counts["train"]:
            logs["batch_accuracy"] = self.sums["train"] / self.counts["train"]
        Trainer.log(self, logs, start_time)


class AccuracyInANewDict(Trainer):
    """Right: hands the Trainer a new dict with the column instead of changing `logs` in place. Failed before, when
    the check read the dict evaluate() returns rather than the evaluation's log."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.hits = {True: [], False: []}  # keyed by model.training

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        self.hits[model.training].append((outputs.logits.argmax(-1) == inputs["labels"]).float().mean().item())
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        training = "loss" in logs
        noted = self.hits[training]
        if noted and (training or "eval_loss" in logs):
            logs = {**logs, ("batch_accuracy" if training else "eval_batch_accuracy"): sum(noted) / len(noted)}
            noted.clear()
        super().log(logs, start_time)


class AccuracyOneList(Trainer):
    """Wrong: one list for both modes, named by the mode at log time. Passed before, when the check evaluated once,
    after training."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.noted = []

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        loss, outputs = super().compute_loss(model, inputs, return_outputs=True, num_items_in_batch=num_items_in_batch)
        self.noted.append((outputs.logits.argmax(-1) == inputs["labels"]).float().mean().item())
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        if self.noted:
            logs["batch_accuracy" if self.model.training else "eval_batch_accuracy"] = sum(self.noted) / len(self.noted)
            self.noted = []
        super().log(logs, start_time)


class AccuracyClearsTrainingOnly(AccuracyRunningSums):
    """Wrong: starts the training notes again after each log, never the evaluation's. Passed before (one
    evaluation)."""

    def log(self, logs, start_time=None):
        if "loss" in logs and self.counts["train"]:
            logs["batch_accuracy"] = self.sums["train"] / self.counts["train"]
            self.sums["train"], self.counts["train"] = 0.0, 0
        elif "eval_loss" in logs and self.counts["eval"]:
            logs["eval_batch_accuracy"] = self.sums["eval"] / self.counts["eval"]
        Trainer.log(self, logs, start_time)


class AccuracyResetAtEveryLog(AccuracyOneList):
    """A hurried learner's try at the new check: one list, emptied at every log of either kind; the evaluations'
    batches still fall into the training window that follows them."""

    def log(self, logs, start_time=None):
        if self.noted:
            key = "batch_accuracy" if "loss" in logs else "eval_batch_accuracy"
            logs[key] = sum(self.noted) / len(self.noted)
        self.noted = []
        super().log(logs, start_time)


class LengthFromModelMode(SFTTrainer):
    """Reads the mode from the model it is given and counts with a float sum over the last axis."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        mode = "train" if model.training else "eval"
        self._metrics[mode]["tokens_per_sequence"].append(inputs["attention_mask"].float().sum(-1).mean().item())
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)


class LengthFromPadding(SFTTrainer):
    """Counts the ids that are not the padding id: the same real tokens, found another way."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        real = (inputs["input_ids"] != self.processing_class.pad_token_id).sum(dim=1)
        self._metrics["train" if self.model.training else "eval"]["tokens_per_sequence"].append(
            torch.mean(real.float()).item()
        )
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)


class LengthOfPaddedBatch(SFTTrainer):
    """The padded width of the micro-batch, the same for every sequence."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        self._metrics["train"]["tokens_per_sequence"].append(inputs["attention_mask"].shape[-1])
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)


class LengthOfFirstSequence(SFTTrainer):
    """Only the first sequence of each micro-batch."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        self._metrics["train"]["tokens_per_sequence"].append(float(inputs["attention_mask"][0].sum()))
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)


class LengthByReturnOutputs(SFTTrainer):
    """Wrong: takes return_outputs for the mode, but SFTTrainer's evaluation asks for the loss alone too."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        lengths = inputs["attention_mask"].sum(-1).float()
        self._metrics["eval" if return_outputs else "train"]["tokens_per_sequence"].append(lengths.mean().item())
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)


class LengthAlwaysTrain(SFTTrainer):
    """Wrong: the mode written as 'train'. Passed before, when the check never evaluated."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        self._metrics["train"]["tokens_per_sequence"].append(inputs["attention_mask"].sum(dim=1).float().mean().item())
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)


class LengthEvalOnlyWhenAsked(SFTTrainer):
    """A hurried learner's try at the new check: notes both modes apart but fills the evaluation's column itself,
    from the last micro-batch, in log()."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        mode = "train" if self.model.training else "eval"
        self.last = inputs["attention_mask"].sum(dim=1).float().mean().item()
        if mode == "train":
            self._metrics[mode]["tokens_per_sequence"].append(self.last)
        return super().compute_loss(model, inputs, return_outputs=return_outputs, num_items_in_batch=num_items_in_batch)

    def log(self, logs, start_time=None):
        if "eval_loss" in logs:
            logs["eval_tokens_per_sequence"] = self.last
        super().log(logs, start_time)


CORRECT = {
    "q1": [AccuracyRunningSums, AccuracyTrlStyle, AccuracyInANewDict],
    "q2": [LengthFromModelMode, LengthFromPadding],
}

MISTAKES = {
    "q1": [
        (AccuracyLoggedInStep, "has no 'batch_accuracy' column"),
        (AccuracyNeverRestarted, "start again"),
        (AccuracyOneList, "apart from evaluation's"),
        (AccuracyClearsTrainingOnly, "start again for the next evaluation"),
        (AccuracyResetAtEveryLog, "apart from evaluation's"),
    ],
    "q2": [
        (LengthOfPaddedBatch, "real tokens per sequence"),
        (LengthOfFirstSequence, "real tokens per sequence"),
        (LengthAlwaysTrain, "apart from evaluation's"),
        (LengthByReturnOutputs, "apart from evaluation's"),
        (LengthEvalOnlyWhenAsked, "of its 2 batches"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
