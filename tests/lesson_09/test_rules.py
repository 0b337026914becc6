"""Lesson 09's rules (GPU and performance), tried beyond the lesson's run where a CPU can: the accumulation line on
three stock classifiers, checkpointing left on in a reused BERT and Llama."""

from __future__ import annotations

from typing import Any

import pytest
from rule_training import MODELS, first_step, trainer

from exercises.checks import fixtures


@pytest.mark.rule(
    lesson="09",
    section="The pattern",
    text="the stock model averages its loss over the micro-batch, so the Trainer must divide by the accumulation "
    "steps itself (`model_accepts_loss_kwargs = False`), or the loss and gradients come out twice too large",
    covers=["BERT, DistilBERT and Llama classifiers", "8 rows as 4 x 2 against 8 x 1"],
)
@pytest.mark.parametrize("model", sorted(MODELS))
def test_accumulation_two_doubles_until_the_trainer_divides(tmp_path: Any, model: str) -> None:
    full = first_step(tmp_path / "full", model, 8, 8, 1, None)
    stock = first_step(tmp_path / "stock", model, 8, 4, 2, None)
    fixed = first_step(tmp_path / "fixed", model, 8, 4, 2, False)
    assert stock == pytest.approx((2 * full[0], 2 * full[1]), rel=1e-4)
    assert fixed == pytest.approx(full, rel=1e-4)


@pytest.mark.rule(
    lesson="09",
    section="4. Gradient checkpointing",
    text="the Trainer switches checkpointing on in the model and never off",
    covers=[
        "BERT and Llama classifiers",
        "activation_checkpointing=True and gradient_checkpointing=True",
        "a second Trainer without it",
    ],
)
@pytest.mark.rule(
    lesson="09",
    section="4. Gradient checkpointing",
    text="`gradient_checkpointing=True` is another name for the same switch (it warns that it will go).",
    covers=["BERT and Llama classifiers"],
)
@pytest.mark.parametrize("model", ["bert", "llama"])
@pytest.mark.parametrize("switch", ["activation_checkpointing", "gradient_checkpointing"])
def test_checkpointing_stays_on_in_a_reused_model(tmp_path: Any, model: str, switch: str, recwarn: Any) -> None:
    built = MODELS[model](seed=0)
    assert not built.is_gradient_checkpointing
    data = fixtures.random_ids(8)
    trainer(tmp_path / "on", model=built, train_dataset=data, max_steps=1, **{switch: True}).train()
    assert built.is_gradient_checkpointing
    if switch == "gradient_checkpointing":
        assert any("gradient_checkpointing" in str(w.message) for w in recwarn.list)
    trainer(tmp_path / "plain", model=built, train_dataset=data, max_steps=1).train()
    assert built.is_gradient_checkpointing  # never switched off


@pytest.mark.rule(
    lesson="09",
    section="Recap",
    text="Grouped dynamic padding left well under half the padding of `max_length`: the collator pads, the sampler "
    "groups.",
    covers=["512 course reviews", "batches of 8 and 32", "max_length 64 and 128", "the Trainer's own dataloader"],
)
@pytest.mark.parametrize("batch", [8, 32])
@pytest.mark.parametrize("max_length", [64, 128])
def test_grouped_dynamic_padding_pads_under_half(tmp_path: Any, batch: int, max_length: int) -> None:
    from transformers import DataCollatorWithPadding

    from helpers.data import padding_stats

    reviews = fixtures.reviews(count=512, max_length=max_length).remove_columns(["label"])
    tokenizer = fixtures.tokenizer()

    def padded(folder: str, collator: Any, **settings: Any) -> int:
        run = trainer(
            tmp_path / folder,
            model=fixtures.tiny_model(seed=0),
            train_dataset=reviews,
            per_device_train_batch_size=batch,
            data_collator=collator,
            **settings,
        )
        stats = padding_stats(run.get_train_dataloader())
        return stats["tokens"] - stats["real_tokens"]

    full = padded("full", DataCollatorWithPadding(tokenizer, padding="max_length", max_length=max_length))
    grouped = padded("grouped", DataCollatorWithPadding(tokenizer), train_sampling_strategy="group_by_length")
    assert grouped < 0.5 * full, (grouped, full)
