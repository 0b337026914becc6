"""Reference solutions (and realistic wrong answers) for the exercises of lesson 09."""

from __future__ import annotations

# Exercise 1: length-grouped sampling; DataCollatorWithPadding already pads each batch to its longest review.
low_padding_arguments = {"train_sampling_strategy": "group_by_length"}

WRONG_LOW_PADDING = [
    {"group_by_length": True},  # the 4.x flag: TrainingArguments no longer accepts it
    {},  # plain dynamic padding: the baseline, not an improvement
    {"per_device_train_batch_size": 1},  # no padding at all, but a different training run
]


def accumulation_plan(target_batch: int, max_micro_batch: int) -> dict[str, int]:
    """The largest micro-batch that fits and divides the target, and the accumulation that makes up the rest."""
    micro = max(size for size in range(1, min(target_batch, max_micro_batch) + 1) if target_batch % size == 0)
    return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": target_batch // micro}


def wrong_plan_ignores_divisibility(target_batch: int, max_micro_batch: int) -> dict[str, int]:
    """Takes the biggest micro-batch even when it does not divide the target (48 with 20 -> 20 x 2 = 40)."""
    micro = min(target_batch, max_micro_batch)
    return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": target_batch // micro}


def wrong_plan_micro_batch_of_one(target_batch: int, max_micro_batch: int) -> dict[str, int]:
    """Always correct in total, but accumulates over single reviews: the slowest way."""
    return {"per_device_train_batch_size": 1, "gradient_accumulation_steps": target_batch}
