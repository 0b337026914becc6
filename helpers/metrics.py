"""The course's scikit-learn ``compute_metrics`` for classifiers, shared by the lessons after lesson 04.

Lesson 04 teaches the pattern: a ``compute_metrics(eval_prediction)`` of a few lines of scikit-learn. This
module is the same idea made robust, so later lessons need not repeat it::

    from helpers.metrics import make_compute_metrics
    trainer = Trainer(..., compute_metrics=make_compute_metrics())

It returns accuracy, precision, recall and F1 from the argmax class, and ROC-AUC and average precision from
softmax probabilities. It accepts what real evaluations hand over: logits, a tuple whose first item is the
logits (a model that also returns hidden states), class ids (after a ``preprocess_logits_for_metrics``),
token-level arrays (``-100`` labels dropped) and torch tensors (``batch_eval_metrics``). Input it cannot
score raises :class:`MetricsInputError` with what to check, instead of a wrong number or a failure deep
inside scikit-learn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.metrics import accuracy_score, average_precision_score, precision_recall_fscore_support, roc_auc_score

IGNORE_INDEX = -100  # the label of padding tokens: never scored
AVERAGES: tuple[str, ...] = ("auto", "binary", "macro", "weighted", "micro")

Average = str | Sequence[str]


class MetricsInputError(ValueError):
    """What ``compute_metrics`` received cannot be scored as it is; the message says what to check."""


def softmax(logits: Any, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax of ``logits`` over ``axis``, in float64."""
    values = np.asarray(logits, dtype=np.float64)
    exponentials = np.exp(values - values.max(axis=axis, keepdims=True))
    return exponentials / exponentials.sum(axis=axis, keepdims=True)


def _first_array(value: Any, what: str) -> np.ndarray:
    """``value`` as a NumPy array; of a tuple (logits, hidden states...), its first item."""
    if isinstance(value, tuple | list):
        if len(value) == 0:
            raise MetricsInputError(f"{what} is an empty tuple: nothing to score.")
        value = value[0]
    if value is None:
        raise MetricsInputError(
            f"{what} is None: the Trainer passes label_ids only when the eval dataset "
            "has a labels column (check `label_names` and `remove_unused_columns`)."
        )
    if hasattr(value, "detach"):  # batch_eval_metrics passes torch tensors (maybe bf16)
        tensor = value.detach().cpu()
        value = (tensor.float() if tensor.is_floating_point() else tensor).numpy()
    array = np.asarray(value)
    if array.dtype == object:
        raise MetricsInputError(f"{what} has dtype object (ragged arrays?): pad them.")
    return array


def split_predictions(
    predictions: Any, label_ids: Any, from_logits: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(labels, predicted class ids, probabilities or ``None``) from an ``EvalPrediction``'s two fields.

    ``predictions`` are scores (the labels' shape plus a class axis) or class ids (the labels' shape);
    ``from_logits=False`` means the scores already are probabilities. Rows labelled ``-100`` are dropped.

    Raises:
        MetricsInputError: missing labels, NaN or infinite scores, shapes that do not match, one score column.
    """
    scores = _first_array(predictions, "predictions")
    labels = _first_array(label_ids, "label_ids")
    if scores.dtype.kind == "f" and not np.isfinite(scores).all():
        raise MetricsInputError(
            f"predictions hold {(~np.isfinite(scores)).sum()} NaN or infinite values: "
            "the model diverged or overflowed. Check the training loss, lower the "
            "learning rate, or evaluate in fp32 (fp16 overflows above 65504)."
        )
    has_scores = scores.ndim == labels.ndim + 1  # one more axis: a score per class
    if scores.shape[: labels.ndim] != labels.shape or (not has_scores and scores.ndim != labels.ndim):
        raise MetricsInputError(
            f"predictions have shape {scores.shape}, labels {labels.shape}: expected "
            "scores (the labels' shape + a class axis) or class ids (labels' shape)."
        )
    if has_scores and scores.shape[-1] < 2:
        raise MetricsInputError(
            f"predictions have {scores.shape[-1]} score column: a classifier needs "
            "one per class (a single-logit regression head is not a classifier)."
        )
    scores = scores.reshape(-1, scores.shape[-1]) if has_scores else scores.reshape(-1)
    labels = labels.reshape(-1)
    keep = labels != IGNORE_INDEX
    labels, scores = labels[keep].astype(np.int64), scores[keep]
    if labels.size == 0:
        raise MetricsInputError("no labels left to score (all were missing or -100).")
    if not has_scores:
        return labels, scores.astype(np.int64), None
    probabilities = softmax(scores) if from_logits else scores.astype(np.float64)
    return labels, probabilities.argmax(axis=-1), probabilities


def _resolve_average(average: str, num_classes: int) -> str:
    """``auto`` as binary (two classes) or macro; refuses binary for more than two classes."""
    if average not in AVERAGES:
        raise MetricsInputError(f"average must be one of {AVERAGES}, got {average!r}.")
    if average == "auto":
        return "binary" if num_classes <= 2 else "macro"
    if average == "binary" and num_classes > 2:
        raise MetricsInputError(
            f"average='binary' needs two classes but {num_classes} were seen; use 'macro', 'weighted' or 'micro'."
        )
    return average


def _ranking_metrics(
    labels: np.ndarray, probabilities: np.ndarray, positive_label: int, num_classes: int
) -> dict[str, float]:
    """ROC-AUC and average precision from probabilities; ``nan`` when the labels hold one class only."""
    if np.unique(labels).size < 2:
        return {"roc_auc": float("nan"), "average_precision": float("nan")}
    if num_classes == 2:
        truth, scores = labels == positive_label, probabilities[:, positive_label]
    else:  # one-vs-rest, macro; a class absent from the labels has no curve
        truth = labels[:, None] == np.arange(num_classes)[None, :]
        seen = truth.any(axis=0)
        truth, scores = truth[:, seen], probabilities[:, seen]
    return {
        "roc_auc": float(roc_auc_score(truth, scores, average="macro")),
        "average_precision": float(average_precision_score(truth, scores)),
    }


def _averaged_scores(
    labels: np.ndarray, predicted: np.ndarray, average: str, num_classes: int, positive_label: int, zero_div: float
) -> dict[str, float]:
    """Precision, recall and F1 with one resolved ``average``."""
    precision, recall, f1, _ = precision_recall_fscore_support(
        labels,
        predicted,
        average=average,
        labels=None if average == "binary" else list(range(num_classes)),
        pos_label=positive_label,
        zero_division=zero_div,
    )
    return {"precision": float(precision), "recall": float(recall), "f1": float(f1)}


def classification_metrics(
    labels: np.ndarray,
    predicted: np.ndarray,
    probabilities: np.ndarray | None = None,
    average: Average = "auto",
    positive_label: int = 1,
    zero_division: float = 0.0,
    num_classes: int | None = None,
    probability_metrics: bool | None = None,
) -> dict[str, float]:
    """Accuracy, precision, recall and F1, plus ROC-AUC and average precision from probabilities.

    ``average`` is ``binary`` (of ``positive_label``), ``macro``, ``weighted``, ``micro`` or ``auto`` (binary for
    two classes); a list of them gives keys suffixed ``_macro``... ``probability_metrics`` True requires
    probabilities, False skips the ranking metrics, None computes them when probabilities are given.

    Raises:
        MetricsInputError: an unknown or empty ``average``, or ranking metrics required without probabilities.
    """
    if num_classes is None:
        top = int(max(labels.max(), predicted.max())) + 1
        num_classes = probabilities.shape[1] if probabilities is not None else top
    num_classes = max(int(num_classes), 2)
    averages = [average] if isinstance(average, str) else list(average)
    if not averages:
        raise MetricsInputError(f"average is empty; give at least one of {AVERAGES}.")
    metrics = {"accuracy": float(accuracy_score(labels, predicted))}
    for requested in averages:
        chosen = _resolve_average(requested, num_classes)
        suffix = "" if len(averages) == 1 else f"_{chosen}"
        scores = _averaged_scores(labels, predicted, chosen, num_classes, positive_label, zero_division)
        metrics.update({f"{key}{suffix}": value for key, value in scores.items()})
    if probability_metrics is True and probabilities is None:
        raise MetricsInputError(
            "ROC-AUC and average precision need scores, but the predictions are class "
            "ids: return logits from preprocess_logits_for_metrics, or pass "
            "probability_metrics=False."
        )
    if probabilities is not None and probability_metrics is not False:
        metrics.update(_ranking_metrics(labels, probabilities, positive_label, num_classes))
    return metrics


def _check_metric_choices(average: Average, positive_label: Any, zero_division: float) -> None:
    """Refuse bad choices when the factory is called, not in the middle of an evaluation."""
    for requested in [average] if isinstance(average, str) else list(average):
        if requested not in AVERAGES:
            raise MetricsInputError(f"average must be one of {AVERAGES} or a list, got {requested!r}.")
    if isinstance(positive_label, bool) or not isinstance(positive_label, int | np.integer) or positive_label < 0:
        raise MetricsInputError(f"positive_label must be a class id (int >= 0), got {positive_label!r}.")
    if not 0.0 <= float(zero_division) <= 1.0:
        raise MetricsInputError(f"zero_division must be in [0, 1], got {zero_division!r}.")


def _prediction_fields(eval_prediction: Any) -> tuple[Any, Any]:
    """(predictions, label_ids) of an ``EvalPrediction``, or of a plain pair."""
    if isinstance(eval_prediction, tuple | list) and len(eval_prediction) == 2:
        return eval_prediction[0], eval_prediction[1]
    if hasattr(eval_prediction, "predictions"):
        return eval_prediction.predictions, eval_prediction.label_ids
    raise MetricsInputError(
        "compute_metrics expects an EvalPrediction (or a pair: predictions, "
        f"label_ids), got {type(eval_prediction).__name__}."
    )


def make_compute_metrics(
    average: Average = "auto",
    positive_label: int = 1,
    zero_division: float = 0.0,
    probability_metrics: bool | None = None,
    from_logits: bool = True,
    num_classes: int | None = None,
) -> Callable[[Any], dict[str, float]]:
    """A ``compute_metrics(eval_prediction) -> dict of floats`` for ``Trainer``.

    With no arguments: accuracy, and precision, recall and F1 of class 1, and ROC-AUC and average precision
    from softmax probabilities. The Trainer adds the ``eval_`` prefix. The choices are checked at once.

    Raises:
        MetricsInputError: an unknown ``average``, a ``positive_label`` that is not a class id, or a
            ``zero_division`` outside [0, 1]; later, input the returned function cannot score.
    """
    _check_metric_choices(average, positive_label, zero_division)

    def compute_metrics(eval_prediction: Any) -> dict[str, float]:
        predictions, label_ids = _prediction_fields(eval_prediction)
        labels, predicted, probabilities = split_predictions(predictions, label_ids, from_logits)
        return classification_metrics(
            labels,
            predicted,
            probabilities,
            average,
            int(positive_label),
            zero_division,
            num_classes,
            probability_metrics,
        )

    return compute_metrics
