"""Lesson 07's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from exercise_cases import answer_tests
from transformers import Trainer

from helpers.lessons.lesson_07 import LossPartsTrainer


def _balanced(dataset):
    labels = np.array(dataset["labels"])
    return torch.tensor([len(labels) / (2 * np.sum(labels == c)) for c in (0, 1)], dtype=torch.float32)


class BalancedScaledFlag(Trainer):
    loss_is_scaled_for_ga = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.weights = _balanced(self.train_dataset)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        per = F.cross_entropy(outputs.logits, inputs["labels"], reduction="none") * self.weights[inputs["labels"]]
        return (per.mean(), outputs) if return_outputs else per.mean()


class BalancedNoLossKwargs(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.model_accepts_loss_kwargs = False
        self.weights = _balanced(self.train_dataset)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = (F.cross_entropy(outputs.logits, labels, reduction="none") * self.weights[labels]).mean()
        return (loss, outputs) if return_outputs else loss


class BalancedInverse(BalancedScaledFlag):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.weights = 1 / self.weights


class BalancedPerBatchMean(BalancedScaledFlag):
    loss_is_scaled_for_ga = None


def focal_from_ce(outputs, labels, num_items_in_batch=None):
    ce = F.cross_entropy(outputs.logits, labels, reduction="none")
    per = (1 - torch.exp(-ce)) ** 2 * ce
    return per.sum() / (labels.shape[0] if num_items_in_batch is None else num_items_in_batch)


def focal_from_softmax(outputs, labels, num_items_in_batch=None):
    p = outputs.logits.softmax(-1)[torch.arange(len(labels)), labels]
    count = num_items_in_batch if num_items_in_batch is not None else len(labels)
    return torch.sum(-((1 - p) ** 2) * torch.log(p)) / count


def focal_indexing_outputs(outputs, labels, num_items_in_batch=None):
    """Reads the logits as outputs["logits"]; a check that handed a SimpleNamespace called this a crash."""
    log_p = torch.log_softmax(outputs["logits"], dim=-1)[torch.arange(len(labels)), labels]
    total = -(((1 - log_p.exp()) ** 2) * log_p).sum()
    return total / (len(labels) if num_items_in_batch is None else num_items_in_batch)


def focal_outputs_get(outputs, labels, num_items_in_batch=None):
    """outputs.get("logits"), the documentation's own style; also misjudged by the old stand-in."""
    ce = F.cross_entropy(outputs.get("logits"), labels, reduction="none")
    count = num_items_in_batch if num_items_in_batch is not None else labels.numel()
    return torch.sum((1 - torch.exp(-ce)) ** 2 * ce) / count


def focal_mean(outputs, labels, num_items_in_batch=None):
    ce = F.cross_entropy(outputs.logits, labels, reduction="none")
    return ((1 - torch.exp(-ce)) ** 2 * ce).mean()


def focal_gamma_one(outputs, labels, num_items_in_batch=None):
    ce = F.cross_entropy(outputs.logits, labels, reduction="none")
    return ((1 - torch.exp(-ce)) * ce).sum() / (num_items_in_batch or len(labels))


def focal_per_review(outputs, labels, num_items_in_batch=None):
    """Forgets the reduction; the old check said only "must return a scalar tensor, got Tensor"."""
    ce = F.cross_entropy(outputs.logits, labels, reduction="none")
    return (1 - torch.exp(-ce)) ** 2 * ce


def focal_times_world_size(outputs, labels, num_items_in_batch=None):
    """Multiplies by the number of processes, which the Trainer already does: one process could not show it."""
    world = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
    return focal_from_ce(outputs, labels, num_items_in_batch) * world


class BalancedDividedByProcesses(Trainer):
    """Right on one process; divides by the number of processes: one process could not show it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.weights = _balanced(self.train_dataset)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        per = F.cross_entropy(outputs.logits, labels, reduction="none") * self.weights[labels]
        count = labels.numel() if num_items_in_batch is None else num_items_in_batch
        loss = per.sum() / count / self.accelerator.num_processes
        return (loss, outputs) if return_outputs else loss


class BalancedCopiedWeights(BalancedScaledFlag):
    """Weights copied from one label mix (2 positives in 8) instead of counted: a lookup table of the old fixed
    mixes passed."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.weights = torch.tensor([8 / 12, 8 / 4])


# Realistic mistakes derived from the reference solution by one change.


class LessonWeightedTrainer(Trainer):
    """The lesson's WeightedLossTrainer pasted: it wants class_weights from outside, counts nothing itself."""

    def __init__(self, *args, class_weights, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights


class UnweightedTrainer(Trainer):
    """Forgets the weights: the model's own mean cross-entropy."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        return (outputs.loss, outputs) if return_outputs else outputs.loss


class TorchWeightedMeanTrainer(Trainer):
    """F.cross_entropy(weight=...) with its default mean divides by the sum of the weights, not the review count."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.class_weights = _balanced(self.train_dataset)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = F.cross_entropy(outputs.logits, labels, weight=self.class_weights)
        return (loss, outputs) if return_outputs else loss


class TorchWeightedMeanUnscaled(TorchWeightedMeanTrainer):
    """The per-batch route (loss_is_scaled_for_ga = False) done, but F.cross_entropy(weight=...)'s mean divides
    each micro-batch by the sum of its weights."""

    loss_is_scaled_for_ga = False


# ---- 07.3: the parts of the loss, logged as columns of their own ----


def _z_parts(logits, labels):
    return {
        "loss_ce": F.cross_entropy(logits, labels),
        "loss_z": 0.1 * torch.logsumexp(logits, dim=-1).pow(2).mean(),
    }


class PartsFromLessonClass(LossPartsTrainer):
    """Right: lesson 07's LossPartsTrainer, with these parts (its base says the loss is a micro-batch mean)."""

    def loss_parts(self, model, inputs):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        return outputs, _z_parts(outputs.logits, labels)


class PartsAsTensorLists(Trainer):
    """Right, another route: detached tensors in lists, stacked at log time; model_accepts_loss_kwargs = False."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.model_accepts_loss_kwargs = False
        self.noted = {"loss_ce": [], "loss_z": []}

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        parts = _z_parts(outputs.logits, inputs["labels"])
        if self.model.training:
            for name, value in parts.items():
                self.noted[name].append(value.detach())
        loss = parts["loss_ce"] + parts["loss_z"]
        return (loss, outputs) if return_outputs else loss

    def log(self, logs, start_time=None):
        if "loss" in logs:
            logs = {**logs, **{k: torch.stack(v).mean().item() for k, v in self.noted.items() if v}}
            self.noted = {"loss_ce": [], "loss_z": []}
        super().log(logs, start_time)


class PartsLoggedInStep(Trainer):
    """Wrong: self.log inside compute_loss (lesson 07's first idea): a row per micro-batch."""

    loss_is_scaled_for_ga = False

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        parts = _z_parts(outputs.logits, labels)
        if model.training:
            self.log({name: value.item() for name, value in parts.items()})
        loss = sum(parts.values())
        return (loss, outputs) if return_outputs else loss


class PartsNotScaled(PartsAsTensorLists):
    """Wrong: right columns, but the Trainer is not told that the loss is a micro-batch mean."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.model_accepts_loss_kwargs = True


class PartsWithEvaluation(PartsAsTensorLists):
    """Wrong: notes the parts of the evaluation's batches too, in the same lists."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        parts = _z_parts(outputs.logits, inputs["labels"])
        for name, value in parts.items():
            self.noted[name].append(value.detach())
        loss = parts["loss_ce"] + parts["loss_z"]
        return (loss, outputs) if return_outputs else loss


class PartsOverLoggingSteps(PartsAsTensorLists):
    """A hurried learner's try: the sums over logging_steps x accumulation micro-batches, as if every window were
    full (the first log, at step 1, is not)."""

    def log(self, logs, start_time=None):
        if "loss" in logs:
            count = self.args.logging_steps * self.args.gradient_accumulation_steps
            logs.update({k: torch.stack(v).sum().item() / count for k, v in self.noted.items() if v})
            self.noted = {"loss_ce": [], "loss_z": []}
        Trainer.log(self, logs, start_time)


class PartsZOfBatchMean(PartsAsTensorLists):
    """A hurried learner's z-loss: 0.1 times the square of the batch mean of logsumexp, where the exercise defines the
    mean over the reviews of the squares (trained and logged that way)."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(input_ids=inputs["input_ids"], attention_mask=inputs["attention_mask"])
        logits = outputs.logits
        parts = {
            "loss_ce": F.cross_entropy(logits, inputs["labels"]),
            "loss_z": 0.1 * torch.logsumexp(logits, dim=-1).mean() ** 2,
        }
        if self.model.training:
            for name, value in parts.items():
                self.noted[name].append(value.detach())
        loss = parts["loss_ce"] + parts["loss_z"]
        return (loss, outputs) if return_outputs else loss


class PartsLastMicroBatch(PartsAsTensorLists):
    """Wrong: logs the parts of the last micro-batch only."""

    def log(self, logs, start_time=None):
        if "loss" in logs:
            logs.update({k: v[-1].item() for k, v in self.noted.items() if v})
            self.noted = {"loss_ce": [], "loss_z": []}
        Trainer.log(self, logs, start_time)


CORRECT = {
    "q1": [BalancedScaledFlag, BalancedNoLossKwargs],
    "q2": [focal_from_ce, focal_from_softmax, focal_indexing_outputs, focal_outputs_get],
    "q3": [PartsFromLessonClass, PartsAsTensorLists],
}

MISTAKES = {
    "q1": [
        (BalancedInverse, "N / (2 * count_c)"),
        (BalancedPerBatchMean, "batch 4 x accumulation 2"),
        (BalancedDividedByProcesses, "never divide by it"),
        (BalancedCopiedWeights, "N / (2 * count_c)"),
        (LessonWeightedTrainer, "class_weights"),
        (UnweightedTrainer, "Weight class c by"),
        (TorchWeightedMeanTrainer, "Divide the summed loss by num_items_in_batch"),
        (TorchWeightedMeanUnscaled, "A weighted mean divides by the sum of the weights"),
    ],
    "q2": [
        (focal_mean, "divided by num_items_in_batch"),
        (focal_gamma_one, "focal loss (gamma 2)"),
        (focal_per_review, "one loss per review"),
        (focal_times_world_size, "no factor for processes"),
    ],
    "q3": [
        (PartsLoggedInStep, "writes rows of its own"),
        (PartsNotScaled, "tell the Trainer so"),
        (PartsWithEvaluation, "(not evaluation's)"),
        (PartsOverLoggingSteps, "micro-batches since the previous training log"),
        (PartsLastMicroBatch, "micro-batches since the previous training log"),
        (PartsZOfBatchMean, "square each review's logsumexp, then average"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
