"""Exercises of lesson 01: a data collator written by hand, and TrainingArguments that meet a goal."""

from __future__ import annotations

from typing import Any

from helpers.checks import fixtures
from helpers.checks.core import Exercise, Wrong, learner_code
from helpers.solutions import lesson_01 as solutions

TEXTS = ["A quiet triumph.", "Two hours I will never get back, and the popcorn was stale too.", "Fun.", "Dull."]


def _expected(features: list[dict[str, Any]], pad: int) -> dict[str, list[list[int]]]:
    longest = max(len(f["input_ids"]) for f in features)
    return {
        "input_ids": [f["input_ids"] + [pad] * (longest - len(f["input_ids"])) for f in features],
        "attention_mask": [[1] * len(f["input_ids"]) + [0] * (longest - len(f["input_ids"])) for f in features],
        "labels": [f["label"] for f in features],
    }


def _check_collator(collate: Any) -> None:
    import torch

    if not callable(collate):
        raise Wrong("collate_reviews should be a function that takes a list of feature dicts.")
    ids = [fixtures.tokenizer()(text)["input_ids"] for text in TEXTS]
    cases = [([0, 1, 2], 0), ([1, 3], 7), ([2], 0), ([2, 3], 0)]  # pad id 7: not the tokenizer's; one review alone
    for rows, pad in cases:
        features = [{"input_ids": list(ids[i]), "label": i % 2} for i in rows]
        with learner_code(f"calling collate_reviews on {len(rows)} reviews with pad_token_id={pad}"):
            batch = collate(features, pad_token_id=pad)
        if not isinstance(batch, dict) or {"input_ids", "attention_mask", "labels"} - set(batch):
            keys = sorted(batch) if isinstance(batch, dict) else type(batch).__name__
            raise Wrong(f"return a dict of tensors input_ids, attention_mask and labels, got {keys}.")
        expected = _expected(features, pad)
        for key, want in expected.items():
            got = batch[key]
            if not torch.is_tensor(got) or (key != "attention_mask" and got.dtype.is_floating_point):
                raise Wrong(f"{key} must be a torch tensor of integers (torch.tensor of ints), got {got!r:.50}.")
            if list(got.shape) != list(torch.tensor(want).shape):
                raise Wrong(
                    f"{key} has shape {tuple(got.shape)} for {len(rows)} reviews whose longest has "
                    f"{len(expected['input_ids'][0])} tokens: pad to the longest in this batch, not a fixed length."
                )
            if got.tolist() != want:
                advice = {
                    "input_ids": f"pad on the right with pad_token_id (here {pad}), never a fixed id",
                    "attention_mask": "1 for each real token, 0 for each padding position",
                    "labels": "the features' 'label' values, in order",
                }[key]
                raise Wrong(f"{key} differs from what the model expects ({len(rows)} reviews, pad id {pad}): {advice}.")


def _check_training_args(make_args: Any) -> None:
    from transformers import TrainingArguments

    if not callable(make_args):
        raise Wrong("make_training_args should be a function of output_dir that returns TrainingArguments.")
    folder = fixtures.scratch_dir()
    with learner_code("calling make_training_args(output_dir)"):
        args = make_args(folder)
    if not isinstance(args, TrainingArguments):
        raise Wrong(f"make_training_args must return TrainingArguments, not {type(args).__name__}.")
    micro, steps = args.per_device_train_batch_size, args.gradient_accumulation_steps
    if micro != 8 or micro * steps != 32:
        raise Wrong(f"the goal is an effective batch of 32 from per-device batches of 8; you have {micro} x {steps}.")
    if args.num_train_epochs != 2 or args.max_steps > 0:
        raise Wrong(f"train for 2 epochs (num_train_epochs=2, no max_steps), not {args.num_train_epochs}.")
    if args.eval_strategy != "epoch" or args.save_strategy != "epoch":
        raise Wrong(f"evaluate and save once per epoch; yours: eval {args.eval_strategy}, save {args.save_strategy}.")
    if args.save_total_limit != 2:
        raise Wrong(f"keep at most two checkpoints on disk: save_total_limit=2, not {args.save_total_limit}.")
    if not args.load_best_model_at_end or args.metric_for_best_model not in ("accuracy", "eval_accuracy"):
        raise Wrong(
            "reload the best checkpoint at the end, judged by accuracy: load_best_model_at_end=True and "
            f"metric_for_best_model='accuracy' (yours: {args.metric_for_best_model!r})."
        )
    if not args.greater_is_better:
        raise Wrong("greater_is_better is False, so the lowest accuracy would win: leave it out or set it True.")
    if str(args.output_dir) != folder:
        raise Wrong("write the checkpoints to the output_dir the function receives.")


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
