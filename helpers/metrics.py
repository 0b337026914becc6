"""A ``compute_metrics`` factory for ``Trainer``, built on scikit-learn.

``make_compute_metrics()`` (no arguments) returns a function ``EvalPrediction -> dict[str, float]`` with
``accuracy``, ``precision``, ``recall`` and ``f1`` (binary, positive class 1) and, when the predictions are
scores rather than class ids, ``roc_auc`` and ``average_precision`` computed from softmax probabilities.
The Trainer adds the ``eval_`` prefix to every key.

What the returned function accepts:

* ``predictions`` as logits ``(N, C)``, as class ids ``(N,)`` (for example after a
  ``preprocess_logits_for_metrics`` that took the argmax), or as a tuple whose first element is one of
  those (models that return extra outputs, such as hidden states, give a tuple);
* token-level arrays ``(N, T, C)`` / ``(N, T)``: they are flattened;
* label ``-100`` (the ignore index used for padding tokens) is dropped before scoring.

NaN or infinite scores raise a :class:`MetricsInputError` that says where to look, instead of sklearn's
less helpful message or a silently wrong score.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

IGNORE_INDEX = -100
AVERAGES = ("auto", "binary", "macro", "weighted", "micro")


class MetricsInputError(ValueError):
    """The predictions or labels handed to ``compute_metrics`` cannot be scored as they are."""


def _first_array(value: Any, what: str) -> np.ndarray:
    """The first element of a tuple/list (what a model with extra outputs gives), else the value, as ndarray."""
    if isinstance(value, (tuple, list)):
        if len(value) == 0:
            raise MetricsInputError(f"{what} is an empty tuple; the evaluation produced nothing to score.")
        value = value[0]
    if value is None:
        raise MetricsInputError(
            f"{what} is None. Trainer only passes label_ids when the eval dataset has a labels column "
            "(check `label_names` and `remove_unused_columns`)."
        )
    if hasattr(value, "detach"):  # a torch tensor (batch_eval_metrics passes tensors, possibly bf16 or on a GPU)
        value = value.detach().cpu()
        value = value.float() if value.is_floating_point() else value
        value = value.numpy()
    array = np.asarray(value)
    if array.dtype == object:
        raise MetricsInputError(f"{what} has dtype object (ragged arrays?); pad them to one shape first.")
    return array


def softmax(logits: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax over ``axis`` (float64)."""
    shifted = np.asarray(logits, dtype=np.float64) - np.max(logits, axis=axis, keepdims=True)
    exponentials = np.exp(shifted)
    return exponentials / exponentials.sum(axis=axis, keepdims=True)


def split_predictions(
    predictions: Any, label_ids: Any, from_logits: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Turn raw ``EvalPrediction`` fields into ``(labels, predicted_ids, probabilities_or_None)``.

    Args:
        predictions: logits/probabilities ``(N, C)`` or ``(N, T, C)``, class ids ``(N,)`` or ``(N, T)``,
            or a tuple whose first element is one of these.
        label_ids: the labels, ``(N,)`` or ``(N, T)``; ``-100`` entries are dropped.
        from_logits: the scores are logits (softmax is applied); ``False`` means they already are probabilities.

    Raises:
        MetricsInputError: NaN/inf scores, shapes that do not match, or nothing left to score.
    """
    scores = _first_array(predictions, "predictions")
    labels = _first_array(label_ids, "label_ids")
    if np.issubdtype(scores.dtype, np.floating) and not np.isfinite(scores).all():
        bad = int((~np.isfinite(scores)).sum())
        raise MetricsInputError(
            f"predictions contain {bad} NaN or infinite values, so no metric is meaningful. The model diverged "
            "or overflowed: check the training loss, lower the learning rate, or evaluate in fp32 "
            "(fp16 overflows above 65504)."
        )
    has_scores = scores.ndim == labels.ndim + 1
    if not has_scores and scores.ndim != labels.ndim:
        raise MetricsInputError(
            f"predictions have shape {scores.shape} but labels have shape {labels.shape}; expected scores "
            "(labels' shape + a class axis) or class ids (the labels' shape)."
        )
    if scores.shape[: labels.ndim] != labels.shape:
        raise MetricsInputError(
            f"predictions with shape {scores.shape} and labels with shape {labels.shape} disagree on the leading "
            "axes; compute_metrics must get one prediction per label (check the eval dataset and any "
            "preprocess_logits_for_metrics)."
        )
    if has_scores:
        if scores.shape[-1] < 2:
            raise MetricsInputError(
                f"predictions have {scores.shape[-1]} score column(s); classification needs one column per class "
                "(a single-logit regression head is not a classifier)."
            )
        scores = scores.reshape(-1, scores.shape[-1])
    else:
        scores = scores.reshape(-1)
    labels = labels.reshape(-1)
    keep = labels != IGNORE_INDEX
    labels, scores = labels[keep], scores[keep]
    if labels.size == 0:
        raise MetricsInputError("no labels left to score (all were missing or -100).")
    if has_scores:
        probabilities = softmax(scores) if from_logits else scores.astype(np.float64)
        return labels.astype(np.int64), probabilities.argmax(axis=-1), probabilities
    return labels.astype(np.int64), scores.astype(np.int64), None


def _resolve_average(average: str, num_classes: int) -> str:
    if average not in AVERAGES:
        raise MetricsInputError(f"average must be one of {AVERAGES}, got {average!r}.")
    if average == "auto":
        return "binary" if num_classes <= 2 else "macro"
    if average == "binary" and num_classes > 2:
        raise MetricsInputError(
            f"average='binary' needs two classes but {num_classes} were seen; use 'macro', 'weighted' or 'micro'."
        )
    return average


def classification_metrics(
    labels: np.ndarray,
    predicted: np.ndarray,
    probabilities: np.ndarray | None = None,
    average: str | Sequence[str] = "auto",
    positive_label: int = 1,
    zero_division: float = 0.0,
    num_classes: int | None = None,
    probability_metrics: bool | None = None,
) -> dict[str, float]:
    """Accuracy, precision, recall, F1 and (from probabilities) ROC-AUC and average precision.

    Args:
        labels, predicted: class ids, shape ``(N,)``.
        probabilities: ``(N, C)`` class probabilities, or ``None`` when only ids are known.
        average: one of ``auto`` (binary for 2 classes, macro otherwise), ``binary``, ``macro``, ``weighted``,
            ``micro``; or several, in which case the keys are suffixed (``f1_macro``, ``f1_weighted``).
        positive_label: the positive class for ``binary`` averaging and for binary ROC-AUC/average precision.
        zero_division: the value sklearn uses when precision or recall divides by zero (a class never predicted).
        num_classes: the number of classes; inferred from ``probabilities`` or the ids if ``None``.
        probability_metrics: ``True`` requires probabilities, ``False`` skips ROC-AUC/AP, ``None`` computes them
            when probabilities are given.

    ROC-AUC and average precision are ``nan`` when the labels hold only one class: they are undefined then.
    """
    from sklearn.metrics import accuracy_score, average_precision_score, precision_recall_fscore_support, roc_auc_score

    if num_classes is None:
        num_classes = (
            probabilities.shape[1] if probabilities is not None else int(max(labels.max(), predicted.max())) + 1
        )
    num_classes = max(int(num_classes), 2)
    averages = [average] if isinstance(average, str) else list(average)
    if not averages:
        raise MetricsInputError(f"average is an empty sequence; give at least one of {AVERAGES}.")
    class_ids = list(range(num_classes))
    metrics: dict[str, float] = {"accuracy": float(accuracy_score(labels, predicted))}
    for requested in averages:
        chosen = _resolve_average(requested, num_classes)
        precision, recall, f1, _ = precision_recall_fscore_support(
            labels,
            predicted,
            average=chosen,
            labels=class_ids if chosen != "binary" else None,
            pos_label=positive_label,
            zero_division=zero_division,
        )
        suffix = "" if len(averages) == 1 else f"_{chosen}"
        metrics.update(
            {f"precision{suffix}": float(precision), f"recall{suffix}": float(recall), f"f1{suffix}": float(f1)}
        )
    if probability_metrics is True and probabilities is None:
        raise MetricsInputError(
            "ROC-AUC and average precision need scores, but the predictions are class ids. Return logits (or "
            "probabilities) from preprocess_logits_for_metrics, or pass probability_metrics=False."
        )
    if probabilities is not None and probability_metrics is not False:
        present = np.unique(labels)
        if present.size < 2:
            metrics["roc_auc"] = metrics["average_precision"] = float("nan")
        elif num_classes == 2:
            positive = labels == positive_label
            metrics["roc_auc"] = float(roc_auc_score(positive, probabilities[:, positive_label]))
            metrics["average_precision"] = float(average_precision_score(positive, probabilities[:, positive_label]))
        else:
            one_hot = labels[:, None] == np.arange(num_classes)[None, :]
            seen = one_hot.any(axis=0)  # classes absent from the labels have no ROC curve
            metrics["roc_auc"] = float(roc_auc_score(one_hot[:, seen], probabilities[:, seen], average="macro"))
            metrics["average_precision"] = float(
                average_precision_score(one_hot[:, seen], probabilities[:, seen], average="macro")
            )
    return metrics


def make_compute_metrics(
    average: str | Sequence[str] = "auto",
    positive_label: int = 1,
    zero_division: float = 0.0,
    probability_metrics: bool | None = None,
    from_logits: bool = True,
    num_classes: int | None = None,
) -> Callable[[Any], dict[str, float]]:
    """Return a ``compute_metrics(eval_pred) -> dict[str, float]`` for ``Trainer``.

    Called with no arguments it scores binary classification: ``accuracy``, ``precision``, ``recall``,
    ``f1`` and, from softmax probabilities, ``roc_auc`` and ``average_precision``. See
    :func:`classification_metrics` for the arguments and :func:`split_predictions` for the accepted inputs.

    Example:
        >>> trainer = Trainer(..., compute_metrics=make_compute_metrics())
        >>> trainer.evaluate()["eval_f1"]
    """
    averages = [average] if isinstance(average, str) else list(average)
    for requested in averages:  # fail when the factory is called, not in the middle of an evaluation
        if requested not in AVERAGES:
            raise MetricsInputError(f"average must be one of {AVERAGES} (or a list of them), got {requested!r}.")
    if not isinstance(positive_label, (int, np.integer)) or isinstance(positive_label, bool) or positive_label < 0:
        raise MetricsInputError(f"positive_label must be a class id (int >= 0), got {positive_label!r}.")
    if not 0.0 <= float(zero_division) <= 1.0:
        raise MetricsInputError(f"zero_division must be between 0 and 1, got {zero_division!r}.")

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        if isinstance(eval_pred, (tuple, list)) and len(eval_pred) == 2:
            predictions, label_ids = eval_pred
        elif hasattr(eval_pred, "predictions") and hasattr(eval_pred, "label_ids"):
            predictions, label_ids = eval_pred.predictions, eval_pred.label_ids
        else:
            raise MetricsInputError(
                f"compute_metrics expects an EvalPrediction (or a (predictions, label_ids) pair), got "
                f"{type(eval_pred).__name__}."
            )
        labels, predicted, probabilities = split_predictions(predictions, label_ids, from_logits=from_logits)
        return classification_metrics(
            labels,
            predicted,
            probabilities,
            average=average,
            positive_label=int(positive_label),
            zero_division=zero_division,
            num_classes=num_classes,
            probability_metrics=probability_metrics,
        )

    return compute_metrics
