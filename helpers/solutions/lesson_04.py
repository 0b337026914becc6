"""Reference solutions (and realistic wrong answers) for the exercises of lesson 04."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.metrics import accuracy_score, f1_score


def my_compute_metrics(eval_prediction: Any) -> dict[str, float]:
    """Exercise 1: accuracy and macro F1; the logits are the first item when predictions are a tuple."""
    logits = eval_prediction.predictions
    if isinstance(logits, tuple):
        logits = logits[0]
    predicted = np.argmax(logits, axis=-1)
    labels = eval_prediction.label_ids
    return {
        "accuracy": float(accuracy_score(labels, predicted)),
        "f1_macro": float(f1_score(labels, predicted, average="macro", zero_division=0)),
    }


class MyStreamingAccuracy:
    """Exercise 2: count right answers batch by batch; return and reset when compute_result is True."""

    def __init__(self) -> None:
        self.correct = 0
        self.total = 0

    def __call__(self, eval_prediction: Any, compute_result: bool) -> dict[str, float]:
        predicted = eval_prediction.predictions.argmax(-1)
        self.correct += int((predicted == eval_prediction.label_ids).sum())
        self.total += int(eval_prediction.label_ids.numel())
        if not compute_result:
            return {}
        result = {"accuracy": self.correct / self.total}
        self.correct = self.total = 0
        return result


MY_BEST_MODEL_ARGS: dict[str, Any] = {
    "eval_strategy": "epoch",
    "save_strategy": "epoch",
    "load_best_model_at_end": True,
    "metric_for_best_model": "eval_loss",
    "greater_is_better": False,
}


# ---- realistic wrong answers (the tests prove each is caught) ----


def argmax_of_tuple(eval_prediction: Any) -> dict[str, float]:
    """Forgets that predictions can be a tuple."""
    predicted = np.argmax(eval_prediction.predictions, axis=-1)
    labels = eval_prediction.label_ids
    return {"accuracy": float((predicted == labels).mean()), "f1_macro": float(f1_score(labels, predicted))}


def binary_f1(eval_prediction: Any) -> dict[str, float]:
    """Uses the default binary F1 (positive class only) instead of the macro average."""
    logits = (
        eval_prediction.predictions[0]
        if isinstance(eval_prediction.predictions, tuple)
        else eval_prediction.predictions
    )
    predicted = logits.argmax(-1)
    labels = eval_prediction.label_ids
    return {"accuracy": float(accuracy_score(labels, predicted)), "f1_macro": float(f1_score(labels, predicted))}


def labels_against_labels(eval_prediction: Any) -> dict[str, float]:
    """Compares the labels with themselves: always 1.0."""
    labels = eval_prediction.label_ids
    return {
        "accuracy": float(accuracy_score(labels, labels)),
        "f1_macro": float(f1_score(labels, labels, average="macro")),
    }


class LastBatchAccuracy:
    """Returns the accuracy of the last batch only."""

    def __call__(self, eval_prediction: Any, compute_result: bool) -> dict[str, float]:
        predicted = eval_prediction.predictions.argmax(-1)
        return {"accuracy": float((predicted == eval_prediction.label_ids).float().mean())}


class NeverResetAccuracy(MyStreamingAccuracy):
    """Accumulates correctly but never resets, so the second evaluation mixes in the first."""

    def __call__(self, eval_prediction: Any, compute_result: bool) -> dict[str, float]:
        predicted = eval_prediction.predictions.argmax(-1)
        self.correct += int((predicted == eval_prediction.label_ids).sum())
        self.total += int(eval_prediction.label_ids.numel())
        return {"accuracy": self.correct / self.total} if compute_result else {}


HIGHEST_LOSS_ARGS = {**MY_BEST_MODEL_ARGS, "greater_is_better": True}
MISMATCHED_STRATEGY_ARGS = {**MY_BEST_MODEL_ARGS, "save_strategy": "steps", "save_steps": 3}
NO_LOAD_BEST_ARGS = {key: value for key, value in MY_BEST_MODEL_ARGS.items() if key != "load_best_model_at_end"}


# Exercise 4: the best checkpoint by one of several evaluation sets.
MY_TWO_SET_ARGS: dict[str, Any] = {
    "eval_strategy": "epoch",
    "save_strategy": "epoch",
    "load_best_model_at_end": True,
    "metric_for_best_model": "clean_loss",
}
ONE_SET_NAME_ARGS = {**MY_TWO_SET_ARGS, "metric_for_best_model": "eval_loss"}  # the single-set name: no such key
NOISY_SET_ARGS = {**MY_TWO_SET_ARGS, "metric_for_best_model": "noisy_loss"}  # the other set
TWO_SET_HIGHEST_ARGS = {**MY_TWO_SET_ARGS, "greater_is_better": True}  # the highest clean loss
