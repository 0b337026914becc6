"""Reference solutions for the exercises of lesson 04."""

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


# Exercise 4: the best checkpoint by one of several evaluation sets.
MY_TWO_SET_ARGS: dict[str, Any] = {
    "eval_strategy": "epoch",
    "save_strategy": "epoch",
    "load_best_model_at_end": True,
    "metric_for_best_model": "clean_loss",
}
