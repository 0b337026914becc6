"""Exercises of lesson 01: a data collator written by hand, and TrainingArguments that meet a goal."""

from __future__ import annotations

import copy
import inspect
import random
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_01 as solutions

_REQUIRED = ("input_ids", "attention_mask", "labels")


def _require_parameters(function: Any, name: str, call: str, *args: Any, **kwargs: Any) -> None:
    """Raise Wrong, naming the learner's signature, when ``function`` cannot be called as the check calls it."""
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError as error:
        raise Wrong(f"the check calls {call}, and your {name} cannot take that ({error}).") from None
    except ValueError:  # a builtin or C function without a signature: let the call itself tell
        pass


def _batches(seed: int) -> list[tuple[list[dict[str, Any]], int]]:
    """Batches of real tokenized reviews, exactly as a DataLoader hands them to a collator (one dict per row, with
    ``label``, ``input_ids``, ``token_type_ids`` and ``attention_mask``), and a pad id for each. Drawn when the
    check runs from a generator seeded here, so they are none of the batches the lesson shows."""
    reviews = fixtures.reviews()
    rng = random.Random(seed)
    batches = []
    for size in (rng.randint(4, 7), rng.randint(2, 3), 1):
        rows = [reviews[i] for i in rng.sample(range(len(reviews)), size)]
        batches.append((rows, rng.randint(50, 999)))  # never the tokenizer's own pad id (0)
    return batches


def _diagnose(key: str, got: Any, want: Any, mask: Any, pad: int) -> str:
    """What is wrong with ``got`` (a tensor of the right shape that differs from ``want``)."""
    import torch

    if key == "input_ids":
        padding = mask == 0
        if padding.any() and bool((got[padding] == 0).all()):
            return f"you padded with 0; pad with the pad_token_id you are given (here {pad})"
        left = torch.stack([torch.cat([row[m == 0], row[m == 1]]) for row, m in zip(want, mask)])
        if torch.equal(got, left):
            return "pad on the right, after each review's tokens, as DataCollatorWithPadding does"
        return f"pad on the right with pad_token_id (here {pad}) up to the longest review in the batch"
    if key == "attention_mask":
        return "1 for each real token, 0 for each padding position"
    if key == "labels":
        return "the features' 'label' values, in order"
    return "any other key you return must be padded as DataCollatorWithPadding pads it"


def _check_collator(collate: Any) -> None:
    import torch
    from transformers import DataCollatorWithPadding

    if not callable(collate):
        raise Wrong("collate_reviews should be a function that takes a list of feature dicts.")
    _require_parameters(collate, "collate_reviews", "collate_reviews(features, pad_token_id=...)", [], pad_token_id=0)
    reference = DataCollatorWithPadding(fixtures.tokenizer())
    for features, pad in _batches(seed=101):
        want = reference(copy.deepcopy(features))  # the library's batch, padded with the tokenizer's id (0)
        want["input_ids"] = torch.where(want["attention_mask"] == 1, want["input_ids"], pad)
        step = f"calling collate_reviews on {len(features)} reviews with pad_token_id={pad}"
        with learner_code(step):
            batch = collate(copy.deepcopy(features), pad_token_id=pad)
        if not isinstance(batch, dict) or set(_REQUIRED) - set(batch):
            keys = sorted(batch) if isinstance(batch, dict) else type(batch).__name__
            raise Wrong(
                f"return a dict of tensors input_ids, attention_mask and labels (the model's forward takes "
                f"'labels', not 'label'); got {keys}."
            )
        longest = int(want["attention_mask"].sum(dim=1).max())
        for key in [*_REQUIRED, *sorted(set(batch) & set(want) - set(_REQUIRED))]:
            got = batch[key]
            if not torch.is_tensor(got) or (key != "attention_mask" and got.dtype.is_floating_point):
                raise Wrong(f"{key} must be a torch tensor of integers (torch.tensor of ints), got {got!r:.50}.")
            if tuple(got.shape) != tuple(want[key].shape):
                raise Wrong(
                    f"{key} has shape {tuple(got.shape)} for {len(features)} reviews whose longest has {longest} "
                    f"tokens: pad to the longest in this batch (shape {tuple(want[key].shape)}), not a fixed length."
                )
            if not torch.equal(got.long(), want[key].long()):
                advice = _diagnose(key, got, want[key], want["attention_mask"], pad)
                raise Wrong(
                    f"{key} differs from DataCollatorWithPadding's ({len(features)} real reviews, pad id {pad}): "
                    f"{advice}."
                )


def _check_training_args(make_args: Any) -> None:
    from transformers import TrainingArguments

    if not callable(make_args):
        raise Wrong("make_training_args should be a function of output_dir that returns TrainingArguments.")
    folder = fixtures.scratch_dir()
    _require_parameters(make_args, "make_training_args", "make_training_args(output_dir)", folder)
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
    answer_name="collate_reviews",
    checker=_check_collator,
    hint_text="Find the longest input_ids in the batch, append pad_token_id to the shorter ones, build a mask "
    "of 1s (real) and 0s (padding), and return torch tensors.",
    solution_obj=solutions.collate_reviews,
)

q2 = Exercise(
    answer_name="make_training_args",
    checker=_check_training_args,
    hint_text="Effective batch = per_device_train_batch_size x gradient_accumulation_steps. "
    "load_best_model_at_end needs the save and eval strategies to match.",
    solution_obj=solutions.make_training_args,
)

bind_exercises(globals())
