"""Evaluation metrics per epoch from a Trainer's ``log_history``, with the best checkpoint marked (lesson 04)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
