"""Reference solutions for lesson 05's exercises (callback events)."""

from __future__ import annotations

import math

from transformers import TrainerCallback


# Exercise 1: a callback that keeps (global_step, eval_loss) for each evaluation.
class EvalLossHistory(TrainerCallback):
    """One (global_step, eval_loss) pair per evaluation."""

    def __init__(self) -> None:
        self.history: list[tuple[int, float]] = []

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        self.history.append((state.global_step, metrics["eval_loss"]))


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
