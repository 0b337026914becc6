"""Reference solutions for lesson 01."""

from __future__ import annotations

from typing import Any

import torch
from transformers import TrainingArguments


def collate_reviews(features: list[dict[str, Any]], pad_token_id: int = 0) -> dict[str, torch.Tensor]:
    """Pad ``input_ids`` to the longest review in the batch and build ``attention_mask`` and ``labels``."""
    longest = max(len(feature["input_ids"]) for feature in features)
    input_ids = [list(f["input_ids"]) + [pad_token_id] * (longest - len(f["input_ids"])) for f in features]
    attention_mask = [[1] * len(f["input_ids"]) + [0] * (longest - len(f["input_ids"])) for f in features]
    return {
        "input_ids": torch.tensor(input_ids),
        "attention_mask": torch.tensor(attention_mask),
        "labels": torch.tensor([f["label"] for f in features]),
    }


def make_training_args(output_dir: str) -> TrainingArguments:
    """Evaluate and save every epoch, keep two checkpoints, reload the best by accuracy, batch 8 x 4."""
    return TrainingArguments(
        output_dir=output_dir,
        num_train_epochs=2,
        per_device_train_batch_size=8,
        gradient_accumulation_steps=4,
        eval_strategy="epoch",
        save_strategy="epoch",
        save_total_limit=2,
        load_best_model_at_end=True,
        metric_for_best_model="eval_accuracy",
        greater_is_better=True,
        report_to="none",
    )
