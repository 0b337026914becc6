"""Reference solutions and realistic wrong answers for lesson 06's exercises (callback control)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from transformers import TrainerCallback, TrainerControl


# Exercise 1: evaluate after the given optimizer steps only.
class EvaluateAtSteps(TrainerCallback):
    """Raise should_evaluate at the end of the given steps (after DefaultFlowCallback has decided)."""

    def __init__(self, steps):
        self.steps = set(steps)

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step in self.steps:
            control.should_evaluate = True


class _AtStepBegin(EvaluateAtSteps):
    """Wrong: at on_step_begin, global_step still counts the steps already done, so this evaluates a step late."""

    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step in self.steps:
            control.should_evaluate = True


class _AtEvaluate(EvaluateAtSteps):
    """Wrong: on_evaluate only fires once an evaluation is already happening."""

    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_evaluate(self, args, state, control, **kwargs):
        if state.global_step in self.steps:
            control.should_evaluate = True


class _FreshControl(EvaluateAtSteps):
    """Wrong: returns a new TrainerControl, which throws away the flags DefaultFlowCallback set (stop, log, save)."""

    def on_step_end(self, args, state, control, **kwargs):
        return TrainerControl(should_evaluate=state.global_step in self.steps)


WRONG_EVALUATORS: list[Any] = [_AtStepBegin, _AtEvaluate, _FreshControl]


# Exercise 2: cancel checkpoints before step `first`.
class NoEarlyCheckpoints(TrainerCallback):
    """Lower should_save at on_step_end, after DefaultFlowCallback raised it, while global_step < first."""

    def __init__(self, first):
        self.first = first

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step < self.first:
            control.should_save = False


class _SeedStyle(NoEarlyCheckpoints):
    """Wrong: the Short customisation post's place. The flag is raised again at on_step_end, after this ran."""

    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step < self.first:
            control.should_save = False


class _EveryCheckpoint(NoEarlyCheckpoints):
    """Wrong: cancels every checkpoint, not only the early ones."""

    def on_step_end(self, args, state, control, **kwargs):
        control.should_save = False


class _DeleteAfterSave(NoEarlyCheckpoints):
    """Wrong: lets the Trainer write the early checkpoints, then deletes their folders in on_save."""

    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_save(self, args, state, control, **kwargs):
        if state.global_step < self.first:
            shutil.rmtree(Path(args.output_dir) / f"checkpoint-{state.global_step}")


WRONG_SAVERS: list[Any] = [_SeedStyle, _EveryCheckpoint, _DeleteAfterSave]
