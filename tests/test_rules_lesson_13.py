"""Lesson 13's rules (reading real subclasses): the overrides and the loss-scaling declarations of TRL's trainers,
read on the pinned TRL, with GRPOTrainer as a third class the sentence does not name."""

from __future__ import annotations

import pytest
from trl import DPOTrainer, GRPOTrainer, SFTTrainer

from helpers.lessons.lesson_13 import trainer_overrides

FOUR = {"compute_loss", "training_step", "prediction_step", "log"}


@pytest.mark.rule(
    lesson="13",
    section="Recap",
    text="`SFTTrainer` and `DPOTrainer` both redefine `compute_loss`, `training_step`, `prediction_step` and `log`; "
    "ask a class with `trainer_overrides` (its method resolution order).",
    covers=["SFTTrainer", "DPOTrainer", "GRPOTrainer (not named: it redefines the same four)"],
)
@pytest.mark.parametrize("cls", [SFTTrainer, DPOTrainer, GRPOTrainer])
def test_trl_trainers_redefine_the_four(cls: type) -> None:
    assert FOUR <= set(trainer_overrides(cls))


@pytest.mark.rule(
    lesson="13",
    section="Recap",
    text="`DPOTrainer` a per-batch mean with `loss_is_scaled_for_ga = False`",
    covers=["the class attribute on the pinned TRL", "SFTTrainer leaves it to the Trainer (None)"],
)
def test_dpo_declares_its_loss_unscaled() -> None:
    assert DPOTrainer.loss_is_scaled_for_ga is False
    assert getattr(SFTTrainer, "loss_is_scaled_for_ga", None) is None
