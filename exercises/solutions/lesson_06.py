"""Reference solutions for lesson 06's exercises (callback control)."""

from __future__ import annotations

from transformers import TrainerCallback


# Exercise 1: evaluate after the given optimizer steps only.
class EvaluateAtSteps(TrainerCallback):
    """Raise should_evaluate at the end of the given steps (after DefaultFlowCallback has decided)."""

    def __init__(self, steps):
        self.steps = set(steps)

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step in self.steps:
            control.should_evaluate = True


# Exercise 2: cancel checkpoints before step `first`.
class NoEarlyCheckpoints(TrainerCallback):
    """Lower should_save at on_step_end, after DefaultFlowCallback raised it, while global_step < first."""

    def __init__(self, first):
        self.first = first

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step < self.first:
            control.should_save = False
