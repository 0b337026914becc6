"""Exercises of lesson 03 (learning-rate schedules): a value read from a schedule, and a schedule to configure."""

from __future__ import annotations

import math
import numbers
import random
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises
from exercises.solutions import lesson_03 as solutions
from helpers.plots.schedules import schedule_lrs

STEP_TO_READ = 70


def _check_cosine_value(answer: Any) -> None:
    if not isinstance(answer, numbers.Real) or isinstance(answer, bool):
        raise Wrong(f"the answer should be a number (a multiplier between 0 and 1), got {type(answer).__name__}.")
    expected = schedule_lrs("cosine", 100, 10)[STEP_TO_READ]
    if abs(answer - expected) <= 0.01:
        return
    if abs(answer - schedule_lrs("linear", 100, 10)[STEP_TO_READ]) <= 0.01:
        raise Wrong("that is the linear schedule's value; read the cosine curve.")
    if abs(answer - schedule_lrs("cosine", 100, 0)[STEP_TO_READ]) <= 0.01:
        raise Wrong("that is the cosine without warmup: the decay starts after the 10 warmup updates.")
    raise Wrong(
        f"{answer} is not what the cosine curve shows at update {STEP_TO_READ}; remember the first 10 "
        "updates are warmup, so the decay has covered (70 - 10) / 90 of its length."
    )


def _run_lengths() -> list[int]:
    """Two run lengths drawn when the check runs (seeded here): their quarters differ, so a fixed warmup count fits
    one of them at most, and neither is a multiple of 4, so a fraction near a quarter (0.24, 0.26) rounds up to a
    different count than 0.25 does in at least one of them."""
    rng = random.Random(32)
    while True:
        lengths = sorted(rng.sample([n for n in range(13, 41) if n % 4], 2))
        quarters = [math.ceil(n / 4) for n in lengths]
        near = [[math.ceil(f * n) for n in lengths] for f in (0.24, 0.26)]
        if quarters[0] != quarters[1] and all(counts != quarters for counts in near):
            return lengths


def _check_schedule_settings(settings: Any) -> None:
    from helpers.lessons.lesson_03 import AppliedLRRecorder

    for updates in _run_lengths():
        recorder = AppliedLRRecorder()
        fixed = {"max_steps": updates, "per_device_train_batch_size": 4}
        trainer = fixtures.train(fixtures.trainer(settings, fixed=fixed, callbacks=[recorder]))
        rates, warmup = recorder.lrs, math.ceil(updates / 4)  # a quarter, rounded up as Trainer rounds
        peak = max(rates)
        if abs(peak - 3e-4) > 1e-9:
            raise Wrong(f"the highest applied rate is {peak:.2e}; the peak should be 3e-4 (learning_rate).")
        if rates.index(peak) != warmup:
            raise Wrong(
                f"in a {updates}-update run the rate first reaches its peak at update {rates.index(peak)}, not "
                f"{warmup}: the warmup must last a quarter of the updates (give warmup_steps as a fraction)."
            )
        floor = min(rates[warmup:]) / peak
        if floor < 0.1 - 1e-9:
            raise Wrong(f"the rate fell to {floor:.0%} of the peak; it must stay at 10% or more (a min-lr cosine).")
        expected = schedule_lrs("cosine_with_min_lr", updates, warmup, 3e-4, {"min_lr_rate": 0.1})
        if max(abs(a - b) for a, b in zip(rates[warmup:], expected[warmup:])) > 1e-9:
            raise Wrong(
                f"in a {updates}-update run the rates after warmup do not follow a cosine that decays towards 10% "
                "of the peak; check the scheduler type and its floor (min_lr_rate or min_lr)."
            )
        del trainer


q1 = Exercise(
    answer_name="cosine_multiplier_at_70",
    checker=_check_cosine_value,
    hint_text=(
        "Read the cosine curve, not the linear one, at update 70: the first 10 updates are warmup, so the decay has "
        "covered 60 of its 90 updates by then."
    ),
    solution_obj=solutions.cosine_multiplier_at_70,
)

q2 = Exercise(
    answer_name="schedule_settings",
    checker=_check_schedule_settings,
    hint_text=(
        "Choose the scheduler type that is a cosine with a floor, and give the floor as a share of the peak through "
        "lr_scheduler_kwargs; a warmup given as a fraction of the run follows the run's length, a count does not."
    ),
    solution_obj=solutions.schedule_settings,
)

bind_exercises(globals())
