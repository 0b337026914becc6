"""Reference solutions for lesson 11, checkpoints and resume."""

from __future__ import annotations

import os
import re
import signal
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


class SaveOnSigterm(TrainerCallback):
    """On SIGTERM: a checkpoint at the end of the step under way, then the run stops (no 3-second wait)."""

    def __init__(self):
        self.requested, self.previous = False, None

    def _request(self, signum, frame):
        self.requested = True

    def on_train_begin(self, args, state, control, **kwargs):
        self.previous = signal.signal(signal.SIGTERM, self._request)

    def on_step_end(self, args, state, control, **kwargs):
        if self.requested:
            control.should_save = True
            control.should_training_stop = True

    def on_train_end(self, args, state, control, **kwargs):
        if self.previous is not None:
            signal.signal(signal.SIGTERM, self.previous)
