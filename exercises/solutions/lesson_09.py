"""Reference solutions for the exercises of lesson 09."""

from __future__ import annotations

# Exercise 1: length-grouped sampling; DataCollatorWithPadding already pads each batch to its longest review.
low_padding_arguments = {"train_sampling_strategy": "group_by_length"}


def accumulation_plan(target_batch: int, max_micro_batch: int) -> dict[str, int]:
    """The largest micro-batch that fits and divides the target, and the accumulation that makes up the rest."""
    micro = max(size for size in range(1, min(target_batch, max_micro_batch) + 1) if target_batch % size == 0)
    return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": target_batch // micro}
