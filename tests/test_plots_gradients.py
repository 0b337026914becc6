"""helpers.plots.gradients: every plot is labelled, and bad input gives a clear error."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from helpers.plots.gradients import (  # noqa: E402
    plot_clipping,
    plot_gradient_histograms,
    plot_norm_curves,
    plot_norm_heatmap,
)


def _labelled(figure) -> bool:  # type: ignore[no-untyped-def]
    ax = figure.axes[0]
    return bool(ax.get_title() and ax.get_xlabel() and ax.get_ylabel())


def test_heatmap() -> None:
    figure = plot_norm_heatmap(["a", "b", "c"], [0, 1], torch.rand(3, 2))
    assert _labelled(figure)
    assert [tick.get_text() for tick in figure.axes[0].get_yticklabels()] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="expected"):
        plot_norm_heatmap(["a"], [0, 1], np.ones((2, 2)))
    plt.close("all")


def test_histograms_and_clipping_and_curves() -> None:
    rng = np.random.default_rng(0)
    assert _labelled(plot_gradient_histograms(rng.normal(size=500), rng.normal(scale=0.1, size=500), "early", "late"))
    figure = plot_clipping([0, 1, 2], [3.0, 2.0, 0.5], [1.0, 1.0, 0.5], max_grad_norm=1.0)
    assert _labelled(figure) and len(figure.axes[0].lines) == 3
    assert _labelled(plot_norm_curves({"lr 1e-4": [1.0, 2.0], "lr 1e-1": [1.0, 50.0]}, [0, 1]))
    with pytest.raises(ValueError, match="same length"):
        plot_clipping([0, 1], [1.0], [1.0], max_grad_norm=1.0)
    with pytest.raises(ValueError, match="empty"):
        plot_gradient_histograms([], [1.0], "early", "late")
    with pytest.raises(ValueError, match="empty"):
        plot_norm_curves({}, [0])
    plt.close("all")
