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


def no_decay_forgets_return(model):
    """Builds the list and forgets to return it: the old check said 'your code raised TypeError ... (at
    _check_no_decay)', a line of the check; now the message names the missing return."""
    [n for n in Trainer.get_decay_parameter_names(None, model)]


def no_decay_parameters_not_names(model):
    decayed = set(Trainer.get_decay_parameter_names(None, model))
    return [p for n, p in model.named_parameters() if n not in decayed]


def _no_decay_table_of_the_old_check():
    """A lookup table of the answers for the three fixed models the old check used (1- and 3-layer BERT, 2-layer
    GPT-2): it passed the old check without computing anything; the check now draws the depths when it runs."""
    from transformers import GPT2Config, GPT2ForSequenceClassification

    from exercises.checks import fixtures

    gpt2 = GPT2ForSequenceClassification(
        GPT2Config(n_embd=16, n_layer=2, n_head=2, vocab_size=50, n_positions=16, bos_token_id=0, eos_token_id=0)
    )
    table = {}
    for model in (fixtures.tiny_model(layers=1), fixtures.tiny_model(layers=3), gpt2):
        names = tuple(n for n, _ in model.named_parameters())
        table[names] = no_decay_by_trainer_rule(model)
    return lambda model: table.get(tuple(n for n, _ in model.named_parameters()), [])


def no_decay_lookup_table(model):
    return _no_decay_table_of_the_old_check()(model)


# Tuned to the old check's fixed 64 rows (4 updates per epoch at 4 x 4): 0.75 epoch was 3 updates there and
# passed; "exactly 3 updates" must hold whatever the data, and the check now draws the dataset's size.
EPOCH_FRACTION_TUNED_TO_64_ROWS = {
    "per_device_train_batch_size": 4,
    "gradient_accumulation_steps": 4,
    "num_train_epochs": 0.75,
}


# Realistic mistakes derived from the reference solution by one change.


def only_layer_norms(model):
    return [name for name, _ in model.named_parameters() if "LayerNorm" in name]


CORRECT = {
    "q1": [
        {"per_device_train_batch_size": 2, "gradient_accumulation_steps": 8, "max_steps": 3},
        {"max_steps": 3, "gradient_accumulation_steps": 16, "per_device_train_batch_size": 1, "seed": 3},
    ],
    "q2": [no_decay_by_trainer_rule, no_decay_by_modules],
    "q3": [
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
    "q1": [
        ({"per_device_train_batch_size": 16, "max_steps": 3}, "at most 4"),
        ({"per_device_train_batch_size": 4, "gradient_accumulation_steps": 4, "max_steps": 12}, "not 3"),
        (EPOCH_FRACTION_TUNED_TO_64_ROWS, "num_train_epochs depends on the data size"),
    ],
    "q2": [
        (no_decay_by_name, "GPT-2"),
        (no_decay_biases, "LayerNorm"),
        (no_decay_forgets_return, "returned None"),
        (no_decay_parameters_not_names, "not the parameters themselves"),
        (no_decay_lookup_table, "you missed"),
        (only_layer_norms, "Trainer skips every bias"),
    ],
    "q3": [
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
        (
            {
                "eval_strategy": "steps",
                "eval_steps": 2,
                "save_strategy": "epoch",
                "save_steps": 2,
                "save_total_limit": 2,
                "load_best_model_at_end": True,
                "metric_for_best_model": "accuracy",
            },
            "save and eval strategy to match",
        ),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
