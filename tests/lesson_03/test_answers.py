"""Lesson 03's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

from exercise_cases import answer_tests

CORRECT = {
    "q1": [0.25, 0.2549],
    "q2": [
        {
            "learning_rate": 3e-4,
            "lr_scheduler_type": "cosine_with_min_lr",
            "warmup_steps": 0.25,
            "lr_scheduler_kwargs": {"min_lr": 3e-5},
        },
        {
            "lr_scheduler_type": "cosine_with_min_lr",
            "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
            "warmup_steps": 1 / 4,
            "learning_rate": 0.0003,
            "weight_decay": 0.01,
        },
    ],
}

MISTAKES = {
    "q1": [
        (1 / 3, "linear"),
        (0.2061, "without warmup"),
        (0.5, "(70 - 10) / 90"),
    ],
    "q2": [
        ({"learning_rate": 3e-4, "lr_scheduler_type": "cosine", "warmup_steps": 0.25}, "10% or more"),
        (
            {
                "learning_rate": 3e-4,
                "lr_scheduler_type": "cosine_with_min_lr",
                "warmup_steps": 3,
                "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
            },
            "a quarter of the updates",
        ),
        (
            # 24 %, not a quarter: it rounded up to the same counts as 0.25 on the old check's fixed 12 and 20
            # updates and passed; the check now draws run lengths where the two differ.
            {
                "learning_rate": 3e-4,
                "lr_scheduler_type": "cosine_with_min_lr",
                "warmup_steps": 0.24,
                "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
            },
            "a quarter of the updates",
        ),
        (
            {
                "learning_rate": 0.0003,
                "lr_scheduler_type": "cosine_with_min_lr",
                "warmup_steps": 0.25,
                "lr_scheduler_kwargs": {"min_lr_rate": 0.1},
                "warmup_ratio": 0.25,
            },
            "'warmup_ratio'",
        ),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
