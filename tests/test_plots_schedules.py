"""helpers.plots.schedules: the rates equal the scheduler's, and the plot is a labelled Figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from helpers.plots.schedules import METRIC_DRIVEN, plot_schedules, schedule_lrs


def test_linear_rates_follow_the_formula() -> None:
    rates = schedule_lrs("linear", 10, 2, learning_rate=0.5)
    expected = [0.0, 0.25] + [0.5 * (10 - step) / 8 for step in range(2, 10)]
    assert rates == pytest.approx(expected)


def test_kwargs_reach_the_scheduler() -> None:
    rates = schedule_lrs("cosine_with_min_lr", 20, 0, scheduler_kwargs={"min_lr_rate": 0.1})
    assert min(rates) == pytest.approx(0.1, abs=0.01)
    assert min(rates) >= 0.1 - 1e-9


def test_plot_shows_exactly_the_scheduler_values() -> None:
    curves = {"linear": schedule_lrs("linear", 12, 3), "cosine": schedule_lrs("cosine", 12, 3)}
    figure = plot_schedules(curves, applied={"applied": ([0, 5], [curves["linear"][0], curves["linear"][5]])})
    assert isinstance(figure, Figure)
    ax = figure.axes[0]
    assert ax.get_title() and ax.get_xlabel() == "optimizer step" and ax.get_ylabel() == "learning rate"
    for line, rates in zip(ax.lines, curves.values()):
        assert list(line.get_ydata()) == pytest.approx(rates)
        assert list(line.get_xdata()) == list(range(12))
    assert list(ax.lines[2].get_xdata()) == [0, 5]
    plt.close(figure)


@pytest.mark.parametrize("name", METRIC_DRIVEN)
def test_metric_driven_schedulers_are_refused_with_advice(name: str) -> None:
    with pytest.raises(ValueError, match="evaluation"):
        schedule_lrs(name, 10)


def test_bad_input_says_what_to_do() -> None:
    with pytest.raises(ValueError, match="offers"):
        schedule_lrs("cosine_annealing", 10)
    with pytest.raises(ValueError, match="fraction"):
        schedule_lrs("linear", 10, 0.1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="non-empty"):
        plot_schedules({})
    with pytest.raises(ValueError, match="pair up"):
        plot_schedules({"a": [1.0]}, applied={"b": ([0, 1], [1.0])})
