"""Exercises of lesson 09: TrainingArguments that cut padding, and a gradient-accumulation plan."""

from __future__ import annotations

import random
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_09 as solutions

_BATCH = 16
_EXAMPLES = 256


def _padded_tokens(overrides: dict[str, Any]) -> int:
    from transformers import DataCollatorWithPadding

    from helpers.data import padding_stats

    collator = DataCollatorWithPadding(fixtures.tokenizer())
    settings = {"per_device_train_batch_size": _BATCH, **overrides}
    trainer = fixtures.trainer(settings, train_dataset=fixtures.reviews(_EXAMPLES), data_collator=collator)
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
    if overrides.get("train_sampling_strategy") == "sequential":
        raise Wrong(
            "a sequential sampler keeps the data's order: no shuffling at all; group reviews by length instead."
        )
    baseline = _padded_tokens({})
    yours = _padded_tokens(overrides)
    if yours > 0.6 * baseline:
        raise Wrong(
            f"one epoch still pads {yours} tokens against {baseline} with plain dynamic padding "
            f"({yours / baseline:.0%}); the goal is 60 % or less. Which sampler puts reviews of similar length "
            "together (section 2)?"
        )


PLAN_SEED = 92  # the check draws its cases from this seed each time it runs; none is a case the lesson shows
_PLAN_KEYS = {"per_device_train_batch_size", "gradient_accumulation_steps"}


def plan_cases(seed: int = PLAN_SEED) -> list[tuple[int, int]]:
    """``(target_batch, max_micro_batch)`` cases drawn at check time: always one where the target fits in one
    micro-batch, one where the largest micro-batch does not divide the target, and one prime target above the
    limit; the rest at random up to a target of 512."""
    rng = random.Random(seed)
    prime = rng.choice([p for p in range(67, 400) if all(p % d for d in range(2, int(p**0.5) + 1))])
    largest = rng.randint(5, 24)
    awkward = largest * rng.randint(2, 6) + rng.randint(1, largest - 1)  # min(target, largest) does not divide it
    cases = [(rng.randint(2, 24), 32), (awkward, largest), (prime, rng.randint(2, 40))]
    cases += [(rng.randint(1, 512), rng.randint(1, 96)) for _ in range(60)]
    return cases


def _check_accumulation_plan(plan: Any) -> None:
    from transformers import TrainingArguments

    if not callable(plan):
        raise Wrong("accumulation_plan should be a function (target_batch, max_micro_batch) -> dict.")
    for index, (target, largest) in enumerate(plan_cases()):
        call = f"accumulation_plan({target}, {largest})"
        with learner_code(f"calling {call}"):
            answer = plan(target, largest)
        if not isinstance(answer, dict):
            raise Wrong(f"{call} returned {type(answer).__name__}; return a dict.")
        if set(answer) != _PLAN_KEYS:
            raise Wrong(
                f"{call} returned the keys {sorted(answer)}; return exactly {sorted(_PLAN_KEYS)}, the two "
                "TrainingArguments fields the plan sets."
            )
        micro, steps = answer["per_device_train_batch_size"], answer["gradient_accumulation_steps"]
        if not all(isinstance(value, int) and not isinstance(value, bool) for value in (micro, steps)):
            raise Wrong(f"{call} returned {answer}: both values must be ints (use // rather than /).")
        if index < 3:
            with learner_code(f"building TrainingArguments(**{call})"):
                TrainingArguments(output_dir=fixtures.scratch_dir(), use_cpu=True, report_to="none", **answer)
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
    answer_name="low_padding_arguments",
    checker=_check_low_padding,
    hint_text="one TrainingArguments field chooses the training sampler; in 4.x it was a boolean flag.",
    solution_obj=solutions.low_padding_arguments,
)

q2 = Exercise(
    answer_name="accumulation_plan",
    checker=_check_accumulation_plan,
    hint_text=(
        "The micro-batch must fit under the limit and divide the target exactly; the largest such size means the "
        "fewest accumulation steps, which make up the rest."
    ),
    solution_obj=solutions.accumulation_plan,
)

bind_exercises(globals())
