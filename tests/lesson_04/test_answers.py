"""Lesson 04's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from exercise_cases import answer_tests
from sklearn.metrics import accuracy_score, f1_score


def metrics_by_hand(prediction):
    logits = prediction.predictions[0] if isinstance(prediction.predictions, tuple) else prediction.predictions
    predicted, labels = logits.argmax(-1), prediction.label_ids
    f1s = []
    for c in (0, 1):
        tp = np.sum((predicted == c) & (labels == c))
        precision = tp / max(np.sum(predicted == c), 1)
        recall = tp / max(np.sum(labels == c), 1)
        f1s.append(0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall))
    return {"accuracy": float((predicted == labels).mean()), "f1_macro": float(np.mean(f1s))}


def metrics_torch(prediction):
    from sklearn.metrics import f1_score

    predictions = prediction.predictions
    logits = torch.as_tensor(predictions[0] if isinstance(predictions, (tuple, list)) else predictions)
    predicted = logits.argmax(dim=-1).numpy()
    return {
        "accuracy": float(np.mean(predicted == prediction.label_ids)),
        "f1_macro": f1_score(prediction.label_ids, predicted, average="macro"),
    }


def metrics_binary_f1(prediction):
    from sklearn.metrics import f1_score

    predicted = prediction.predictions[0].argmax(-1)
    return {
        "accuracy": float((predicted == prediction.label_ids).mean()),
        "f1_macro": f1_score(prediction.label_ids, predicted),
    }


def metrics_no_tuple(prediction):
    predicted = np.argmax(prediction.predictions, axis=-1)
    return {"accuracy": float((predicted == prediction.label_ids).mean()), "f1_macro": 0.5}


class StreamingLists:
    def __init__(self):
        self.hits = []

    def __call__(self, prediction, compute_result):
        self.hits.append((prediction.predictions.argmax(-1) == prediction.label_ids).cpu())
        if compute_result:
            hits, self.hits = torch.cat(self.hits), []
            return {"accuracy": hits.float().mean().item()}
        return {}


class StreamingFloats:
    correct = None

    def __call__(self, eval_prediction, compute_result=False):
        if self.correct is None:
            self.correct, self.seen = 0.0, 0.0
        self.correct += float((eval_prediction.predictions.argmax(-1) == eval_prediction.label_ids).sum())
        self.seen += len(eval_prediction.label_ids)
        if not compute_result:
            return {}
        result, self.correct = {"accuracy": self.correct / self.seen}, None
        return result


class StreamingMeanOfBatches:
    def __init__(self):
        self.accuracies = []

    def __call__(self, prediction, compute_result):
        self.accuracies.append(float((prediction.predictions.argmax(-1) == prediction.label_ids).float().mean()))
        if compute_result:
            result, self.accuracies = {"accuracy": float(np.mean(self.accuracies))}, []
            return result
        return {}


class StreamingNoReset:
    def __init__(self):
        self.right = self.total = 0

    def __call__(self, prediction, compute_result):
        self.right += int((prediction.predictions.argmax(-1) == prediction.label_ids).sum())
        self.total += len(prediction.label_ids)
        return {"accuracy": self.right / self.total} if compute_result else {}


# Realistic mistakes derived from the reference solution by one change.


def labels_against_labels(eval_prediction: Any) -> dict[str, float]:
    """Compares the labels with themselves: always 1.0."""
    labels = eval_prediction.label_ids
    return {
        "accuracy": float(accuracy_score(labels, labels)),
        "f1_macro": float(f1_score(labels, labels, average="macro")),
    }


CORRECT = {
    "q1": [metrics_by_hand, metrics_torch],
    "q2": [StreamingLists, StreamingFloats],
    "q3": [
        {"eval_strategy": "epoch", "save_strategy": "epoch", "load_best_model_at_end": True},
        {
            "eval_strategy": "epoch",
            "save_strategy": "epoch",
            "load_best_model_at_end": True,
            "metric_for_best_model": "loss",
            "save_total_limit": 1,
        },
    ],
    "q4": [
        {
            "eval_strategy": "epoch",
            "save_strategy": "epoch",
            "load_best_model_at_end": True,
            "metric_for_best_model": "eval_clean_loss",
            "greater_is_better": False,
        },
        {  # by steps: 48 rows in batches of 8 make 6 steps an epoch
            "eval_strategy": "steps",
            "eval_steps": 6,
            "save_strategy": "steps",
            "save_steps": 6,
            "load_best_model_at_end": True,
            "metric_for_best_model": "clean_loss",
        },
    ],
}

MISTAKES = {
    "q1": [
        (metrics_binary_f1, "average='macro'"),
        (metrics_no_tuple, "take its first item"),
        (labels_against_labels, "compare np.argmax(logits, -1) with label_ids"),
    ],
    "q2": [(StreamingMeanOfBatches, "count over every batch"), (StreamingNoReset, "reset your counts")],
    "q3": [
        (
            {
                "eval_strategy": "epoch",
                "save_strategy": "epoch",
                "load_best_model_at_end": True,
                "metric_for_best_model": "eval_loss",
                "greater_is_better": True,
            },
            "lower is better",
        ),
        ({"eval_strategy": "epoch", "save_strategy": "epoch"}, "load_best_model_at_end=True"),
        (
            {
                "eval_strategy": "epoch",
                "save_strategy": "steps",
                "load_best_model_at_end": True,
                "metric_for_best_model": "eval_loss",
                "greater_is_better": False,
                "save_steps": 3,
            },
            "save and eval strategy to match",
        ),
    ],
    "q4": [
        # the single-set answer of exercise 3: the default metric, "loss", is no name of a two-set run
        ({"eval_strategy": "epoch", "save_strategy": "epoch", "load_best_model_at_end": True}, "one set's metric"),
        (
            {
                "eval_strategy": "epoch",
                "save_strategy": "epoch",
                "load_best_model_at_end": True,
                "metric_for_best_model": "eval_noisy_loss",
            },
            "that metric is the noisy set's",
        ),
        (
            # the highest noisy loss: the old message called the noisy loss it kept "the clean loss"
            {
                "eval_strategy": "epoch",
                "save_strategy": "epoch",
                "load_best_model_at_end": True,
                "metric_for_best_model": "noisy_loss",
                "greater_is_better": True,
            },
            "which is not its clean loss",
        ),
        (
            {
                "eval_strategy": "epoch",
                "save_strategy": "epoch",
                "load_best_model_at_end": True,
                "metric_for_best_model": "clean_loss",
                "greater_is_better": True,
            },
            "lower is better",
        ),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
