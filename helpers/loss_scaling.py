"""Trainer subclasses that scale a loss in each of the ways lesson 07's appendix compares.

Each is one row of ``LOSS_SCALING_RECIPES`` (exported by lesson 07, run on 2 processes in lesson 10): a loss
scaled right or wrong under gradient accumulation and on several processes. They are measuring instruments,
not code to copy: the lesson's pattern (``WeightedLossTrainer``) is the one to copy.
"""

from __future__ import annotations

from typing import Any

import torch.nn.functional as F
from transformers import Trainer


class MeanLossTrainer(Trainer):
    """A per-batch mean that ignores num_items_in_batch (the trap)."""

    def compute_loss(
        self, model: Any, inputs: Any, return_outputs: bool = False, num_items_in_batch: Any = None
    ) -> Any:
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = F.cross_entropy(outputs.logits, labels)
        return (loss, outputs) if return_outputs else loss


class ScaledMeanLossTrainer(MeanLossTrainer):
    """Fix 1: the per-batch mean; the Trainer divides it by the accumulation steps."""

    loss_is_scaled_for_ga = False


class MeanLossNoKwargsTrainer(MeanLossTrainer):
    """The per-batch mean, with model_accepts_loss_kwargs=False."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model_accepts_loss_kwargs = False


class SumOverCountTrainer(Trainer):
    """Summed cross-entropy over num_items_in_batch, without a factor for processes."""

    def compute_loss(
        self, model: Any, inputs: Any, return_outputs: bool = False, num_items_in_batch: Any = None
    ) -> Any:
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss = F.cross_entropy(outputs.logits, labels, reduction="sum")
        loss = loss / (labels.numel() if num_items_in_batch is None else num_items_in_batch)
        return (loss, outputs) if return_outputs else loss


class StockScaledTrainer(Trainer):
    """The stock model's loss, with loss_is_scaled_for_ga = False."""

    loss_is_scaled_for_ga = False


class StockNoKwargsTrainer(Trainer):
    """The stock model's loss, with model_accepts_loss_kwargs = False."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.model_accepts_loss_kwargs = False


def loss_scaling_recipes(weighted_trainer: Any, plain_loss_func: Any) -> dict[str, tuple[Any, dict[str, Any], Any]]:
    """The eight recipes by name: ``(Trainer class, extra Trainer keywords, factor)``, where ``factor(k, p)`` is
    how many times too large the logged loss and the gradient are with accumulation ``k`` on ``p`` processes.

    ``weighted_trainer`` and ``plain_loss_func`` are lesson 07's ``WeightedLossTrainer`` (sum over the count, times
    the processes) and ``plain_loss_func`` (a ``compute_loss_func``), which the lesson passes in.
    """
    from torch import ones

    return {
        "stock model": (Trainer, {}, lambda k, p: k * p),
        "stock + loss_is_scaled_for_ga=False": (StockScaledTrainer, {}, lambda k, p: p),
        "stock + model_accepts_loss_kwargs=False": (StockNoKwargsTrainer, {}, lambda k, p: 1),
        "own mean + loss_is_scaled_for_ga=False": (ScaledMeanLossTrainer, {}, lambda k, p: 1),
        "own mean + model_accepts_loss_kwargs=False": (MeanLossNoKwargsTrainer, {}, lambda k, p: 1),
        "own sum / num_items_in_batch": (SumOverCountTrainer, {}, lambda k, p: 1 / p),
        "own sum / num_items_in_batch x processes": (weighted_trainer, {"class_weights": ones(2)}, lambda k, p: 1),
        "compute_loss_func: sum / num_items_in_batch": (
            Trainer,
            {"compute_loss_func": plain_loss_func},
            lambda k, p: 1,
        ),
    }


def one_sgd_step(
    trainer_class: Any, make_model: Any, data: Any, batch_size: int, accumulation: int, **keywords: Any
) -> Any:
    """One plain SGD step (learning rate 0.01, no clipping) on all of ``data`` as ``batch_size`` x accumulation
    ``accumulation``, the model built by ``make_model()`` after seeding 0: its logged ``[loss, grad_norm]`` as a
    NumPy array. ``keywords`` go to the Trainer (``class_weights``, ``processing_class``, ...).

    With 10 rows as 4 x 3 the step's micro-batches hold 4, 4 and 2 rows: the case where a mean per micro-batch
    and a sum over the whole batch's count part ways (lesson 07, section 5).

    Raises:
        ValueError: ``data`` holds more rows than one step takes (``batch_size * accumulation``).
    """
    import tempfile

    import numpy as np
    from transformers import TrainingArguments, set_seed

    from helpers.trainers import quiet

    if len(data) > batch_size * accumulation:
        raise ValueError(
            f"{len(data)} rows need more than one step of {batch_size} x {accumulation}; pass at most "
            f"{batch_size * accumulation} rows, so that the step covers all of them."
        )
    set_seed(0)
    with tempfile.TemporaryDirectory(prefix="one-sgd-step-") as folder:  # nothing is saved there
        args = TrainingArguments(
            output_dir=folder,
            per_device_train_batch_size=batch_size,
            gradient_accumulation_steps=accumulation,
            max_steps=1,
            optim="sgd",
            max_grad_norm=0.0,
            learning_rate=0.01,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            seed=0,
        )
        trainer = trainer_class(model=make_model(), args=args, train_dataset=data, **keywords)
        quiet(trainer).train()
    log = trainer.state.log_history[0]
    return np.array([log["loss"], log["grad_norm"]])
