"""Reference solutions for lesson 21's exercises."""

from __future__ import annotations

from typing import Any


# Exercise 1: the head (everything outside model.base_model) at 10 x the rate; weight decay by the Trainer's rule.
def head_rate_groups(
    model: Any, decay_names: list[str], learning_rate: float, weight_decay: float
) -> list[dict[str, Any]]:
    body_ids = {id(parameter) for parameter in model.base_model.parameters()}
    groups: dict[tuple[bool, bool], list[Any]] = {}
    for name, parameter in model.named_parameters():
        if parameter.requires_grad:
            key = (id(parameter) in body_ids, name in decay_names)
            groups.setdefault(key, []).append(parameter)
    return [
        {
            "params": params,
            "lr": learning_rate if in_body else 10 * learning_rate,
            "weight_decay": weight_decay if decayed else 0.0,
        }
        for (in_body, decayed), params in groups.items()
    ]


# Exercise 2: schedule-free AdamW, 4 warmup updates given as a count, no decay from the scheduler.
schedule_free_settings = {
    "optim": "schedule_free_adamw",
    "learning_rate": 2e-3,
    "warmup_steps": 4,
    "lr_scheduler_type": "constant",
}
