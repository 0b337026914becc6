"""What watching the gradients costs: step times of a Trainer plain, with the gradient recorder, with the posts'
printer, or with the recorder's work in a ``training_step`` override, and the monitors' own work timed alone
(lesson 08's performance claim check, ``make bench``). The timing itself is ``helpers.performance``'s.
Lesson 08 and ``tools/bench.py`` import them from here.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import torch
from transformers import Trainer

from helpers.gradient_norms import (
    GradientNormRecorder,
    GradientNormTrainer,
    SeedStyleGradientPrinter,
    group_gradient_norms,
    parameter_groups,
)
from helpers.performance import CLOCKS, compare_step_times, default_clock, interleaved, medians, ratios


def monitoring_overhead(
    make_trainer: Callable[[list], Any],
    steps: int,
    repeats: int = 3,
    every: int = 1,
    monitors: dict[str, Callable[[], list]] | None = None,
    warmup_steps: int = 1,
    clock: str | None = None,
) -> dict[str, Any]:
    """Median step time of ``make_trainer(callbacks)`` plain, with ``GradientNormRecorder``, with
    ``SeedStyleGradientPrinter`` (or ``monitors``: name -> factory of callbacks), in interleaved rounds:
    ``helpers.performance.compare_step_times``'s result."""
    if not isinstance(steps, int) or steps <= warmup_steps:
        raise ValueError(f"steps must be an int larger than warmup_steps={warmup_steps}, got {steps!r}.")
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive int, got {repeats!r}.")
    monitors = monitors or {
        "plain": lambda: [],
        "efficient": lambda: [GradientNormRecorder(every=every)],
        "printer": lambda: [SeedStyleGradientPrinter(stream=io.StringIO())],
    }
    if "plain" not in monitors:
        raise ValueError("monitors must include 'plain' (the baseline of the ratios).")
    variants = {name: (lambda factory=factory: make_trainer(factory())) for name, factory in monitors.items()}
    return compare_step_times(variants, steps, repeats, "plain", warmup_steps=warmup_steps, clock=clock)


def seconds_per_call(work: dict[str, Callable[[], Any]], rounds: int, calls: int) -> tuple[dict[str, float], str]:
    """Median seconds per call of each function of ``work`` (name -> function), ``calls`` calls at a time,
    interleaved over ``rounds`` (CPU time on one thread; GPU: wall)."""
    clock = default_clock()
    gpu = clock == "wall" and torch.cuda.is_available()
    synchronize = torch.cuda.synchronize if gpu else (lambda: None)

    def timed(name: str) -> float:
        synchronize()
        started = CLOCKS[clock]()
        for _ in range(calls):
            work[name]()
        synchronize()
        return (CLOCKS[clock]() - started) / calls

    threads = torch.get_num_threads()
    torch.set_num_threads(1 if clock == "cpu" else threads)
    try:
        timings = interleaved({n: (lambda n=n: timed(n)) for n in work}, rounds)
    finally:
        torch.set_num_threads(threads)
    return medians(timings), clock


def monitor_call_seconds(model: torch.nn.Module, rounds: int = 20, calls: int = 5) -> dict[str, Any]:
    """Seconds per call of the recorder's work and of the printer's, alone, on the gradients ``model`` holds now
    (``seconds_per_call``)."""
    if not all(isinstance(n, int) and n >= 1 for n in (rounds, calls)):
        raise ValueError(f"rounds and calls must be positive ints, got {rounds!r}, {calls!r}.")
    groups = parameter_groups(model)
    tensors = sum(1 for ps in groups.values() for p in ps if p.grad is not None)
    if not tensors:
        raise ValueError("no parameter has a gradient: run a backward pass first.")
    printer = SeedStyleGradientPrinter(stream=io.StringIO())
    work = {
        "recorder": lambda: group_gradient_norms(groups),
        "printer": lambda: printer.on_pre_optimizer_step(None, None, None, model=model),
    }
    seconds, clock = seconds_per_call(work, rounds, calls)
    return {"call_seconds": seconds, "ratio": ratios(seconds, "recorder"), "tensors": tensors, "clock": clock}


def subclass_vs_callback(
    make_trainer: Callable[[type, list], Any],
    steps: int,
    repeats: int = 3,
    warmup_steps: int = 1,
    clock: str | None = None,
) -> dict[str, Any]:
    """Median step times of ``make_trainer(trainer_class, callbacks)`` as a ``Trainer``, with
    ``GradientNormRecorder``, and as ``GradientNormTrainer``, interleaved; adds ``subclass_over_callback``, the
    subclass's median over the callback's."""
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive int, got {repeats!r}.")
    variants = {
        "plain": lambda: make_trainer(Trainer, []),
        "callback": lambda: make_trainer(Trainer, [GradientNormRecorder(every=1)]),
        "subclass": lambda: make_trainer(GradientNormTrainer, []),
    }
    result = compare_step_times(
        variants, steps, rounds=repeats, baseline="plain", warmup_steps=warmup_steps, clock=clock
    )
    seconds = result["step_seconds"]
    result["subclass_over_callback"] = seconds["subclass"] / seconds["callback"]
    return result
