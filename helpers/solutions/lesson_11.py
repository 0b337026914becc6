"""Reference solutions (and realistic wrong answers) for lesson 11, checkpoints and resume."""

from __future__ import annotations

import os
import re
from typing import Any

from transformers import TrainerCallback
from transformers.trainer_callback import ExportableState


def latest_checkpoint(output_dir: str) -> str | None:
    """The checkpoint-N folder with the highest N (compared as numbers), or None."""
    steps = {}
    for name in os.listdir(output_dir):
        match = re.fullmatch(r"checkpoint-(\d+)", name)
        if match and os.path.isdir(os.path.join(output_dir, name)):
            steps[int(match.group(1))] = name
    if not steps:
        return None
    return os.path.join(output_dir, steps[max(steps)])


class EvalCounter(TrainerCallback, ExportableState):
    """Counts evaluations; ExportableState makes the count part of every checkpoint."""

    def __init__(self, evaluations: int = 0) -> None:
        self.evaluations = evaluations

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.evaluations += 1

    def state(self) -> dict:
        return {"args": {}, "attributes": {"evaluations": self.evaluations}}


# Realistic wrong answers (tests/test_exercises.py proves each one is caught with a message).


def latest_checkpoint_by_name(output_dir: str) -> str | None:
    """Wrong: compares names as text, so checkpoint-9 beats checkpoint-10."""
    names = [name for name in os.listdir(output_dir) if name.startswith("checkpoint-")]
    return os.path.join(output_dir, max(names)) if names else None


def latest_checkpoint_no_empty_case(output_dir: str) -> str | None:
    """Wrong: fails on a folder without checkpoints instead of returning None."""
    names = [name for name in os.listdir(output_dir) if name.startswith("checkpoint-")]
    return os.path.join(output_dir, max(names, key=lambda name: int(name.split("-")[1])))


class EvalCounterWithoutState(TrainerCallback):
    """Wrong: counts evaluations, but nothing saves the count, so a resume starts again from 0."""

    def __init__(self) -> None:
        self.evaluations = 0

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.evaluations += 1


class EvalCounterOnSteps(TrainerCallback, ExportableState):
    """Wrong: counts optimizer steps, not evaluations."""

    def __init__(self, evaluations: int = 0) -> None:
        self.evaluations = evaluations

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.evaluations += 1

    def state(self) -> dict:
        return {"args": {}, "attributes": {"evaluations": self.evaluations}}
