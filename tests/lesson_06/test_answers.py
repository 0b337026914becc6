"""Lesson 06's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import os
import shutil

from exercise_cases import answer_tests
from transformers import TrainerCallback, TrainerControl


class EvaluateFromList(TrainerCallback):
    def __init__(self, steps=()):
        self.remaining = sorted(steps)

    def on_step_end(self, args, state, control, **kwargs):
        if self.remaining and state.global_step == self.remaining[0]:
            self.remaining.pop(0)
            control.should_evaluate = True
        return control


class EvaluateOverwrite(TrainerCallback):
    def __init__(self, steps):
        self.steps = tuple(steps)

    def on_step_end(self, args, state, control, **kwargs):
        control.should_evaluate = state.global_step in self.steps


class EvaluateFixed(TrainerCallback):
    def __init__(self, steps):
        pass

    def on_step_end(self, args, state, control, **kwargs):
        control.should_evaluate = state.global_step in (2, 5)


class EvaluateAtBegin(EvaluateOverwrite):
    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step in self.steps:
            control.should_evaluate = True


class EvaluateFreshControl(TrainerCallback):
    """Returns a new TrainerControl: passed before (only the evaluations were checked); it drops the Trainer's own
    stop, log and save flags, so the run goes past max_steps."""

    def __init__(self, steps):
        self.steps = list(steps)

    def on_step_end(self, args, state, control, **kwargs):
        fresh = TrainerControl()
        fresh.should_evaluate = state.global_step in self.steps
        return fresh


class CheckpointsFrom(TrainerCallback):
    def __init__(self, first=4):
        self.first = first

    def on_step_end(self, args, state, control, **kwargs):
        control.should_save = control.should_save and state.global_step >= self.first


class CheckpointsFromSubclassedFlow(TrainerCallback):
    def __init__(self, **kwargs):
        self.first = kwargs["first"]

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step < self.first and control.should_save:
            control.should_save = False
        return control


class CheckpointsAddsSaves(CheckpointsFrom):
    def on_step_end(self, args, state, control, **kwargs):
        control.should_save = state.global_step >= self.first


class CheckpointsFixed(CheckpointsFrom):
    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step < 4:
            control.should_save = False


class CheckpointsDeletedAfterwards(TrainerCallback):
    """Deletes the early checkpoint folders in on_save: passed before (only folders were counted); the exercise asks
    that they are never written."""

    def __init__(self, first):
        self.first = first

    def on_save(self, args, state, control, **kwargs):
        if state.global_step < self.first:
            shutil.rmtree(os.path.join(args.output_dir, f"checkpoint-{state.global_step}"))


CORRECT = {
    "q1": [EvaluateFromList, EvaluateOverwrite],
    "q2": [CheckpointsFrom, CheckpointsFromSubclassedFlow],
}

MISTAKES = {
    "q1": [
        (EvaluateFixed, "asked for steps"),
        (EvaluateAtBegin, "one step late"),
        (EvaluateFreshControl, "new TrainerControl()"),
    ],
    "q2": [
        (CheckpointsAddsSaves, "add none"),
        (CheckpointsFixed, "cancel the checkpoints before"),
        (CheckpointsDeletedAfterwards, "never written"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
