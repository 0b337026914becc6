"""Lesson 05's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import math

from exercise_cases import answer_tests
from transformers import TrainerCallback


class HistoryFromLogs(TrainerCallback):
    def __init__(self):
        self.history = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        if "eval_loss" in logs:
            self.history.append((state.global_step, logs["eval_loss"]))


class HistoryFromState(TrainerCallback):
    def __init__(self, *args, **kwargs):
        super().__init__()
        self.history = list()

    def on_evaluate(self, args, state, control, **kwargs):
        self.history += [(int(state.global_step), float(kwargs["metrics"]["eval_loss"]))]


class HistoryAsLists(TrainerCallback):
    """Pairs as lists: misjudged before ("should be a pair"); the exercise now says a list of two items is a pair."""

    def __init__(self):
        self.history = []

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append([state.global_step, metrics["eval_loss"]])


class HistoryEpochs(HistoryFromState):
    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append((state.epoch, metrics["eval_loss"]))


class HistoryShared(TrainerCallback):
    history = []

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append((state.global_step, metrics["eval_loss"]))


def counts_by_simulation(num_examples, batch_size, accumulation, epochs):
    step_ends = substep_ends = 0
    for _ in range(epochs):
        batches = -(-num_examples // batch_size)
        for index in range(batches):
            if (index + 1) % accumulation == 0 or index + 1 == batches:
                step_ends += 1
            else:
                substep_ends += 1
    return {"on_step_end": step_ends, "on_substep_end": substep_ends, "on_epoch_end": epochs}


def counts_with_divmod(num_examples, batch_size, accumulation, epochs):
    batches, rest = divmod(num_examples, batch_size)
    batches += bool(rest)
    steps = batches // accumulation + (batches % accumulation > 0)
    return dict(on_step_end=epochs * steps, on_substep_end=epochs * (batches - steps), on_epoch_end=epochs)


def counts_floor(num_examples, batch_size, accumulation, epochs):
    batches = num_examples // batch_size
    return {
        "on_step_end": batches // accumulation * epochs,
        "on_substep_end": (batches - batches // accumulation) * epochs,
        "on_epoch_end": epochs,
    }


OLD_FIXED_CASES = ((64, 8, 2, 1), (50, 12, 2, 2), (20, 3, 3, 1), (33, 4, 5, 2), (16, 16, 1, 3), (10, 4, 4, 1))


def counts_memorised(num_examples, batch_size, accumulation, epochs):
    """A table of the cases the check once fixed in its source: passed before, fails on drawn cases."""
    table = {}
    for n, b, a, e in OLD_FIXED_CASES:
        batches = -(-n // b)
        steps = -(-batches // a)
        table[n, b, a, e] = {"on_step_end": steps * e, "on_substep_end": (batches - steps) * e, "on_epoch_end": e}
    return table.get((num_examples, batch_size, accumulation, epochs), {"on_step_end": 0})


def counts_one_epoch(num_examples, batch_size, accumulation, epochs):
    batches = math.ceil(num_examples / batch_size)
    steps = math.ceil(batches / accumulation)
    return {"on_step_end": steps, "on_substep_end": batches - steps, "on_epoch_end": epochs}


def counts_carried_across_epochs(num_examples, batch_size, accumulation, epochs):
    """Wrong: carries the accumulation over the end of an epoch (one run of batches * epochs). Passed before: the
    drawn cases never combined several epochs with a short last step where that gives fewer steps."""
    batches = math.ceil(num_examples / batch_size) * epochs
    steps = math.ceil(batches / accumulation)
    return {"on_step_end": steps, "on_substep_end": batches - steps, "on_epoch_end": epochs}


def counts_from_the_effective_batch(num_examples, batch_size, accumulation, epochs):
    """A hurried learner's formula: all examples of the run over the effective batch."""
    steps = math.ceil(num_examples * epochs / (batch_size * accumulation))
    batches = math.ceil(num_examples * epochs / batch_size)
    return {"on_step_end": steps, "on_substep_end": batches - steps, "on_epoch_end": epochs}


# Realistic mistakes derived from the reference solution by one change.


class FromEveryLog(TrainerCallback):
    """Wrong: reads on_log, which also carries the training logs (no eval_loss there)."""

    def __init__(self) -> None:
        self.history: list[tuple[int, float]] = []

    def on_log(self, args, state, control, logs=None, **kwargs):
        self.history.append((state.global_step, logs.get("eval_loss", logs.get("loss"))))


class OffByOneStep(TrainerCallback):
    """Wrong: counts steps from 1 more than the Trainer does."""

    def __init__(self) -> None:
        self.history: list[tuple[int, float]] = []

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append((state.global_step + 1, metrics["eval_loss"]))


def counts_per_batch(num_examples: int, batch_size: int, accumulation: int, epochs: int) -> dict[str, int]:
    """Wrong: one step per batch, as if there were no accumulation."""
    batches = math.ceil(num_examples / batch_size)
    return {"on_step_end": batches * epochs, "on_substep_end": 0, "on_epoch_end": epochs}


CORRECT = {
    "q1": [HistoryFromLogs, HistoryFromState, HistoryAsLists],
    "q2": [counts_by_simulation, counts_with_divmod],
}

MISTAKES = {
    "q1": [
        (HistoryEpochs, "use state.global_step"),
        (HistoryShared, "its own list"),
        (FromEveryLog, "record once per evaluation"),
        (OffByOneStep, "use state.global_step as it is"),
    ],
    "q2": [
        (counts_floor, "smaller last batch"),
        (counts_one_epoch, "on_step_end: you said"),
        (counts_memorised, "on_step_end: you said 0"),
        (counts_per_batch, "on_substep_end: you said 0"),
        (counts_carried_across_epochs, "on_step_end: you said"),
        (counts_from_the_effective_batch, "on_step_end: you said"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)


def test_the_drawn_cases_make_every_carried_over_count_fail_whatever_the_seed() -> None:
    from exercises.checks.lesson_05 import COUNT_SEED, count_cases

    for seed in [COUNT_SEED, *range(40)]:
        cases = count_cases(seed)
        for formula in (counts_carried_across_epochs, counts_from_the_effective_batch, counts_one_epoch):
            assert any(formula(*case) != counts_by_simulation(*case) for case in cases), (seed, formula.__name__)
