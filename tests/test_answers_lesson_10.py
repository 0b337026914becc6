"""Lesson 10's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import math
from typing import Any

from exercise_cases import answer_tests
from transformers import TrainerCallback


def steps_ceil_trick(examples, per_device_batch, processes, accumulation):
    return -(-examples // (per_device_batch * processes * accumulation))


def steps_by_loop(examples, per_device_batch, processes, accumulation):
    batches = 0
    while batches * per_device_batch * processes < examples:
        batches += 1
    return max((batches + accumulation - 1) // accumulation, 1)


def steps_no_processes(examples, per_device_batch, processes, accumulation):
    return math.ceil(math.ceil(examples / per_device_batch) / accumulation)


def steps_floor(examples, per_device_batch, processes, accumulation):
    return max(examples // (per_device_batch * processes) // accumulation, 1)


class CollectorEarlyReturn(TrainerCallback):
    def __init__(self):
        self.losses = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if not state.is_world_process_zero:
            return
        if logs.get("loss") is not None:
            self.losses.append(logs["loss"])


class CollectorDict(TrainerCallback):
    def __init__(self):
        super().__init__()
        self.losses: list = []

    def on_log(self, args, state, control, **kwargs):
        logs = kwargs.get("logs") or {}
        if state.is_world_process_zero and "loss" in logs:
            self.losses += [float(logs["loss"])]


class CollectorLocal(CollectorDict):
    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_local_process_zero and "loss" in logs:
            self.losses.append(logs["loss"])


class CollectorAnyLoss(CollectorDict):
    def on_log(self, args, state, control, logs=None, **kwargs):
        if state.is_world_process_zero:
            self.losses += [value for key, value in logs.items() if key.endswith("loss")]


# A lookup table of the grid the check used to run: it passed before the cases were drawn.
_OLD_GRID = {
    (n, b, p, a): steps_ceil_trick(n, b, p, a)
    for n in (1, 7, 10, 32, 100, 101, 640, 1000)
    for b in (1, 4, 8, 32)
    for p in (1, 2, 3, 8)
    for a in (1, 2, 3, 4)
}


def steps_lookup_table(examples, per_device_batch, processes, accumulation):
    return _OLD_GRID[examples, per_device_batch, processes, accumulation]


class CollectorFromHistory(TrainerCallback):
    """Reads the loss from state.log_history, which Trainer.log fills before on_log: right, and failed before,
    when the check played the processes with an empty log_history."""

    def __init__(self):
        self.losses = []

    def on_log(self, args, state, control, **kwargs):
        last = state.log_history[-1]
        if state.is_world_process_zero and "loss" in last:
            self.losses.append(last["loss"])


# Realistic mistakes derived from the reference solution by one change.


class WrongCollectorEveryProcess(TrainerCallback):
    """Collects on every process: on 2 processes each loss would be kept (and printed) twice."""

    def __init__(self) -> None:
        self.losses: list[float] = []

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        if logs and "loss" in logs:
            self.losses.append(float(logs["loss"]))


CORRECT = {
    "q1": [steps_ceil_trick, steps_by_loop],
    "q2": [CollectorEarlyReturn, CollectorDict, CollectorFromHistory],
}

MISTAKES = {
    "q1": [
        (steps_no_processes, "Each process reads its own batch"),
        (steps_floor, "the Trainer takes"),
        (steps_lookup_table, "KeyError"),  # passed before the cases were drawn
    ],
    "q2": [
        (CollectorLocal, "is_local_process_zero=True"),
        (CollectorAnyLoss, "nothing else"),
        (WrongCollectorEveryProcess, "is_local_process_zero=False collected a loss"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
