"""Reference solutions for lesson 11, checkpoints and resume."""

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
