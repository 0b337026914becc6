"""Evaluation plots (lesson 04), drawn in the course style: the metrics per epoch read from a Trainer's
``log_history`` with the best checkpoint marked, and a confusion matrix."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from helpers.plots.base import finish, new_axes


def plot_eval_curves(
    log_history: Sequence[Mapping[str, Any]],
    keys: Sequence[str],
    best: str,
    title: str = "Validation metrics per epoch",
    ax: Any = None,
) -> Any:
    """One line per metric in ``keys`` against the epoch; a dashed line at the epoch where ``best`` peaked.

    Each key is read from the log entries that hold it (with several evaluation sets, each set logs its own
    entry). The dashed line marks the largest ``best`` value: the checkpoint ``load_best_model_at_end`` loads
    when ``metric_for_best_model`` names it and greater is better. Returns the Figure.

    Raises:
        ValueError: a key, or ``best``, is in no log entry (the message lists the keys the log has).
    """
    logged = sorted({key for entry in log_history for key in entry if key.startswith("eval_")})
    for key in [*keys, best]:
        if not any(key in entry for entry in log_history):
            raise ValueError(f"no log entry holds {key!r}; the evaluation keys logged are {logged}.")
    ax = new_axes(title, "epoch", "metric value (0 to 1)", ax=ax)
    for key, marker in zip(keys, "osD^v"):
        entries = [entry for entry in log_history if key in entry]
        label = f"{key} (metric_for_best_model)" if key == best and len(keys) > 1 else key
        ax.plot([entry["epoch"] for entry in entries], [entry[key] for entry in entries], marker=marker, label=label)
    peak = max((entry for entry in log_history if best in entry), key=lambda entry: entry[best])
    ax.axvline(peak["epoch"], color="grey", linestyle="--", label="best checkpoint (loaded)")
    return finish(ax)


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
