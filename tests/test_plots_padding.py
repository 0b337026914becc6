"""helpers.plots.padding: two bars per strategy with the figures given; clear errors for bad input."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.plots.padding import plot_padding_comparison  # noqa: E402

PADDING = {
    "max_length": {"padded_fraction": 0.6, "time_ratio": 1.0, "tokens": 10},
    "dynamic": {"padded_fraction": 0.4, "time_ratio": 0.8, "tokens": 8},
}


def test_bars_hold_the_figures() -> None:
    figure = plot_padding_comparison(PADDING)
    ax = figure.axes[0]
    heights = [round(patch.get_height(), 6) for patch in ax.patches]
    assert heights == [0.6, 0.4, 1.0, 0.8]
    assert [label.get_text() for label in ax.get_xticklabels()] == ["max_length", "dynamic"]
    plt.close(figure)


def test_refuses_empty_and_incomplete() -> None:
    with pytest.raises(ValueError, match="empty"):
        plot_padding_comparison({})
    with pytest.raises(ValueError, match="time_ratio"):
        plot_padding_comparison({"dynamic": {"padded_fraction": 0.4}})
