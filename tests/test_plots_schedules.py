"""helpers.plots.schedules: the rates equal the scheduler's, and the plot is a labelled Figure."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from transformers import SchedulerType

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


# The curves of every step-driven type, one by one (lesson 03, section 1, asserts their summary on its own plot).
STEP_DRIVEN = [member.value for member in SchedulerType if member.value not in METRIC_DRIVEN]
NEEDS = {
    "cosine_with_min_lr": {"min_lr_rate": 0.1},
    "cosine_warmup_with_min_lr": {"min_lr_rate": 0.1},
    "warmup_stable_decay": {"num_decay_steps": 30},
}


@pytest.mark.parametrize("name", STEP_DRIVEN)
def test_every_step_driven_type_warms_up_to_the_peak(name: str) -> None:
    rates = schedule_lrs(name, 100, 10, scheduler_kwargs=NEEDS.get(name))
    assert max(rates) <= 1.0 + 1e-9
    if name == "constant":  # ignores warmup
        assert rates == [1.0] * 100
    elif name == "cosine_warmup_with_min_lr":  # its warmup starts at 1 / num_warmup_steps and peaks one update early
        assert rates[0] == pytest.approx(0.1) and max(rates) == pytest.approx(1.0)
    else:
        assert rates[0] == 0.0 and rates[10] == max(rates) == pytest.approx(1.0)
    if name in NEEDS and "min_lr_rate" in NEEDS[name]:
        assert min(rates[10:]) >= 0.1 - 1e-9
    if name == "constant_with_warmup":
        assert rates[-1] == 1.0


def test_the_applied_rate_of_a_real_run_is_the_curve() -> None:
    """Lesson 03's exported recorder, on a run built by lesson 01's factory: the rate each update used is the
    planned curve, and the last linear update uses peak / (N - warmup), not 0."""
    from exercises.checks import fixtures
    from helpers.lessons.lesson_03 import AppliedLRRecorder
    from helpers.trainers import make_trainer

    recorder = AppliedLRRecorder()
    trainer = make_trainer(
        "test_applied_rate",
        model=fixtures.tiny_model,
        settings=dict(max_steps=9, per_device_train_batch_size=4, learning_rate=3e-3, warmup_steps=3),
        callbacks=[recorder],
        train_dataset=fixtures.random_ids(),
    )
    trainer.train()
    assert recorder.steps == list(range(9))
    assert recorder.lrs == pytest.approx(schedule_lrs("linear", 9, 3, learning_rate=3e-3), rel=1e-6)
    assert recorder.lrs[-1] == pytest.approx(3e-3 / 6) and trainer.lr_scheduler.get_last_lr()[0] == 0.0
