"""Lesson 09's padding comparison: each strategy's padded fraction beside its epoch time ratio."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from helpers.plots.base import finish, new_axes

_BARS = (("padded_fraction", "padded fraction"), ("time_ratio", "epoch time / max_length's"))


def plot_padding_comparison(padding: Mapping[str, Mapping[str, float]], ax: Any = None) -> Any:
    """Two bars per strategy: the padded fraction of its tokens and its epoch time ratio; returns the Figure.

    Args:
        padding: ``{strategy: {"padded_fraction": ..., "time_ratio": ..., ...}}``, as
            :func:`helpers.performance.compare_padding` returns it.

    Raises:
        ValueError: ``padding`` is empty, or a strategy lacks one of the two figures.
    """
    if not padding:
        raise ValueError("padding is empty: pass compare_padding's result, one entry per strategy.")
    for name, figures in padding.items():
        missing = [key for key, _ in _BARS if key not in figures]
        if missing:
            raise ValueError(f"strategy {name!r} has no {missing}; pass compare_padding's result.")
    names = list(padding)
    ax = new_axes(
        "Padding strategies: waste and epoch time (this run)",
        "padding strategy",
        "fraction / ratio (1 = max_length)",
        ax=ax,
    )
    for shift, (key, label) in zip((-0.2, 0.2), _BARS):
        heights = [padding[name][key] for name in names]
        ax.bar([i + shift for i in range(len(names))], heights, width=0.4, label=label)
    ax.set_xticks(range(len(names)), names)
    return finish(ax)
