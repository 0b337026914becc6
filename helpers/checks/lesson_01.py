"""Exercises of lesson 01: a data collator written by hand, and TrainingArguments that meet a goal."""

from __future__ import annotations

import tempfile
from typing import Any

from helpers.checks.core import Exercise, Wrong
from helpers.solutions import lesson_01 as solutions


def _tiny_features() -> tuple[list[dict[str, Any]], Any]:
    from helpers.models import load_tokenizer

    tokenizer = load_tokenizer()
    texts = ["A quiet triumph.", "Two hours I will never get back, and the popcorn was stale too.", "Fun."]
    features = [{"input_ids": tokenizer(text)["input_ids"], "label": label} for text, label in zip(texts, [1, 0, 1])]
    return features, tokenizer


def _check_collator(collate: Any) -> None:
    import torch
    from transformers import DataCollatorWithPadding

    if not callable(collate):
        raise Wrong("collate_reviews should be a function that takes a list of feature dicts.")
    features, tokenizer = _tiny_features()
    batch = collate(features, pad_token_id=tokenizer.pad_token_id)
    if not isinstance(batch, dict):
        raise Wrong(f"return a dict of tensors (input_ids, attention_mask, labels), not {type(batch).__name__}.")
    missing = {"input_ids", "attention_mask", "labels"} - set(batch)
    if missing:
        raise Wrong(f"the batch lacks {sorted(missing)}; without an attention mask the model attends to padding.")
    reference = DataCollatorWithPadding(tokenizer)([{"input_ids": f["input_ids"]} for f in features])
    if tuple(batch["input_ids"].shape) != tuple(reference["input_ids"].shape):
        raise Wrong(
            f"input_ids has shape {tuple(batch['input_ids'].shape)}; pad to the longest review in the "
            f"batch, {tuple(reference['input_ids'].shape)}, not to a fixed length."
        )
    if not torch.equal(batch["input_ids"], reference["input_ids"]) or not torch.equal(
        batch["attention_mask"], reference["attention_mask"]
    ):
        raise Wrong(
            "the padded ids or the mask differ from DataCollatorWithPadding: pad on the right with "
            "pad_token_id and mark real tokens with 1, padding with 0."
        )
    if batch["labels"].tolist() != [1, 0, 1]:
        raise Wrong("labels should be a tensor of the features' 'label' values, in order.")


def _check_training_args(make_args: Any) -> None:
    from transformers import TrainingArguments

    with tempfile.TemporaryDirectory() as folder:
        args = make_args(folder)
    if not isinstance(args, TrainingArguments):
        raise Wrong(f"make_training_args must return TrainingArguments, not {type(args).__name__}.")
    if (
        args.per_device_train_batch_size != 8
        or args.per_device_train_batch_size * args.gradient_accumulation_steps != 32
    ):
        raise Wrong(
            "the goal is an effective batch of 32 built from per-device batches of 8: "
            f"you have {args.per_device_train_batch_size} x {args.gradient_accumulation_steps}."
        )
    if args.num_train_epochs != 2:
        raise Wrong(f"train for 2 epochs (num_train_epochs), not {args.num_train_epochs}.")
    if args.eval_strategy != "epoch" or args.save_strategy != "epoch":
        raise Wrong("evaluate and save once per epoch: eval_strategy='epoch' and save_strategy='epoch'.")
    if args.save_total_limit != 2:
        raise Wrong("keep at most two checkpoints on disk: save_total_limit=2.")
    if not args.load_best_model_at_end or args.metric_for_best_model not in ("accuracy", "eval_accuracy"):
        raise Wrong(
            "reload the best checkpoint at the end, judged by accuracy: load_best_model_at_end=True, "
            "metric_for_best_model='eval_accuracy'."
        )
    if args.greater_is_better is False:
        raise Wrong("higher accuracy is better: greater_is_better must not be False.")


q1 = Exercise(
    name="01.1",
    answer_name="collate_reviews",
    checker=_check_collator,
    hint_text="Find the longest input_ids in the batch, append pad_token_id to the shorter ones, build a mask "
    "of 1s (real) and 0s (padding), and return torch tensors.",
    solution_obj=solutions.collate_reviews,
    wrong_answers=[solutions.collate_to_fixed_length, solutions.collate_without_mask],
)

q2 = Exercise(
    name="01.2",
    answer_name="make_training_args",
    checker=_check_training_args,
    hint_text="Effective batch = per_device_train_batch_size x gradient_accumulation_steps. "
    "load_best_model_at_end needs the save and eval strategies to match.",
    solution_obj=solutions.make_training_args,
    wrong_answers=[solutions.args_with_mismatched_strategies, solutions.args_with_big_device_batch],
)
