"""Exercises of lesson 09: TrainingArguments that cut padding, and a gradient-accumulation plan."""

from __future__ import annotations

import tempfile
from functools import lru_cache
from typing import Any

from helpers.checks.core import Exercise, Wrong
from helpers.solutions import lesson_09 as solutions

_BATCH = 16
_EXAMPLES = 256


@lru_cache(maxsize=1)
def _reviews_and_model() -> tuple[Any, Any, Any]:
    import helpers
    from helpers.data import load_reviews, select_examples, tokenize_reviews

    model, tokenizer = helpers.load_model_and_tokenizer(num_layers=1)
    reviews = tokenize_reviews(select_examples(load_reviews()["train"], _EXAMPLES), tokenizer, max_length=64)
    return model, tokenizer, reviews


def _padded_tokens(overrides: dict[str, Any]) -> int:
    from transformers import DataCollatorWithPadding, Trainer, TrainingArguments

    from helpers.data import padding_stats

    model, tokenizer, reviews = _reviews_and_model()
    with tempfile.TemporaryDirectory() as folder:
        settings = {
            "output_dir": folder,
            "per_device_train_batch_size": _BATCH,
            "report_to": "none",
            "seed": 0,
            "use_cpu": True,
            **overrides,
        }
        trainer = Trainer(
            model=model,
            args=TrainingArguments(**settings),
            train_dataset=reviews,
            data_collator=DataCollatorWithPadding(tokenizer),
        )
        if trainer.args.per_device_train_batch_size != _BATCH:
            raise Wrong(
                f"keep per_device_train_batch_size={_BATCH}: a smaller batch pads less, but it is another "
                "training run (more steps, noisier gradients). Change how reviews are ordered instead."
            )
        stats = padding_stats(trainer.get_train_dataloader())
    return stats["tokens"] - stats["real_tokens"]


def _check_low_padding(overrides: Any) -> None:
    if not isinstance(overrides, dict):
        raise Wrong(
            f"low_padding_arguments should be a dict of TrainingArguments overrides, not {type(overrides).__name__}."
        )
    baseline = _padded_tokens({})
    yours = _padded_tokens(overrides)
    if yours > 0.6 * baseline:
        raise Wrong(
            f"one epoch still pads {yours} tokens against {baseline} with plain dynamic padding "
            f"({yours / baseline:.0%}); the goal is 60 % or less. Which sampler puts reviews of similar length "
            "together (section 2)?"
        )


def _check_accumulation_plan(plan: Any) -> None:
    from transformers import TrainingArguments

    if not callable(plan):
        raise Wrong("accumulation_plan should be a function (target_batch, max_micro_batch) -> dict.")
    for target, largest in [(32, 8), (48, 20), (12, 64), (30, 4), (7, 3)]:
        answer = plan(target, largest)
        if not isinstance(answer, dict):
            raise Wrong(f"accumulation_plan({target}, {largest}) returned {type(answer).__name__}; return a dict.")
        with tempfile.TemporaryDirectory() as folder:
            args = TrainingArguments(output_dir=folder, use_cpu=True, report_to="none", **answer)
        micro, steps = args.per_device_train_batch_size, args.gradient_accumulation_steps
        if micro * steps != target:
            raise Wrong(
                f"for target {target} (micro-batch at most {largest}) you planned {micro} x {steps} = "
                f"{micro * steps} reviews per optimizer step; the product must equal the target exactly."
            )
        if micro > largest:
            raise Wrong(f"for target {target} your micro-batch {micro} is larger than {largest}, which does not fit.")
        best = max(size for size in range(1, min(target, largest) + 1) if target % size == 0)
        if micro < best:
            raise Wrong(
                f"for target {target} with at most {largest} per micro-batch, {best} x {target // best} works; "
                f"{micro} x {steps} gives the same batch but more, smaller passes, which cost time."
            )


q1 = Exercise(
    name="09.1",
    answer_name="low_padding_arguments",
    checker=_check_low_padding,
    hint_text="one TrainingArguments field chooses the training sampler; in 4.x it was a boolean flag.",
    solution_obj=solutions.low_padding_arguments,
    wrong_answers=list(solutions.WRONG_LOW_PADDING),
)

q2 = Exercise(
    name="09.2",
    answer_name="accumulation_plan",
    checker=_check_accumulation_plan,
    hint_text=(
        "try micro-batch sizes from min(target, max_micro_batch) down to 1; keep the first that divides the target."
    ),
    solution_obj=solutions.accumulation_plan,
    wrong_answers=[solutions.wrong_plan_ignores_divisibility, solutions.wrong_plan_micro_batch_of_one],
)
