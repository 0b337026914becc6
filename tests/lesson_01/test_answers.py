"""Lesson 01's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from exercise_cases import answer_tests
from transformers import TrainingArguments


def collate_pad_sequence(features, pad_token_id=0):
    ids = [torch.tensor(f["input_ids"]) for f in features]
    input_ids = torch.nn.utils.rnn.pad_sequence(ids, batch_first=True, padding_value=pad_token_id)
    mask = torch.nn.utils.rnn.pad_sequence([torch.ones_like(i) for i in ids], batch_first=True)
    return {"input_ids": input_ids, "attention_mask": mask, "labels": torch.tensor([f["label"] for f in features])}


def collate_numpy(features, pad_token_id=0):
    width = max(map(len, (f["input_ids"] for f in features)))
    ids = np.full((len(features), width), pad_token_id)
    for row, f in enumerate(features):
        ids[row, : len(f["input_ids"])] = f["input_ids"]
    mask = (np.arange(width)[None, :] < np.array([len(f["input_ids"]) for f in features])[:, None]).astype(int)
    labels = np.array([f["label"] for f in features])
    return {
        "input_ids": torch.from_numpy(ids),
        "attention_mask": torch.from_numpy(mask),
        "labels": torch.from_numpy(labels),
    }


def collate_pad_zero(features, pad_token_id=0):
    batch = collate_pad_sequence(features, 0)
    return batch


def collate_left_padding(features, pad_token_id=0):
    width = max(len(f["input_ids"]) for f in features)
    ids = [[pad_token_id] * (width - len(f["input_ids"])) + f["input_ids"] for f in features]
    mask = [[0] * (width - len(f["input_ids"])) + [1] * len(f["input_ids"]) for f in features]
    return {
        "input_ids": torch.tensor(ids),
        "attention_mask": torch.tensor(mask),
        "labels": torch.tensor([f["label"] for f in features]),
    }


def collate_from_the_features_mask(features, pad_token_id=0):
    """Pads the mask the tokenizer already put in each row: the rows a Trainer hands a collator carry one (the old
    check passed rows without it, so this correct answer was told its code raised KeyError)."""
    width = max(len(f["input_ids"]) for f in features)
    return {
        "input_ids": torch.tensor([f["input_ids"] + [pad_token_id] * (width - len(f["input_ids"])) for f in features]),
        "attention_mask": torch.tensor(
            [f["attention_mask"] + [0] * (width - len(f["attention_mask"])) for f in features]
        ),
        "labels": torch.tensor([f["label"] for f in features]),
    }


def collate_every_key(features, pad_token_id=0):
    """Pads every list in the rows, token_type_ids included, as DataCollatorWithPadding does (the old check's rows
    had no token_type_ids: KeyError, misjudged)."""
    width = max(len(f["input_ids"]) for f in features)
    pads = {"input_ids": pad_token_id, "attention_mask": 0, "token_type_ids": 0}
    batch = {key: torch.tensor([f[key] + [pad] * (width - len(f[key])) for f in features]) for key, pad in pads.items()}
    batch["labels"] = torch.tensor([f["label"] for f in features])
    return batch


def collate_other_parameter_name(features, pad_id=0):
    """Calls its pad id `pad_id`: the old check reported 'your code raised TypeError ... (at _check_collator)',
    a line inside the check; now the message names the signature the check calls."""
    return collate_pad_sequence(features, pad_id)


def args_without_parameter():
    """Takes no output_dir: the old message pointed at the check's line (at _check_training_args)."""
    return args_enum_style("out")


def args_enum_style(output_dir):
    from transformers.trainer_utils import IntervalStrategy, SaveStrategy

    return TrainingArguments(
        output_dir,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        eval_strategy=IntervalStrategy.EPOCH,
        save_strategy=SaveStrategy.EPOCH,
        save_total_limit=2,
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
    )


def args_from_dict(output_dir):
    settings = {"eval_strategy": "epoch", "save_strategy": "epoch", "save_total_limit": 2, "num_train_epochs": 2.0}
    return TrainingArguments(
        output_dir=output_dir,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=32 // 8,
        load_best_model_at_end=True,
        metric_for_best_model="eval_accuracy",
        **settings,
    )


def args_loss_metric(output_dir):
    return TrainingArguments(
        output_dir,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        eval_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=2,
        load_best_model_at_end=True,
    )


def args_no_limit(output_dir):
    return TrainingArguments(
        output_dir,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        eval_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model="accuracy",
    )


# Realistic mistakes derived from the reference solution by one change.


def collate_to_fixed_length(features: list[dict[str, Any]], pad_token_id: int = 0) -> dict[str, torch.Tensor]:
    """Pads every batch to 64 tokens: works, but wastes compute on padding."""
    input_ids = [list(f["input_ids"]) + [pad_token_id] * (64 - len(f["input_ids"])) for f in features]
    mask = [[1] * len(f["input_ids"]) + [0] * (64 - len(f["input_ids"])) for f in features]
    return {
        "input_ids": torch.tensor(input_ids),
        "attention_mask": torch.tensor(mask),
        "labels": torch.tensor([f["label"] for f in features]),
    }


def collate_without_mask(features: list[dict[str, Any]], pad_token_id: int = 0) -> dict[str, torch.Tensor]:
    """Forgets the attention mask, so the model attends to padding."""
    batch = collate_pad_sequence(features, pad_token_id)
    del batch["attention_mask"]
    return batch


def args_with_mismatched_strategies(output_dir: str) -> TrainingArguments:
    return TrainingArguments(
        output_dir=output_dir,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        eval_strategy="epoch",
        save_strategy="steps",
        save_steps=10,
        load_best_model_at_end=True,
        metric_for_best_model="eval_accuracy",
        report_to="none",
    )


def args_with_big_device_batch(output_dir: str) -> TrainingArguments:
    return TrainingArguments(
        output_dir=output_dir,
        num_train_epochs=2,
        per_device_train_batch_size=32,
        eval_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=2,
        load_best_model_at_end=True,
        metric_for_best_model="eval_accuracy",
        report_to="none",
    )


CORRECT = {
    "q1": [collate_pad_sequence, collate_numpy, collate_from_the_features_mask, collate_every_key],
    "q2": [args_enum_style, args_from_dict],
}

MISTAKES = {
    "q1": [
        (collate_pad_zero, "you padded with 0"),
        (collate_left_padding, "pad on the right"),
        (collate_other_parameter_name, "the check calls collate_reviews(features, pad_token_id=...)"),
        (collate_to_fixed_length, "not a fixed length"),
        (collate_without_mask, "attention_mask and labels"),
    ],
    "q2": [
        (args_loss_metric, "judged by accuracy"),
        (args_no_limit, "save_total_limit=2"),
        (args_without_parameter, "the check calls make_training_args(output_dir)"),
        (args_with_mismatched_strategies, "save and eval strategy to match"),
        (args_with_big_device_batch, "you have 32 x 1"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
