"""Gradient plots for lesson 08: per-layer norm against step, histograms early and late, clipping.

Each function takes plain numbers (lists or tensors), draws on :func:`~helpers.plots.base.new_axes` and returns the
Figure from :func:`~helpers.plots.base.finish`, so every plot carries a title and labelled axes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from helpers.plots.base import finish, new_axes


def _as_array(values: Any, what: str) -> np.ndarray:
    array = np.asarray(values.detach().cpu() if hasattr(values, "detach") else values, dtype=float)
    if array.size == 0:
        raise ValueError(f"{what} is empty: record some training steps before plotting.")
    return array


def plot_norm_heatmap(
    names: Sequence[str],
    steps: Sequence[int],
    norms: Any,
    title: str = "Gradient norm per layer",
    log_scale: bool = True,
    ax: Any = None,
) -> Any:
    """Heatmap of ``norms[group, step]`` (e.g. ``GradientNormRecorder.matrix()``), log10 colour scale by default."""
    matrix = _as_array(norms, "norms")
    if matrix.shape != (len(names), len(steps)):
        raise ValueError(
            f"norms has shape {matrix.shape}, expected (len(names), len(steps)) = ({len(names)}, {len(steps)})."
        )
    ax = new_axes(title, "optimizer step", "layer", ax=ax, figsize=(7.0, 0.35 * len(names) + 1.6))
    shown = np.log10(np.maximum(matrix, 1e-12)) if log_scale else matrix
    image = ax.imshow(
        shown,
        aspect="auto",
        cmap="viridis",
        interpolation="nearest",
        extent=(steps[0] - 0.5, steps[-1] + 0.5, len(names) - 0.5, -0.5),
    )
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    ax.grid(False)
    bar = ax.figure.colorbar(image, ax=ax)
    bar.set_label("log10 gradient L2 norm" if log_scale else "gradient L2 norm")
    return finish(ax)


def plot_gradient_histograms(
    early: Any,
    late: Any,
    early_label: str,
    late_label: str,
    title: str = "Gradient values early and late in training",
    bins: int = 80,
    ax: Any = None,
) -> Any:
    """Overlaid histograms of two sets of gradient values (log count axis), clipped to their 0.1 to 99.9 percentiles."""
    early_values, late_values = _as_array(early, "early").ravel(), _as_array(late, "late").ravel()
    both = np.concatenate([early_values, late_values])
    low, high = np.percentile(both, [0.1, 99.9])
    ax = new_axes(title, "gradient value (per element)", "count (log scale)", ax=ax)
    edges = np.linspace(low, high, bins + 1)
    ax.hist(early_values, bins=edges, alpha=0.6, label=early_label, color="tab:blue")
    ax.hist(late_values, bins=edges, alpha=0.6, label=late_label, color="tab:orange")
    ax.set_yscale("log")
    return finish(ax)


def plot_clipping(
    steps: Sequence[int],
    before: Sequence[float],
    after: Sequence[float],
    max_grad_norm: float,
    title: str = "Gradient norm before and after clipping",
    ax: Any = None,
) -> Any:
    """Total gradient norm before clipping (the Trainer's logged ``grad_norm``) and after it, with the threshold."""
    before_values, after_values = _as_array(before, "before"), _as_array(after, "after")
    if not len(steps) == before_values.size == after_values.size:
        raise ValueError(
            f"steps, before and after must have the same length, got {len(steps)}, "
            f"{before_values.size} and {after_values.size}."
        )
    ax = new_axes(title, "optimizer step", "gradient L2 norm (log scale)", ax=ax)
    ax.plot(steps, before_values, marker="o", markersize=3, label="before clipping (logged grad_norm)")
    ax.plot(steps, after_values, marker="s", markersize=3, label="after clipping (what the optimizer used)")
    ax.axhline(max_grad_norm, color="tab:red", linestyle="--", label=f"max_grad_norm = {max_grad_norm:g}")
    ax.set_yscale("log")
    return finish(ax)


def plot_norm_curves(
    curves: Mapping[str, Sequence[float]],
    steps: Sequence[int],
    title: str = "Total gradient norm per run",
    ylabel: str = "gradient L2 norm (log scale)",
    ax: Any = None,
) -> Any:
    """One line per run (e.g. several learning rates): a gradient statistic against the optimizer step."""
    if not curves:
        raise ValueError("curves is empty: pass {label: values} for at least one run.")
    ax = new_axes(title, "optimizer step", ylabel, ax=ax)
    for label, values in curves.items():
        values = _as_array(values, label)
        ax.plot(list(steps)[: values.size], values, marker="o", markersize=3, label=label)
    ax.set_yscale("log")
    return finish(ax)
