"""Lesson 06's many-case proofs, moved out of the notebook: helpers.control_matrix (the matrix's parts and its six
readings), the learning-rate routes that apply and log the same rate (``optimizers=`` and ``create_scheduler``,
against a callback that writes the rate), and where gradients exist at each event of a step."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from tiny_training import TinyModel, tiny_trainer, toy_dataset
from torch.optim.lr_scheduler import LambdaLR
from transformers import Trainer, TrainerCallback

from helpers.callback_events import EventRecorder
from helpers.control_matrix import ACTIONS, CONTROL_FLAGS, FlagProbe, flag_effect, matrix_readings, run_actions
from helpers.gradient_norms import group_gradient_norms
from helpers.lessons.lesson_03 import AppliedLRRecorder

LR, STEPS = 1e-3, 8


def _trainer(tmp_path: Any, callbacks: list[TrainerCallback], trainer_class: type = Trainer, **keywords: Any) -> Any:
    """A quiet Trainer on TinyModel: 16 rows, batches of 2, accumulation 2, one epoch: 4 optimizer steps (8 with
    num_train_epochs=2); ``keywords`` that are TrainingArguments fields go to the arguments, the rest to the Trainer."""
    settings = dict(gradient_accumulation_steps=2, eval_strategy="no", train_dataset=toy_dataset(16), quiet=True)
    return tiny_trainer(tmp_path, callbacks, trainer_class, **{**settings, **keywords})


# --- helpers.control_matrix -------------------------------------------------------------------------------------


def test_the_matrix_actions_are_control_flags() -> None:
    assert set(ACTIONS) <= set(CONTROL_FLAGS)


def test_flag_effect_names_extra_missing_and_shortened_runs() -> None:
    base = {"log": (1,), "evaluate": (5, 8), "save": (3, 6, 8), "last_step": 8, "epoch_steps": (4, 4)}
    assert flag_effect(base, dict(base)) == "no effect"
    assert flag_effect(base, {**base, "log": (1, 2)}) == "+log@2"
    short = {"log": (1,), "evaluate": (), "save": (3,), "last_step": 4, "epoch_steps": (4, 0)}
    # checkpoints and evaluations after the last step are not "missing": the run had stopped
    assert flag_effect(base, short) == "steps per epoch 4+0 (not 4+4)"
    assert flag_effect(base, {**base, "save": (3, 8)}) == "-save@6"


def test_run_actions_says_what_to_do_without_an_epoch_end() -> None:
    with pytest.raises(ValueError, match="pass it to the Trainer and train first"):
        run_actions([], EventRecorder())


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("on_step_end", "should_dance"), "flag must be one of"),
        (("on_step_end", "should_log", -1), "at_step must be a global_step"),
        (("on_step_endd", "should_log"), "on_step_end"),
    ],
)
def test_flag_probe_refuses_bad_input_with_a_clear_message(arguments: tuple[Any, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FlagProbe(*arguments)


def _lesson_matrix() -> dict[tuple[str, str], str]:
    """The cells lesson 06 measured (and asserted in its tucked cell) on the pin, rebuilt from its readings."""
    cells: dict[tuple[str, str], str] = {}
    for event in ("on_train_begin", "on_epoch_begin"):
        cells |= {(event, flag): "no effect" for flag in ACTIONS}
    stops = {"on_step_begin": 1, "on_substep_end": 1, "on_pre_optimizer_step": 2, "on_optimizer_step": 2}
    stops["on_step_end"] = 2
    for event, steps in stops.items():
        cells |= {(event, flag): f"+{action}@2" for flag, action in ACTIONS.items()}
        cells[event, "should_training_stop"] = f"steps per epoch {steps} (not 4+4)"
        cells[event, "should_epoch_stop"] = f"steps per epoch {steps}+4 (not 4+4)"
    after = ["no effect", "+evaluate@1", "+save@1", "no effect", "no effect", "+save@5", *["no effect"] * 3]
    for (event, flag), effect in zip(
        [(event, flag) for event in ("on_log", "on_evaluate", "on_save") for flag in ACTIONS], after, strict=True
    ):
        cells[event, flag] = effect
    cells["on_epoch_end", "should_log"] = "+log@4"
    cells["on_epoch_end", "should_epoch_stop"] = "no effect"
    return cells


def test_matrix_readings_hold_on_the_lessons_matrix_and_each_fails_when_its_cell_changes() -> None:
    cells = _lesson_matrix()
    assert all(matrix_readings(cells).values())
    breaks = {
        "too early, no effect": ("on_epoch_begin", "should_save", "+save@4"),
        "within the step, it works": ("on_substep_end", "should_log", "no effect"),
        "log, then evaluate, then save": ("on_evaluate", "should_save", "no effect"),
        "an epoch end checks the flags once more": ("on_epoch_end", "should_log", "no effect"),
        "stopping mid-accumulation drops work": (
            "on_substep_end",
            "should_training_stop",
            "steps per epoch 2 (not 4+4)",
        ),
        "should_epoch_stop at on_epoch_end does nothing": ("on_epoch_end", "should_epoch_stop", "steps per epoch 4+0"),
    }
    for reading, (event, flag, wrong) in breaks.items():
        readings = matrix_readings({**cells, (event, flag): wrong})
        assert [name for name, holds in readings.items() if not holds] == [reading]
    with pytest.raises(KeyError):
        matrix_readings({})


def test_the_matrix_on_a_real_run_matches_the_readings_for_the_per_step_events(tmp_path: Any) -> None:
    """A real (tiny) run: a flag raised within the step acts at that step; stopping before the optimizer step ends
    the loop after that batch, stopping from on_pre_optimizer_step on completes the step first."""
    base_recorder = EventRecorder()
    base = _trainer(tmp_path / "base", [base_recorder], num_train_epochs=2, logging_strategy="no")
    base.train()
    baseline = run_actions(base.state.log_history, base_recorder)
    for event, steps in {"on_substep_end": 1, "on_pre_optimizer_step": 2, "on_step_end": 2}.items():
        effects = {}
        for flag in ("should_log", "should_training_stop"):
            probe, recorder = FlagProbe(event, flag, at_step=1 if event != "on_step_end" else 2), EventRecorder()
            trainer = _trainer(tmp_path / event / flag, [probe, recorder], num_train_epochs=2, logging_strategy="no")
            trainer.train()
            effects[flag] = flag_effect(baseline, run_actions(trainer.state.log_history, recorder))
        assert effects == {"should_log": "+log@2", "should_training_stop": f"steps per epoch {steps} (not 4+4)"}


# --- the learning rate: routes that apply and log the same rate -------------------------------------------------------


def _cosine(step: int, total: int = STEPS) -> float:
    return 0.5 + 0.5 * math.cos(math.pi * step / total)


class CosineTrainer(Trainer):
    """The create_scheduler route: the cosine as the Trainer's own scheduler."""

    def create_scheduler(self, num_training_steps: int, optimizer: Any = None) -> Any:
        if self.lr_scheduler is None:
            self.lr_scheduler = LambdaLR(optimizer or self.optimizer, lambda step: _cosine(step, num_training_steps))
            self._created_lr_scheduler = True
        return self.lr_scheduler


class WritesTheRate(TrainerCallback):
    """The Long customisation post's route: the rate written into the optimizer at on_step_begin."""

    def on_step_begin(self, args: Any, state: Any, control: Any, optimizer: Any = None, **kwargs: Any) -> None:
        for group in optimizer.param_groups:
            group["lr"] = args.learning_rate * _cosine(state.global_step, state.max_steps)


def _lr_run(tmp_path: Any, route: str) -> tuple[list[float], list[float]]:
    applied, extra = AppliedLRRecorder(), {}
    callbacks: list[TrainerCallback] = [applied]
    trainer_class: type = Trainer
    if route == "optimizers=":
        model = TinyModel()
        optimizer = torch.optim.AdamW(model.parameters(), lr=LR)
        extra = {"model": model, "optimizers": (optimizer, LambdaLR(optimizer, _cosine))}
    elif route == "create_scheduler":
        trainer_class = CosineTrainer
    elif route == "callback":
        callbacks.append(WritesTheRate())
    trainer = _trainer(tmp_path / route, callbacks, trainer_class, num_train_epochs=2, learning_rate=LR, **extra)
    trainer.train()
    logged = [entry["learning_rate"] for entry in trainer.state.log_history if "learning_rate" in entry]
    return applied.lrs, logged


@pytest.mark.rule(
    lesson="06",
    section="5. Changing the learning rate",
    text="for a formula of your own, pass `optimizers=(optimizer, scheduler)` or override `create_scheduler`, which "
    "log right too",
    covers=["a cosine of its own by each route", "accumulation 2", "8 updates over 2 epochs: applied = logged"],
)
@pytest.mark.parametrize("route", ["optimizers=", "create_scheduler"])
def test_a_scheduler_of_your_own_is_applied_and_logged(tmp_path: Any, route: str) -> None:
    applied, logged = _lr_run(tmp_path, route)
    expected = [LR * _cosine(step) for step in range(STEPS)]
    assert len(applied) == len(logged) == STEPS
    assert max(abs(a - e) for a, e in zip(applied, expected, strict=True)) < 1e-12
    assert max(abs(a - b) for a, b in zip(applied, logged, strict=True)) < 1e-12


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="A rate written from a callback trains but is not logged: use a scheduler.",
    covers=["accumulation 2", "8 updates over 2 epochs", "optimizers= and create_scheduler log right"],
)
def test_a_rate_written_from_a_callback_is_applied_but_the_linear_one_is_logged(tmp_path: Any) -> None:
    applied, logged = _lr_run(tmp_path, "callback")
    assert max(abs(a - LR * _cosine(step)) for step, a in enumerate(applied)) < 1e-12
    assert max(abs(g - LR * (STEPS - step) / STEPS) for step, g in enumerate(logged)) < 1e-12


# --- gradients at each event of a step ------------------------------------------------------------------------------

GRADIENT_EVENTS = ("on_step_begin", "on_substep_end", "on_pre_optimizer_step", "on_optimizer_step", "on_step_end")


class GradientsPresent(TrainerCallback):
    """At each event of GRADIENT_EVENTS: (event, how many parameters have a gradient, their global norm)."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, int, float | None]] = []
        for event in GRADIENT_EVENTS:
            setattr(self, event, self._look(event))

    def _look(self, event: str) -> Any:
        def look(args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
            norms = group_gradient_norms({"all": list(model.parameters())})
            present = sum(parameter.grad is not None for parameter in model.parameters())
            self.rows.append((event, present, norms.get("all")))

        return look


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="Gradients live from the backward pass to `on_optimizer_step`",
    covers=["accumulation 2", "every event of 4 updates", "clipping at 0.01"],
)
def test_gradients_exist_from_the_backward_pass_to_on_optimizer_step_and_are_clipped_before_the_step(
    tmp_path: Any,
) -> None:
    probe = GradientsPresent()
    trainer = _trainer(tmp_path, [probe], max_grad_norm=0.01)
    trainer.train()
    present = {event: {count for name, count, _ in probe.rows if name == event} for event in GRADIENT_EVENTS}
    assert present["on_step_begin"] == present["on_step_end"] == {0}
    assert present["on_substep_end"] == present["on_pre_optimizer_step"] == present["on_optimizer_step"] == {2}
    logged = [entry["grad_norm"] for entry in trainer.state.log_history if "grad_norm" in entry]
    clipped = [norm for name, _, norm in probe.rows if name == "on_pre_optimizer_step"]
    assert len(logged) == len(clipped) == 4 and all(norm > 0.01 for norm in logged), "clipping must act"
    assert all(norm is not None and abs(norm - 0.01) < 1e-6 for norm in clipped)
