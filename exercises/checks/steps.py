"""The Trainer's count of optimizer steps in an epoch on several processes, and the count each slip in working
it out gives (lesson 10's first exercise tells a learner which slip their count shows)."""

from __future__ import annotations

import math
from typing import Any


def trainer_steps(examples: int, per_device_batch: int, processes: int, accumulation: int) -> int:
    """The Trainer's own count (trainer.py, ``num_update_steps_per_epoch``), with the batches one process reads."""
    batches_per_process = math.ceil(examples / (per_device_batch * processes))
    return max(batches_per_process // accumulation + int(batches_per_process % accumulation > 0), 1)


def steps_advice(yours: Any, examples: int, batch: int, processes: int, accumulation: int) -> str:
    """The rule this case shows the answer broke, told apart by the count each slip gives."""
    batches = math.ceil(examples / (batch * processes))
    if accumulation > 1 and yours == batches // accumulation:
        return (
            f"Each process reads {batches} batches; the last {batches % accumulation} of them, fewer than "
            f"{accumulation}, still make an optimizer step (round the division by the accumulation up)."
        )
    if yours in (examples // (batch * processes) // accumulation, max(examples // (batch * processes), 1)):
        return "A last, smaller batch still counts: round the division of the reviews by the batch up."
    if processes > 1 and yours == trainer_steps(examples, batch, 1, accumulation):
        return f"Each process reads its own batch: the {processes} processes share the reviews out between them."
    return (
        "Each process reads its own batch, a last, smaller batch still counts, and so does a last group of fewer "
        "batches than the accumulation."
    )
