"""Reference solutions and realistic wrong answers for lesson 05's exercises (callback events)."""

from __future__ import annotations

import math
from typing import Any

from transformers import TrainerCallback


# Exercise 1: a callback that keeps (global_step, eval_loss) for each evaluation.
class EvalLossHistory(TrainerCallback):
    """One (global_step, eval_loss) pair per evaluation."""

    def __init__(self) -> None:
        self.history: list[tuple[int, float]] = []

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append((state.global_step, metrics["eval_loss"]))


class _FromEveryLog(TrainerCallback):
    """Wrong: reads on_log, which also carries the training logs (no eval_loss there)."""

    def __init__(self) -> None:
        self.history: list[tuple[int, float]] = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.history.append((state.global_step, logs.get("eval_loss", logs.get("loss"))))


class _OffByOneStep(TrainerCallback):
    """Wrong: counts steps from 1 more than the Trainer does."""

    def __init__(self) -> None:
        self.history: list[tuple[int, float]] = []

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append((state.global_step + 1, metrics["eval_loss"]))


class _SharedList(TrainerCallback):
    """Wrong: keeps the pairs on the class, so every instance (and every run) shares one list."""

    history: list[tuple[int, float]] = []

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append((state.global_step, metrics["eval_loss"]))


WRONG_CALLBACKS: list[Any] = [_FromEveryLog, _OffByOneStep, _SharedList]


# Exercise 2: event counts from the sizes.
def expected_counts(num_examples: int, batch_size: int, accumulation: int, epochs: int) -> dict[str, int]:
    """How often on_step_end, on_substep_end and on_epoch_end fire in one train()."""
    batches = math.ceil(num_examples / batch_size)
    steps_per_epoch = math.ceil(batches / accumulation)
    return {
        "on_step_end": steps_per_epoch * epochs,
        "on_substep_end": (batches - steps_per_epoch) * epochs,
        "on_epoch_end": epochs,
    }


def _counts_per_batch(num_examples: int, batch_size: int, accumulation: int, epochs: int) -> dict[str, int]:
    """Wrong: one step per batch, as if there were no accumulation."""
    batches = math.ceil(num_examples / batch_size)
    return {"on_step_end": batches * epochs, "on_substep_end": 0, "on_epoch_end": epochs}


def _floor_division(num_examples: int, batch_size: int, accumulation: int, epochs: int) -> dict[str, int]:
    """Wrong: drops the last, smaller batch and the last, shorter step."""
    batches = num_examples // batch_size
    steps = batches // accumulation
    return {"on_step_end": steps * epochs, "on_substep_end": (batches - steps) * epochs, "on_epoch_end": epochs}


# The six cases the check once fixed in its source, answered from a table: it passed then, and fails on cases drawn
# at check time.
_OLD_CASES = ((64, 8, 2, 1), (50, 12, 2, 2), (20, 3, 3, 1), (33, 4, 5, 2), (16, 16, 1, 3), (10, 4, 4, 1))
_TABLE = {case: expected_counts(*case) for case in _OLD_CASES}


def _lookup_table(num_examples: int, batch_size: int, accumulation: int, epochs: int) -> dict[str, int]:
    """Wrong: a table of memorised answers."""
    return _TABLE.get((num_examples, batch_size, accumulation, epochs), {})


WRONG_COUNTS: list[Any] = [_counts_per_batch, _floor_division, _lookup_table]
