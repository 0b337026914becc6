"""Evaluation plots: a confusion matrix and ROC curves, drawn in the course style."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from helpers.plots.base import finish, new_axes


def _class_ids(values: Any, what: str) -> np.ndarray:
    array = np.asarray(values)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{what} must be a non-empty 1-D sequence of class ids, got shape {array.shape}.")
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(
            f"{what} must hold integer class ids (take the argmax of the logits first), got {array.dtype}."
        )
    return array


def plot_confusion_matrix(
    labels: Any,
    predicted: Any,
    class_names: Sequence[str],
    ax: Any = None,
    title: str = "Confusion matrix",
    normalize: bool = False,
) -> Any:
    """Counts (or row fractions) of true class (rows) against predicted class (columns); returns the Figure.

    Args:
        labels, predicted: 1-D integer class ids of the same length.
        class_names: one name per class id, in id order.
        normalize: show each row as fractions of that true class instead of counts.
    """
    from sklearn.metrics import confusion_matrix

    labels, predicted = _class_ids(labels, "labels"), _class_ids(predicted, "predicted")
    if labels.shape != predicted.shape:
        raise ValueError(f"labels ({labels.size}) and predicted ({predicted.size}) must have the same length.")
    if max(labels.max(), predicted.max()) >= len(class_names):
        raise ValueError(
            f"class ids go up to {max(labels.max(), predicted.max())} but only "
            f"{len(class_names)} class_names were given."
        )
    matrix = confusion_matrix(labels, predicted, labels=list(range(len(class_names)))).astype(float)
    if normalize:
        matrix = matrix / np.maximum(matrix.sum(axis=1, keepdims=True), 1)
    ax = new_axes(
        title,
        "predicted class",
        "true class (fraction of row)" if normalize else "true class (count)",
        ax=ax,
        figsize=(4.2, 3.6),
    )
    ax.grid(False)
    image = ax.imshow(matrix, cmap="Blues")
    ax.figure.colorbar(image, ax=ax, label="fraction" if normalize else "reviews")
    ax.set_xticks(range(len(class_names)), class_names)
    ax.set_yticks(range(len(class_names)), class_names)
    threshold = matrix.max() / 2
    for row in range(matrix.shape[0]):
        for column in range(matrix.shape[1]):
            text = f"{matrix[row, column]:.2f}" if normalize else f"{int(matrix[row, column])}"
            ax.text(
                column,
                row,
                text,
                ha="center",
                va="center",
                color="white" if matrix[row, column] > threshold else "black",
            )
    return finish(ax)


def plot_roc(curves: dict[str, tuple[Any, Any]], ax: Any = None, title: str = "ROC curve") -> Any:
    """ROC curves, one per entry ``name -> (labels, positive_class_scores)``, with the AUC in the legend.

    Args:
        curves: for each curve, binary labels (0/1) and the score of the positive class (a probability or logit).
    """
    from sklearn.metrics import roc_auc_score, roc_curve

    if not curves:
        raise ValueError("curves is empty; pass {'name': (labels, positive_scores)}.")
    ax = new_axes(
        title,
        "false positive rate (fraction of negatives)",
        "true positive rate (fraction of positives)",
        ax=ax,
        figsize=(4.6, 4.0),
    )
    for name, (labels, scores) in curves.items():
        labels, scores = _class_ids(labels, f"labels of {name!r}"), np.asarray(scores, dtype=float)
        if scores.shape != labels.shape:
            raise ValueError(
                f"{name!r}: scores must be the positive-class score, one per label "
                f"(shape {labels.shape}), got {scores.shape}."
            )
        if np.unique(labels).size < 2:
            raise ValueError(f"{name!r}: the labels hold one class only, so there is no ROC curve.")
        false_positive_rate, true_positive_rate, _ = roc_curve(labels, scores)
        ax.plot(false_positive_rate, true_positive_rate, label=f"{name} (AUC {roc_auc_score(labels, scores):.3f})")
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="chance (AUC 0.5)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.01)
    return finish(ax)
