"""Exercises of lesson 07 (custom losses). Each check runs the learner's code in a real, tiny Trainer.

The tiny Trainer (:func:`tiny_trainer`) uses a 2-layer BERT with hidden size 32, dropout off, on fixed-length
random token ids, so that a run takes a second and batch 4 x accumulation 2 must equal batch 8 x accumulation 1.
Lesson 08's checks reuse it.
"""

from __future__ import annotations

import tempfile
from typing import Any

import torch
import torch.nn.functional as F

from helpers.checks.core import Exercise, Wrong
from helpers.solutions import lesson_07 as solutions

CHECK_WEIGHTS = (1.0, 3.0)
GAMMA = 2.0


def tiny_model(seed: int = 0) -> Any:
    """A 2-layer, 32-wide BERT sequence classifier, dropout off (deterministic), random weights."""
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        num_labels=2,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return BertForSequenceClassification(config)


def tiny_dataset(rows: int = 48, length: int = 12, seed: int = 0) -> Any:
    """Random token ids of one length (no padding needed) with labels that depend on the first token."""
    from datasets import Dataset

    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(1, 100, (rows, length), generator=generator)
    labels = (ids[:, 1] > 70).long()  # about 30 % positive
    return Dataset.from_dict(
        {"input_ids": ids.tolist(), "attention_mask": torch.ones_like(ids).tolist(), "labels": labels.tolist()}
    )


def tiny_trainer(
    trainer_class: type | None = None,
    batch_size: int = 8,
    accumulation: int = 1,
    max_steps: int = 1,
    callbacks: list[Any] | None = None,
    max_grad_norm: float = 1.0,
    learning_rate: float = 1e-3,
    **trainer_kwargs: Any,
) -> Any:
    """A Trainer (or ``trainer_class``) on :func:`tiny_model` and :func:`tiny_dataset`, CPU, no saving, seed 0."""
    from transformers import Trainer, TrainingArguments

    trainer_class = trainer_class or Trainer
    args = TrainingArguments(
        output_dir=tempfile.mkdtemp(prefix="course-check-"),
        per_device_train_batch_size=batch_size,
        gradient_accumulation_steps=accumulation,
        max_steps=max_steps,
        learning_rate=learning_rate,
        max_grad_norm=max_grad_norm,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    return trainer_class(
        model=tiny_model(), args=args, train_dataset=tiny_dataset(), callbacks=callbacks, **trainer_kwargs
    )


def first_logged(trainer: Any) -> dict[str, float]:
    """Train and return the first log entry (loss, grad_norm, learning_rate)."""
    trainer.train()
    return trainer.state.log_history[0]


def fixed_batch(size: int = 8) -> dict[str, torch.Tensor]:
    """The first ``size`` rows of the tiny dataset as a batch of tensors."""
    rows = tiny_dataset()[:size]
    return {key: torch.tensor(value) for key, value in rows.items()}


def _weighted_reference(logits: torch.Tensor, labels: torch.Tensor, count: int) -> torch.Tensor:
    per_review = F.cross_entropy(logits, labels, weight=torch.tensor(CHECK_WEIGHTS), reduction="none")
    return per_review.sum() / count


def _same(a: float, b: float, rel: float = 1e-4) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def _check_weighted_trainer(answer: Any) -> None:
    from transformers import Trainer

    if not (isinstance(answer, type) and issubclass(answer, Trainer)):
        raise Wrong(f"MyWeightedTrainer must be a class that subclasses transformers.Trainer, got {answer!r}.")
    weights = torch.tensor(CHECK_WEIGHTS)
    trainer = tiny_trainer(answer, class_weights=weights)
    batch = fixed_batch()
    model = trainer.model.eval()
    with torch.no_grad():
        logits = model(**{k: v for k, v in batch.items() if k != "labels"}).logits
        result = trainer.compute_loss(model, dict(batch), return_outputs=True, num_items_in_batch=None)
        if not (isinstance(result, tuple) and len(result) == 2):
            raise Wrong(
                "with return_outputs=True, compute_loss must return the pair (loss, outputs); evaluation "
                "(prediction_step) needs the outputs for the logits."
            )
        loss_alone = trainer.compute_loss(model, dict(batch), num_items_in_batch=None)
        loss_over_16 = trainer.compute_loss(model, dict(batch), num_items_in_batch=16)
    if isinstance(loss_alone, tuple):
        raise Wrong("with return_outputs=False (the default), compute_loss must return the loss alone, not a tuple.")
    expected = _weighted_reference(logits, batch["labels"], 8)
    if not torch.allclose(loss_alone.float(), expected, rtol=1e-4):
        raise Wrong(
            f"on a batch of 8, your loss is {float(loss_alone):.5f} but the weighted cross-entropy (sum of "
            f"weight[label] * CE over the reviews, divided by 8) is {float(expected):.5f}. Use "
            "F.cross_entropy(..., weight=self.class_weights, reduction='none').sum() and divide by the count."
        )
    expected_16 = _weighted_reference(logits, batch["labels"], 16)
    if not torch.allclose(loss_over_16.float(), expected_16, rtol=1e-4):
        raise Wrong(
            f"called with num_items_in_batch=16 your loss is {float(loss_over_16):.5f}, expected "
            f"{float(expected_16):.5f}: divide the summed loss by num_items_in_batch when it is given."
        )
    big = first_logged(tiny_trainer(answer, class_weights=weights, batch_size=8))
    accumulated = first_logged(tiny_trainer(answer, class_weights=weights, batch_size=4, accumulation=2))
    if not (_same(big["loss"], accumulated["loss"]) and _same(big["grad_norm"], accumulated["grad_norm"])):
        raise Wrong(
            f"batch 4 x accumulation 2 logged loss {accumulated['loss']:.5f} and grad_norm "
            f"{accumulated['grad_norm']:.5f}, but batch 8 x 1 logged {big['loss']:.5f} and "
            f"{big['grad_norm']:.5f}. Check how your loss uses num_items_in_batch."
        )


def _check_focal_func(answer: Any) -> None:
    if not callable(answer):
        raise Wrong(
            f"my_focal_loss_func must be a function (outputs, labels, num_items_in_batch=None), got {answer!r}."
        )
    from types import SimpleNamespace

    torch.manual_seed(1)
    logits, labels = torch.randn(8, 2) * 2, torch.randint(0, 2, (8,))
    log_p = F.log_softmax(logits, dim=-1).gather(1, labels[:, None]).squeeze(1)
    per_review = -((1 - log_p.exp()) ** GAMMA) * log_p
    outputs = SimpleNamespace(logits=logits)
    got = answer(outputs, labels, num_items_in_batch=None)
    if not torch.is_tensor(got) or got.numel() != 1:
        raise Wrong(f"the function must return a scalar tensor (the loss), got {type(got).__name__}.")
    if not torch.allclose(got.float(), per_review.sum() / 8, rtol=1e-4):
        ce = F.cross_entropy(logits, labels)
        extra = (
            " That is plain cross-entropy: multiply each review's CE by (1 - p_true) ** 2."
            if torch.allclose(got.float(), ce, rtol=1e-4)
            else ""
        )
        raise Wrong(
            f"with num_items_in_batch=None your loss is {float(got):.5f}, expected focal loss (gamma 2) "
            f"summed and divided by the batch size, {float(per_review.sum() / 8):.5f}.{extra}"
        )
    got_16 = answer(outputs, labels, num_items_in_batch=torch.tensor(16))
    if not torch.allclose(got_16.float(), per_review.sum() / 16, rtol=1e-4):
        raise Wrong(
            f"with num_items_in_batch=16 your loss is {float(got_16):.5f}, expected "
            f"{float(per_review.sum() / 16):.5f}. With compute_loss_func the Trainer does not divide by the "
            "accumulation steps: divide the sum by num_items_in_batch yourself."
        )
    big = first_logged(tiny_trainer(batch_size=8, compute_loss_func=answer))
    accumulated = first_logged(tiny_trainer(batch_size=4, accumulation=2, compute_loss_func=answer))
    if not _same(big["loss"], accumulated["loss"]):
        raise Wrong(
            f"in a Trainer, batch 4 x accumulation 2 logged loss {accumulated['loss']:.5f} but batch 8 x 1 "
            f"logged {big['loss']:.5f}."
        )


q1 = Exercise(
    name="07.1",
    answer_name="MyWeightedTrainer",
    checker=_check_weighted_trainer,
    hint_text=(
        "Take `class_weights` in __init__ (call super().__init__ with the rest), pop the labels, run the model, "
        "F.cross_entropy(logits, labels, weight=..., reduction='none').sum(), and divide by num_items_in_batch "
        "if it is not None, else by the number of labels. Return (loss, outputs) if return_outputs."
    ),
    solution_obj=solutions.MyWeightedTrainer,
    wrong_answers=[
        solutions.UnweightedMeanTrainer,
        solutions.TorchWeightedMeanTrainer,
        solutions.IgnoresItemCountTrainer,
        solutions.NoOutputsTrainer,
    ],
)

q2 = Exercise(
    name="07.2",
    answer_name="my_focal_loss_func",
    checker=_check_focal_func,
    hint_text=(
        "log_p = F.log_softmax(outputs.logits, -1).gather(1, labels[:, None]).squeeze(1); per review: "
        "-(1 - log_p.exp()) ** 2 * log_p; sum it and divide by num_items_in_batch (or labels.numel() if None)."
    ),
    solution_obj=solutions.my_focal_loss_func,
    wrong_answers=[solutions.focal_mean_loss_func, solutions.cross_entropy_loss_func],
)
