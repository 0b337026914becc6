"""Reference solutions for the exercises of lesson 18."""

from __future__ import annotations

from typing import Any

import torch


def collate_completions(rows: list[dict[str, list[int]]], pad_id: int, eos_id: int) -> dict[str, torch.Tensor]:
    """Prompt + completion + EOS, right padded with ``pad_id``; labels -100 on the prompt and the padding."""
    width = max(len(row["prompt_ids"]) + len(row["completion_ids"]) + 1 for row in rows)
    ids, mask, labels = [], [], []
    for row in rows:
        answer = row["completion_ids"] + [eos_id]
        tokens = row["prompt_ids"] + answer
        padding = width - len(tokens)
        ids.append(tokens + [pad_id] * padding)
        mask.append([1] * len(tokens) + [0] * padding)
        labels.append([-100] * len(row["prompt_ids"]) + answer + [-100] * padding)
    return {"input_ids": torch.tensor(ids), "attention_mask": torch.tensor(mask), "labels": torch.tensor(labels)}


def make_exact_match(tokenizer: Any) -> Any:
    """A compute_metrics for predictions that echo the prompt (as ``generate`` returns them) and labels -100 on it."""

    def compute_metrics(prediction: Any) -> dict[str, float]:
        hits = 0
        for generated, labels in zip(prediction.predictions, prediction.label_ids, strict=True):
            labels = labels.tolist()
            prompt_length = next(i for i, label in enumerate(labels) if label != -100)
            wanted = [label for label in labels if label != -100 and label != tokenizer.eos_token_id]
            tokens = [t for t in generated.tolist() if t not in (-100, tokenizer.pad_token_id)][prompt_length:]
            said = tokens[: tokens.index(tokenizer.eos_token_id)] if tokenizer.eos_token_id in tokens else tokens
            hits += said == wanted
        return {"exact_match": hits / len(prediction.label_ids)}

    return compute_metrics


def digit_reward(completions: list[str], answer: list[str], **kwargs: Any) -> list[float]:
    """1.0 for the right digit, 0.2 for a wrong single digit, 0.0 for anything else."""
    rewards = []
    for completion, right in zip(completions, answer, strict=True):
        said = completion.strip()
        rewards.append(1.0 if said == right.strip() else 0.2 if len(said) == 1 and said.isdigit() else 0.0)
    return rewards
