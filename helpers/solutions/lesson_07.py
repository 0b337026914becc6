"""Reference solutions (and realistic wrong answers) for lesson 07's exercises."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from transformers import Trainer


class MyBalancedTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        labels = torch.tensor(self.train_dataset["labels"])
        self.class_weights = len(labels) / (2 * torch.bincount(labels, minlength=2).float())

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        weights = self.class_weights.to(outputs.logits.device, outputs.logits.dtype)
        per_review = F.cross_entropy(outputs.logits, labels, reduction="none") * weights[labels]
        if num_items_in_batch is None:
            loss = per_review.sum() / labels.numel()
        else:
            scale = self.accelerator.num_processes if self.args.average_tokens_across_devices else 1
            loss = per_review.sum() * scale / num_items_in_batch
        return (loss, outputs) if return_outputs else loss


def my_focal_loss_func(outputs, labels, num_items_in_batch=None):
    log_p_true = F.log_softmax(outputs.logits.float(), dim=-1).gather(1, labels[:, None]).squeeze(1)
    per_review = -((1 - log_p_true.exp()) ** 2) * log_p_true
    return per_review.sum() / (num_items_in_batch if num_items_in_batch is not None else labels.numel())


# ---- realistic wrong answers (the tests prove each is caught) ----


class LessonWeightedTrainer(Trainer):
    """The lesson's WeightedLossTrainer pasted: it wants class_weights from outside, counts nothing itself."""

    def __init__(self, *args, class_weights, **kwargs):
        super().__init__(*args, **kwargs)
        self.class_weights = class_weights


class UnweightedTrainer(MyBalancedTrainer):
    """Forgets the weights: the model's own mean cross-entropy."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        outputs = model(**inputs)
        return (outputs.loss, outputs) if return_outputs else outputs.loss


class TorchWeightedMeanTrainer(MyBalancedTrainer):
    """F.cross_entropy(weight=...) with its default mean divides by the sum of the weights, not the review count."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = F.cross_entropy(outputs.logits, labels, weight=self.class_weights)
        return (loss, outputs) if return_outputs else loss


class PerBatchMeanTrainer(MyBalancedTrainer):
    """Right per batch, wrong under gradient accumulation: a per-batch mean without loss_is_scaled_for_ga = False."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = (F.cross_entropy(outputs.logits, labels, reduction="none") * self.class_weights[labels]).mean()
        return (loss, outputs) if return_outputs else loss


class ProcessDividedTrainer(MyBalancedTrainer):
    """Right on one process; divides by the number of processes instead of multiplying (half the loss on two)."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        per_review = F.cross_entropy(outputs.logits, labels, reduction="none") * self.class_weights[labels]
        count = labels.numel() if num_items_in_batch is None else num_items_in_batch
        loss = per_review.sum() / count / self.accelerator.num_processes
        return (loss, outputs) if return_outputs else loss


WRONG_TRAINERS = [
    LessonWeightedTrainer,
    UnweightedTrainer,
    TorchWeightedMeanTrainer,
    PerBatchMeanTrainer,
    ProcessDividedTrainer,
]


def focal_mean_loss_func(outputs, labels, num_items_in_batch=None):
    """A per-batch mean: scaled wrongly under gradient accumulation with compute_loss_func."""
    log_p_true = F.log_softmax(outputs.logits.float(), dim=-1).gather(1, labels[:, None]).squeeze(1)
    return (-((1 - log_p_true.exp()) ** 2) * log_p_true).mean()


def cross_entropy_loss_func(outputs, labels, num_items_in_batch=None):
    """Forgets the focal factor."""
    loss = F.cross_entropy(outputs.logits, labels, reduction="sum")
    return loss / (num_items_in_batch if num_items_in_batch is not None else labels.numel())


def focal_per_review_loss_func(outputs, labels, num_items_in_batch=None):
    """Forgets to reduce: one loss per review."""
    log_p_true = F.log_softmax(outputs.logits.float(), dim=-1).gather(1, labels[:, None]).squeeze(1)
    return -((1 - log_p_true.exp()) ** 2) * log_p_true


def focal_times_processes_loss_func(outputs, labels, num_items_in_batch=None):
    """Multiplies by the number of processes, which the Trainer already does for a compute_loss_func."""
    import torch.distributed as dist

    processes = dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1
    return my_focal_loss_func(outputs, labels, num_items_in_batch) * processes
