"""Reference solutions and realistic wrong answers for lesson 03's exercises."""

from __future__ import annotations

from typing import Any

# Exercise 1: cosine, 100 updates, 10 warmup: update 70 is 60/90 of the way through the decay.
cosine_multiplier_at_70 = 0.25

WRONG_VALUES: list[Any] = [1 / 3, 0.5, 1.0]  # linear's value, a guess at the midpoint, the peak

# Exercise 2: peak 3e-4, a quarter of the updates as warmup, cosine decay with a floor at 10% of the peak.
schedule_settings = {
    "learning_rate": 3e-4,
    "lr_scheduler_type": "cosine_with_min_lr",
    "warmup_steps": 0.25,
    "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
}

WRONG_SCHEDULES: list[Any] = [
    {"learning_rate": 3e-4, "lr_scheduler_type": "cosine", "warmup_steps": 0.25},  # no floor
    {**schedule_settings, "warmup_steps": 3},  # a count: right for 12 updates only
    {**schedule_settings, "warmup_ratio": 0.25},  # removed in 5.x: TypeError
]
