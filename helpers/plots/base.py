"""The course plot style: small figures (dpi about 80), and every axis labelled.

Every plot function in ``helpers.plots`` starts with :func:`new_axes` and ends with :func:`finish`, which
refuses a plot without a title or axis labels, so a lesson can never show an unlabelled chart.
"""

from __future__ import annotations

from typing import Any

import matplotlib

COURSE_DPI = 80


def apply_course_style() -> None:
    """Set matplotlib defaults for the notebooks (dpi, grid, font size, inline figure format)."""
    matplotlib.rcParams.update(
        {
            "figure.dpi": COURSE_DPI,
            "savefig.dpi": COURSE_DPI,
            "figure.figsize": (6.4, 3.6),
            "axes.grid": True,
            "grid.alpha": 0.3,
            "font.size": 10,
            "figure.autolayout": True,
        }
    )


def new_axes(title: str, xlabel: str, ylabel: str, ax: Any = None, figsize: tuple[float, float] | None = None) -> Any:
    """Return labelled axes: a new figure unless ``ax`` is given."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    return ax


def finish(ax: Any) -> Any:
    """Check the axes are labelled, tidy the layout, and return the Figure."""
    missing = [
        part
        for part, text in (("title", ax.get_title()), ("x label", ax.get_xlabel()), ("y label", ax.get_ylabel()))
        if not text
    ]
    if missing:
        raise ValueError(f"plot is missing its {', '.join(missing)}; every course plot is labelled.")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=8)
    return ax.figure
