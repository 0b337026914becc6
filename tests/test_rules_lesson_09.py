"""Lesson 09's rules (GPU and performance), tried beyond the lesson's run where a CPU can: the accumulation line on
three stock classifiers, checkpointing left on in a reused BERT and Llama."""

from __future__ import annotations

from typing import Any

import pytest
from rule_training import MODELS, first_step, trainer

from helpers.checks import fixtures


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
