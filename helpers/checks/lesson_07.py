"""Exercises of lesson 07 (custom losses). Each check runs the learner's code in a real, tiny Trainer and judges the
logged loss and gradient norm: batch 4 x accumulation 2 must log what batch 8 x accumulation 1 logs."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from helpers.checks import fixtures
from helpers.checks.core import Exercise, Wrong, learner_code
from helpers.solutions import lesson_07 as solutions

GAMMA = 2.0
LABELS = ([1, 0, 0, 0, 0, 0, 1, 0], [1, 1, 0, 0, 0, 1, 0, 0])  # 2 and 3 positives out of 8: different weights


def _data(labels: list[int]) -> Any:
    return fixtures.random_ids(8).remove_columns("labels").add_column("labels", labels)


def _first_log(trainer: Any) -> dict[str, float]:
    return fixtures.train(trainer, "training with your loss").state.log_history[0]


def _same(a: float, b: float, rel: float = 1e-4) -> bool:
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-12)


def _compare_runs(make: Any, reference: float, what: str) -> None:
    """Batch 8 x 1 must log ``reference``; batch 4 x 2 the same loss and grad_norm."""
    big = _first_log(make(per_device_train_batch_size=8))
    small = _first_log(make(per_device_train_batch_size=4, gradient_accumulation_steps=2))
    if not _same(big["loss"], reference):
        raise Wrong(f"{what}: batch 8 x 1 logged loss {big['loss']:.5f}, the expected loss is {reference:.5f}.")
    if not (_same(big["loss"], small["loss"]) and _same(big["grad_norm"], small["grad_norm"])):
        raise Wrong(
            f"{what}: batch 4 x accumulation 2 logged loss {small['loss']:.5f} and grad_norm {small['grad_norm']:.5f}, "
            f"batch 8 x 1 logged {big['loss']:.5f} and {big['grad_norm']:.5f}. Divide the summed loss by "
            "num_items_in_batch when it is given, or return a per-batch mean and set loss_is_scaled_for_ga = False."
        )


def _check_balanced_trainer(answer: Any) -> None:
    from transformers import Trainer

    if not (isinstance(answer, type) and issubclass(answer, Trainer)):
        raise Wrong(f"MyBalancedTrainer must be a class that subclasses transformers.Trainer, got {answer!r}.")
    for labels in LABELS:
        data, counts = _data(labels), torch.bincount(torch.tensor(labels), minlength=2).float()
        weights = len(labels) / (2 * counts)
        batch = fixtures.batch(data, 8)
        with torch.no_grad():
            logits = fixtures.tiny_model()(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
        reference = float(
            (F.cross_entropy(logits, batch["labels"], reduction="none") * weights[batch["labels"]]).mean()
        )
        what = f"{sum(labels)} positives in 8 reviews (weights {weights[0]:.3f}, {weights[1]:.3f})"

        def make(data: Any = data, **settings: Any) -> Any:
            settings.update(max_steps=1, logging_steps=1, save_strategy="no", learning_rate=1e-3)
            return fixtures.trainer(settings, trainer_class=answer, train_dataset=data)

        trainer = make(per_device_eval_batch_size=8)
        with learner_code(
            "evaluating with your Trainer (prediction_step calls compute_loss(..., return_outputs=True))"
        ):
            evaluated = trainer.evaluate(eval_dataset=data)["eval_loss"]
        if not _same(evaluated, reference):
            raise Wrong(
                f"{what}: evaluation gives loss {evaluated:.5f}, the balanced weighted cross-entropy is "
                f"{reference:.5f}. Weight class c by N / (2 * count_c), counted on train_dataset['labels']; sum "
                "weight[label] * CE over the reviews and divide by their number (num_items_in_batch is None here)."
            )
        _compare_runs(make, reference, what)


def _check_focal_func(answer: Any) -> None:
    from types import SimpleNamespace

    if not callable(answer):
        raise Wrong(
            f"my_focal_loss_func must be a function (outputs, labels, num_items_in_batch=None), got {answer!r}."
        )
    data = fixtures.random_ids(8, seed=2)
    batch, model = fixtures.batch(data, 8), fixtures.tiny_model()
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits * 20
    for rows, items in ((8, None), (5, torch.tensor(13))):
        log_p = F.log_softmax(logits[:rows], dim=-1).gather(1, batch["labels"][:rows, None]).squeeze(1)
        expected = float((-((1 - log_p.exp()) ** GAMMA) * log_p).sum() / (items if items is not None else rows))
        with learner_code(f"calling your function on {rows} reviews with num_items_in_batch={items}"):
            got = answer(SimpleNamespace(logits=logits[:rows]), batch["labels"][:rows], num_items_in_batch=items)
        if not torch.is_tensor(got) or got.numel() != 1:
            raise Wrong(f"the function must return a scalar tensor (the loss), got {type(got).__name__}.")
        if not _same(float(got), expected):
            plain = float(F.cross_entropy(logits[:rows], batch["labels"][:rows], reduction="sum")) / (items or rows)
            raise Wrong(
                f"on {rows} reviews with num_items_in_batch={None if items is None else int(items)} your loss is "
                f"{float(got):.5f}, the focal loss (gamma 2) summed and divided by "
                f"{'the batch size' if items is None else 'num_items_in_batch'} is {expected:.5f}."
                + (
                    " That is plain cross-entropy: multiply each review's CE by (1 - p_true) ** 2."
                    if _same(float(got), plain)
                    else ""
                )
            )
    log_p = F.log_softmax(model(**{k: v for k, v in batch.items() if k != "labels"}).logits.detach(), -1)
    log_p = log_p.gather(1, batch["labels"][:, None]).squeeze(1)
    reference = float((-((1 - log_p.exp()) ** GAMMA) * log_p).mean())

    def make(**settings: Any) -> Any:
        settings.update(max_steps=1, logging_steps=1, save_strategy="no", learning_rate=1e-3)
        return fixtures.trainer(settings, train_dataset=data, compute_loss_func=answer)

    _compare_runs(make, reference, "in a Trainer with compute_loss_func")


q1 = Exercise(
    name="07.1",
    answer_name="MyBalancedTrainer",
    checker=_check_balanced_trainer,
    hint_text=(
        "In __init__, call super().__init__(*args, **kwargs), then count self.train_dataset['labels'] per class and "
        "keep weights N / (2 * count). In compute_loss pop the labels, run the model, take "
        "F.cross_entropy(logits, labels, reduction='none') * weights[labels], sum, and divide by num_items_in_batch "
        "if it is given (times self.accelerator.num_processes when args.average_tokens_across_devices), else by "
        "labels.numel(). Return (loss, outputs) if return_outputs."
    ),
    solution_obj=solutions.MyBalancedTrainer,
    wrong_answers=solutions.WRONG_TRAINERS,
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
