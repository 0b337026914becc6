"""Lesson 09's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import math

from exercise_cases import answer_tests


def plan_top_down(target_batch, max_micro_batch):
    for micro in range(min(target_batch, max_micro_batch), 0, -1):
        if target_batch % micro == 0:
            return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": target_batch // micro}


def plan_from_steps(target_batch, max_micro_batch):
    steps = next(
        s for s in range(1, target_batch + 1) if target_batch % s == 0 and target_batch // s <= max_micro_batch
    )
    return dict(gradient_accumulation_steps=steps, per_device_train_batch_size=target_batch // steps)


def plan_no_divisibility(target_batch, max_micro_batch):
    micro = min(target_batch, max_micro_batch)
    return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": math.ceil(target_batch / micro)}


def plan_powers_of_two(target_batch, max_micro_batch):
    micro = 1
    while micro * 2 <= max_micro_batch and target_batch % (micro * 2) == 0:
        micro *= 2
    return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": target_batch // micro}


def plan_with_slash(target_batch, max_micro_batch):
    micro = max(m for m in range(1, min(target_batch, max_micro_batch) + 1) if target_batch % m == 0)
    return {"per_device_train_batch_size": micro, "gradient_accumulation_steps": target_batch / micro}


def plan_without_steps(target_batch, max_micro_batch):
    return {"per_device_train_batch_size": min(target_batch, max_micro_batch)}


# A lookup table of the grid the check used to run (targets 1 to 64): it passed before the cases were drawn.
_OLD_GRID = {(t, m): plan_top_down(t, m) for t in range(1, 65) for m in (1, 3, 4, 7, 8, 20, 64)}


def plan_lookup_table(target_batch, max_micro_batch):
    return _OLD_GRID[target_batch, max_micro_batch]


CORRECT = {
    "q1": [
        {"train_sampling_strategy": "group_by_length"},
        {"train_sampling_strategy": "group_by_length", "dataloader_drop_last": False, "seed": 7},
    ],
    "q2": [plan_top_down, plan_from_steps],
}

MISTAKES = {
    "q1": [
        ({"group_by_length": True}, "group_by_length"),
        ({"train_sampling_strategy": "sequential"}, "sequential sampler"),
        ({}, "60 % or less"),
        ({"per_device_train_batch_size": 1}, "keep per_device_train_batch_size=16"),
    ],
    "q2": [
        (plan_no_divisibility, "equal the target exactly"),
        (plan_powers_of_two, "smaller passes"),
        # misjudged before: floats passed (4.0 x 8 == 32), a missing key was reported as a bug in the check,
        # and a table of the fixed cases passed
        (plan_with_slash, "must be ints"),
        (plan_without_steps, "return exactly"),
        (plan_lookup_table, "KeyError"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
