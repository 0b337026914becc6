"""Reference solutions for the exercises of lesson 10."""

from __future__ import annotations

import math
from typing import Any

from transformers import TrainerCallback


def steps_per_epoch(examples: int, per_device_batch: int, processes: int, accumulation: int) -> int:
    """Each process gets ceil(examples / global batch) batches; accumulation groups them into optimizer steps."""
    batches_per_process = math.ceil(examples / (per_device_batch * processes))
    return max(math.ceil(batches_per_process / accumulation), 1)


class RankZeroLossCollector(TrainerCallback):
    """Keeps the logged training losses, on process zero only."""

    def __init__(self) -> None:
        self.losses: list[float] = []

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, float] | None = None, **kwargs: Any) -> None:
        if state.is_world_process_zero and logs and "loss" in logs:
            self.losses.append(float(logs["loss"]))
