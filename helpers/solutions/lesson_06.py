"""Reference solutions and realistic wrong answers for lesson 06's exercises (callback control)."""

from __future__ import annotations

from typing import Any

from transformers import TrainerCallback


# Exercise 1: evaluate after optimizer steps 2 and 5 only.
class EvaluateAtSteps(TrainerCallback):
    """Raise should_evaluate at the end of steps 2 and 5 (after DefaultFlowCallback has decided)."""

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step in (2, 5):
            control.should_evaluate = True


class _AtStepBegin(TrainerCallback):
    """Wrong: at on_step_begin, global_step still counts the steps already done, so this evaluates at 3 and 6."""

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step in (2, 5):
            control.should_evaluate = True


class _AtEvaluate(TrainerCallback):
    """Wrong: on_evaluate only fires once an evaluation is already happening."""

    def on_evaluate(self, args, state, control, **kwargs):
        if state.global_step in (2, 5):
            control.should_evaluate = True


WRONG_EVALUATORS: list[Any] = [_AtStepBegin, _AtEvaluate]


# Exercise 2: cancel checkpoints before step 4.
class NoEarlyCheckpoints(TrainerCallback):
    """Lower should_save at on_step_end, after DefaultFlowCallback raised it, while global_step < 4."""

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step < 4:
            control.should_save = False


class _SeedStyle(TrainerCallback):
    """Wrong: seed 000's place. The flag is raised again at on_step_end, after this ran."""

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step < 4:
            control.should_save = False


class _EveryCheckpoint(TrainerCallback):
    """Wrong: cancels every checkpoint, not only the early ones."""

    def on_step_end(self, args, state, control, **kwargs):
        control.should_save = False


WRONG_SAVERS: list[Any] = [_SeedStyle, _EveryCheckpoint]
