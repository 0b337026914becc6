"""Lesson 04's instruments: an evaluation run silently, the memory it takes, and the plots of its results.

* :func:`evaluate_with`: build a ``Trainer`` for one evaluation of ``model`` on ``data`` with
  ``compute_metrics=fn`` (and optionally ``preprocess_logits_for_metrics``), silence its progress display, and
  return ``evaluate()``'s metrics. Extra keywords are ``TrainingArguments`` fields.
* :func:`peak_extra_mib`: run a function and measure the peak resident memory it added (Linux ``/proc``) and,
  on a GPU, the peak of ``torch.cuda.max_memory_allocated``; :func:`peak_text`: the two peaks as one short text.
* :func:`plot_eval_curves`: evaluation metrics per epoch from a Trainer's ``log_history``, the best checkpoint
  marked; :func:`plot_confusion_matrix`: true class against predicted class. Both drawn with
  :mod:`helpers.plots.base`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from helpers.performance import cuda_peak_mib, reset_cuda_peak
from helpers.plots.base import finish, new_axes

_PROC = Path("/proc/self")


def evaluate_with(
    fn: Callable[..., dict[str, float]] | None,
    model: Any,
    data: Any,
    collator: Any = None,
    preprocess: Callable[[Any, Any], Any] | None = None,
    ignore: list[str] | None = None,
    **settings: Any,
) -> dict[str, float]:
    """One silent evaluation with ``compute_metrics=fn``; ``settings`` go to ``TrainingArguments``.

    Defaults: ``per_device_eval_batch_size=128``, ``report_to="none"``, bf16 where the GPU supports it.

    Args:
        fn: the ``compute_metrics`` to call (``None``: the loss only).
        model: the model to evaluate.
        data: the evaluation dataset (with labels, for metrics).
        collator: the data collator (``None``: the Trainer's default).
        preprocess: ``preprocess_logits_for_metrics``.
        ignore: ``ignore_keys`` for ``evaluate`` (model outputs to leave out of the predictions).

    Raises:
        TypeError: a keyword of ``settings`` is not a ``TrainingArguments`` field (raised by transformers).
    """
    import torch
    from transformers import Trainer, TrainingArguments

    from helpers import run_dir
    from helpers.trainers import quiet

    bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    defaults: dict[str, Any] = {"per_device_eval_batch_size": 128, "bf16": bf16, "report_to": "none"}
    args = TrainingArguments(output_dir=str(run_dir("eval_runs")), **{**defaults, **settings})
    evaluator = Trainer(
        model=model,
        args=args,
        eval_dataset=data,
        data_collator=collator,
        compute_metrics=fn,
        preprocess_logits_for_metrics=preprocess,
    )
    return quiet(evaluator).evaluate(ignore_keys=ignore)


def _status_kib(field: str) -> int:
    lines = (_PROC / "status").read_text().splitlines()
    return int(next(line for line in lines if line.startswith(field)).split()[1])


def can_measure_host() -> bool:
    """Whether this system lets a process reset and read its peak resident memory (Linux ``/proc``)."""
    return (_PROC / "clear_refs").exists() and (_PROC / "status").exists()


def peak_extra_mib(run: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float | None, float | None]:
    """``run(*args, **kwargs)``'s result, its extra peak RSS in MiB (``None`` without ``/proc``), peak GPU MiB.

    The extra peak is the process's peak resident memory during the call minus what it used just before
    (writing ``5`` to ``/proc/self/clear_refs`` resets the peak to the current size). The GPU figure is
    ``None`` without CUDA.
    """
    if not callable(run):
        raise TypeError(f"peak_extra_mib needs a function to run, got {type(run).__name__}.")
    reset_cuda_peak()
    measure = can_measure_host()
    before = 0
    if measure:
        (_PROC / "clear_refs").write_text("5")  # the peak becomes the current size
        before = _status_kib("VmRSS")
    result = run(*args, **kwargs)
    host = (_status_kib("VmHWM") - before) / 1024 if measure else None
    return result, host, cuda_peak_mib()


def peak_text(host: float | None, gpu: float | None) -> str:
    """The two peaks as one short text, e.g. ``peak RSS +477 MiB | peak GPU 12 MiB``."""
    text = f"peak RSS +{host:.0f} MiB" if host is not None else "RSS not measured"
    return text + (f" | peak GPU {gpu:.0f} MiB" if gpu is not None else "")


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
