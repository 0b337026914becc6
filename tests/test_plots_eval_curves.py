"""helpers.plots.eval_curves: lines from log_history, the best epoch marked, a clear error for a missing key."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.plots.eval_curves import plot_eval_curves  # noqa: E402

ONE_SET = [
    {"epoch": 1.0, "loss": 0.7},
    {"epoch": 1.0, "eval_f1": 0.5, "eval_accuracy": 0.6},
    {"epoch": 2.0, "eval_f1": 0.8, "eval_accuracy": 0.7},
    {"epoch": 3.0, "eval_f1": 0.7, "eval_accuracy": 0.75},
]
TWO_SETS = [
    {"epoch": 1.0, "eval_short_f1": 0.9},
    {"epoch": 1.0, "eval_long_f1": 0.4},
    {"epoch": 2.0, "eval_short_f1": 0.5},
    {"epoch": 2.0, "eval_long_f1": 0.6},
]


def test_lines_and_best_epoch() -> None:
    figure = plot_eval_curves(ONE_SET, ["eval_f1", "eval_accuracy"], "eval_f1")
    ax = figure.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines["eval_f1 (metric_for_best_model)"].get_ydata()) == [0.5, 0.8, 0.7]
    assert list(lines["eval_accuracy"].get_xdata()) == [1.0, 2.0, 3.0]
    assert list(lines["best checkpoint (loaded)"].get_xdata()) == [2.0, 2.0]
    plt.close(figure)


def test_each_set_read_from_its_own_entries() -> None:
    figure = plot_eval_curves(TWO_SETS, ["eval_long_f1", "eval_short_f1"], "eval_long_f1", title="Two sets")
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    assert list(lines["eval_short_f1"].get_ydata()) == [0.9, 0.5]
    assert list(lines["best checkpoint (loaded)"].get_xdata()) == [2.0, 2.0]  # long, not short, decides
    plt.close(figure)


def test_missing_key_names_the_logged_ones() -> None:
    with pytest.raises(ValueError, match="eval_long_f1.*eval_short_f1"):
        plot_eval_curves(TWO_SETS, ["eval_f1"], "eval_long_f1")
