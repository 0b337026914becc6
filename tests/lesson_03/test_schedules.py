"""Lesson 03's many-case proofs: what the lesson shows on one run or one setting, here over many. The lesson keeps
one tucked assert per claim, on the run it shows; these run the lesson's exported recorder and the helpers it uses
on other lengths, peaks and settings, so a claim that holds only for the lesson's numbers fails here."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from transformers import SchedulerType, TrainingArguments

from exercises.checks import fixtures
from helpers.lessons.lesson_03 import AppliedLRRecorder
from helpers.plots.schedules import METRIC_DRIVEN, schedule_lrs
from helpers.trainers import make_trainer


@pytest.mark.rule(
    lesson="03",
    section="Recap",
    text="`SchedulerType` lists 12 types; 10 have a curve",
    covers=["the pinned release's SchedulerType", "the two metric-driven types left out of the curves"],
)
def test_the_scheduler_types_are_the_twelve_the_lesson_draws() -> None:
    """A release that adds or drops a type fails here (the lesson's plot asserts it draws every step-driven one)."""
    assert {member.value for member in SchedulerType} == {
        "linear",
        "cosine",
        "cosine_with_restarts",
        "polynomial",
        "constant",
        "constant_with_warmup",
        "inverse_sqrt",
        "reduce_lr_on_plateau",
        "cosine_with_min_lr",
        "cosine_warmup_with_min_lr",
        "warmup_stable_decay",
        "greedy",
    }
    assert set(METRIC_DRIVEN) == {"reduce_lr_on_plateau", "greedy"}


@pytest.mark.parametrize("fraction", [0.05, 0.1, 0.25, 1 / 3, 0.5])
def test_a_fractional_warmup_is_a_share_of_the_updates_rounded_up(tmp_path, fraction: float) -> None:
    share = TrainingArguments(output_dir=str(tmp_path), warmup_steps=fraction, report_to="none")
    count = TrainingArguments(output_dir=str(tmp_path), warmup_steps=7, report_to="none")
    for total in range(1, 201):
        assert share.get_warmup_steps(total) == math.ceil(fraction * total), total
        assert count.get_warmup_steps(total) == 7


@pytest.mark.parametrize(("total", "warmup"), [(10, 0), (37, 5), (100, 10), (250, 40)])
def test_polynomial_of_power_one_is_the_linear_schedule(total: int, warmup: int) -> None:
    power_one = schedule_lrs("polynomial", total, warmup, scheduler_kwargs={"power": 1.0})
    assert np.allclose(power_one, schedule_lrs("linear", total, warmup), rtol=0, atol=1e-6)


@pytest.mark.rule(
    lesson="03",
    section="3. What `lr_scheduler_kwargs` changes",
    text="`min_lr` is a rate and `min_lr_rate` a share of the peak",
    covers=["peaks 1e-5, 3e-4 and 2e-3", "warmup 6 of 60 updates"],
)
@pytest.mark.parametrize("peak", [1e-5, 3e-4, 2e-3])
def test_min_lr_is_a_rate_and_min_lr_rate_a_share_of_the_peak(peak: float) -> None:
    absolute = schedule_lrs("cosine_with_min_lr", 60, 6, peak, {"min_lr": 0.2 * peak})
    relative = schedule_lrs("cosine_with_min_lr", 60, 6, peak, {"min_lr_rate": 0.2})
    assert np.allclose(absolute, relative, rtol=1e-9, atol=0)
    assert min(absolute[6:]) >= 0.2 * peak * (1 - 1e-9)


@pytest.mark.rule(
    lesson="03",
    section="3. What `lr_scheduler_kwargs` changes",
    text="the decay's first update still uses the peak, because its progress is 0.",
    covers=["100 updates, warmup 10, decay 30", "no warmup", "a decay of 32 of 40 updates"],
)
@pytest.mark.parametrize(("total", "warmup", "decay"), [(100, 10, 30), (50, 0, 10), (40, 8, 32)])
def test_warmup_stable_decay_holds_the_peak_one_update_into_the_decay(total: int, warmup: int, decay: int) -> None:
    rates = schedule_lrs("warmup_stable_decay", total, warmup, scheduler_kwargs={"num_decay_steps": decay})
    at_peak = [step for step, rate in enumerate(rates) if rate == 1.0]
    assert at_peak == list(range(warmup, total - decay + 1))


@pytest.mark.parametrize("cycles", [2, 4])
def test_cosine_with_restarts_jumps_back_once_per_extra_cycle(cycles: int) -> None:
    rates = schedule_lrs("cosine_with_restarts", 120, 0, scheduler_kwargs={"num_cycles": cycles})
    jumps = [step for step in range(1, 120) if rates[step] > rates[step - 1] + 0.5]
    assert len(jumps) == cycles - 1


def _recorded_run(**settings) -> tuple:
    recorder = AppliedLRRecorder()
    trainer = make_trainer(
        "lesson_03.test_schedules",
        model=fixtures.tiny_model,
        settings=dict(per_device_train_batch_size=4, logging_strategy="no", **settings),
        callbacks=[recorder],
        train_dataset=fixtures.random_ids(rows=48),
        eval_dataset=fixtures.random_ids(rows=16, seed=1),
    )
    trainer.train()
    return trainer, recorder


@pytest.mark.rule(
    lesson="03",
    section="Recap",
    text="`reduce_lr_on_plateau` and `greedy` move only after evaluations, on `metric_for_best_model`.",
    covers=["reduce_lr_on_plateau replayed against torch on a real run's eval losses"],
)
def test_reduce_lr_on_plateau_follows_torch_on_the_eval_losses() -> None:
    trainer, recorder = _recorded_run(
        lr_scheduler_type="reduce_lr_on_plateau",
        lr_scheduler_kwargs={"patience": 0, "factor": 0.5},
        eval_strategy="steps",
        eval_steps=1,
        learning_rate=5e-2,
        num_train_epochs=1,
    )
    losses = [entry["eval_loss"] for entry in trainer.state.log_history if "eval_loss" in entry]
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=5e-2)
    replay = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=0, factor=0.5)
    expected = []
    for loss in losses:
        expected.append(optimizer.param_groups[0]["lr"])
        replay.step(loss)
    assert len(losses) == len(recorder.lrs) == trainer.state.max_steps
    assert recorder.lrs == expected and len(set(expected)) > 1, "the run should have cut the rate at least once"


@pytest.mark.parametrize("accumulation", [2, 3])
def test_the_scheduler_steps_once_per_optimizer_update(accumulation: int) -> None:
    trainer, recorder = _recorded_run(
        lr_scheduler_type="linear", warmup_steps=0.25, gradient_accumulation_steps=accumulation, num_train_epochs=1
    )
    updates = trainer.state.max_steps
    assert updates == math.ceil(48 / 4 / accumulation)
    assert len(recorder.lrs) == trainer.lr_scheduler.last_epoch == updates
    assert recorder.lrs == pytest.approx(
        schedule_lrs("linear", updates, math.ceil(0.25 * updates), trainer.args.learning_rate), rel=1e-6
    )


def test_the_recorder_says_what_is_wrong_without_an_optimizer() -> None:
    with pytest.raises(RuntimeError, match="no optimizer"):
        AppliedLRRecorder().on_optimizer_step(None, None, None)
