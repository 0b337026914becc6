"""Reference solutions for lesson 03's exercises."""

from __future__ import annotations

# Exercise 1: cosine, 100 updates, 10 warmup: update 70 is 60/90 of the way through the decay.
cosine_multiplier_at_70 = 0.25


# Exercise 2: peak 3e-4, a quarter of the updates as warmup, cosine decay with a floor at 10% of the peak.
schedule_settings = {
    "learning_rate": 3e-4,
    "lr_scheduler_type": "cosine_with_min_lr",
    "warmup_steps": 0.25,
    "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
}
