"""Lesson 02's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import torch
from exercise_cases import answer_tests
from transformers import Trainer


def no_decay_by_trainer_rule(model):
    return [n for n, _ in model.named_parameters() if n not in Trainer.get_decay_parameter_names(None, model)]


def no_decay_by_modules(model):
    names = []
    for module_name, module in model.named_modules():
        for param_name, _ in module.named_parameters(recurse=False):
            if isinstance(module, torch.nn.LayerNorm) or param_name == "bias":
                names.append(f"{module_name}.{param_name}" if module_name else param_name)
    return names


def no_decay_by_name(model):
    return [n for n, _ in model.named_parameters() if "bias" in n or "LayerNorm" in n]


def no_decay_biases(model):
    return [n for n, _ in model.named_parameters() if n.endswith(".bias")]


CORRECT = {
    "02.1": [
        {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 8, "max_steps": 3},
        {"max_steps": 3, "gradient_accumulation_steps": 16, "per_device_train_batch_size": 1, "seed": 3},
    ],
    "02.2": [no_decay_by_trainer_rule, no_decay_by_modules],
    "02.3": [
        {
            "eval_strategy": "steps",
            "eval_steps": 2,
            "save_steps": 2,
            "save_total_limit": 2,  # default strategy
            "load_best_model_at_end": True,
            "metric_for_best_model": "eval_accuracy",
        },
        {
            "eval_strategy": "steps",
            "eval_steps": 2,
            "save_strategy": "best",
            "save_total_limit": 2,
            "load_best_model_at_end": True,
            "metric_for_best_model": "accuracy",
            "greater_is_better": True,
        },
    ],
}

MISTAKES = {
    "02.1": [
        ({"per_device_train_batch_size": 16, "max_steps": 3}, "at most 4"),
        ({"per_device_train_batch_size": 4, "gradient_accumulation_steps": 4, "max_steps": 12}, "not 3"),
    ],
    "02.2": [(no_decay_by_name, "GPT-2"), (no_decay_biases, "LayerNorm")],
    "02.3": [
        (
            {
                "eval_strategy": "steps",
                "eval_steps": 2,
                "save_steps": 2,
                "save_total_limit": 2,
                "load_best_model_at_end": True,
            },
            "so the best is checkpoint-",
        ),
        (
            {
                "eval_strategy": "steps",
                "eval_steps": 2,
                "save_steps": 2,
                "load_best_model_at_end": True,
                "metric_for_best_model": "accuracy",
            },
            "save_total_limit",
        ),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
