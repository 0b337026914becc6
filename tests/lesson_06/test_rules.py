"""Lesson 06's rules (control flags), tried beyond the lesson's run: accumulation 1, 2 and 3 with an uneven last
group, checkpoints asked by the arguments and by a callback, a stop asked between accumulated batches."""

from __future__ import annotations

import os
from typing import Any

import pytest
from rule_training import trainer
from transformers import TrainerCallback, TrainerControl

ACCUMULATIONS = [1, 2, 3]  # 7 micro-batches (13 rows, batch 2): 3 + 3 + 1 at accumulation 3


def _checkpoints(tmp_path: Any) -> list[int]:
    return sorted(int(name.split("-")[1]) for name in os.listdir(tmp_path) if name.startswith("checkpoint-"))


class _Flags(TrainerCallback):
    """Sets (or vetoes) should_save at one event, at the steps given."""

    def __init__(self, event: str, steps: set[int], value: bool) -> None:
        self.steps, self.value = steps, value
        setattr(self, event, self._set)

    def _set(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step in self.steps or not self.steps:
            control.should_save = self.value


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="Set flags at `on_step_end`, after `DefaultFlowCallback` raised them from your arguments: add to its "
    "decisions or veto them.",
    covers=["accumulation 1, 2, 3", "uneven last accumulation group", "add a checkpoint", "veto every checkpoint"],
)
@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="An action flag acts at the end of the step it is set in",
    covers=["accumulation 1, 2, 3", "uneven last accumulation group"],
)
@pytest.mark.parametrize("accumulation", ACCUMULATIONS)
def test_flags_set_at_step_end_add_and_veto(tmp_path: Any, accumulation: int) -> None:
    steps = -(-7 // accumulation)
    trainer(
        tmp_path / "add", [_Flags("on_step_end", {1}, True)], rows=13, gradient_accumulation_steps=accumulation
    ).train()
    assert _checkpoints(tmp_path / "add") == [1]
    veto = _Flags("on_step_end", set(), False)
    trainer(
        tmp_path / "veto",
        [veto],
        rows=13,
        gradient_accumulation_steps=accumulation,
        save_strategy="steps",
        save_steps=1,
    ).train()
    assert _checkpoints(tmp_path / "veto") == [], f"{steps} updates"


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="A veto at `on_step_begin` has no effect.",
    covers=["accumulation 1, 2, 3", "uneven last accumulation group", "veto should_save"],
)
@pytest.mark.rule(
    lesson="06",
    section="1. Who raises a flag",
    text="Lowering flags at `on_step_begin` is the commonest mistake: they are lowered there anyway and raised again "
    "at `on_step_end`.",
    covers=["accumulation 1, 2, 3", "uneven last accumulation group", "raise should_save", "veto should_save"],
)
@pytest.mark.parametrize("accumulation", ACCUMULATIONS)
def test_a_veto_at_step_begin_has_no_effect_a_raise_works(tmp_path: Any, accumulation: int) -> None:
    veto = _Flags("on_step_begin", set(), False)
    run = trainer(
        tmp_path / "veto",
        [veto],
        rows=13,
        gradient_accumulation_steps=accumulation,
        save_strategy="steps",
        save_steps=1,
    )
    run.train()
    assert _checkpoints(tmp_path / "veto") == list(range(1, run.state.global_step + 1))
    # Raised at on_step_begin (after the handler lowered it), should_save acts at the end of that same step; the
    # recap's first wording ("lowered and raised again: no effect") said otherwise, and this case failed it.
    trainer(
        tmp_path / "add", [_Flags("on_step_begin", {1}, True)], rows=13, gradient_accumulation_steps=accumulation
    ).train()
    assert _checkpoints(tmp_path / "add") == [2]


class _StopAtSubstep(TrainerCallback):
    def on_substep_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == 1:
            control.should_training_stop = True


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="`should_training_stop` set before the optimizer step drops the half-accumulated step.",
    covers=["accumulation 2", "accumulation 3", "2 epochs"],
)
@pytest.mark.parametrize("accumulation", [2, 3])
def test_a_stop_between_accumulated_batches_drops_the_step(tmp_path: Any, accumulation: int) -> None:
    run = trainer(tmp_path, [_StopAtSubstep()], rows=24, gradient_accumulation_steps=accumulation, num_train_epochs=2)
    run.train()
    assert run.state.global_step == 1


class _FreshControl(TrainerCallback):
    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> TrainerControl:
        return TrainerControl()


class _ReturnsNone(TrainerCallback):
    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        return None


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="Return `None`, never a fresh `TrainerControl`.",
    covers=["checkpoints by steps", "accumulation 1 and 2", "a stop by max_steps"],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_a_fresh_control_drops_the_trainers_decisions(tmp_path: Any, accumulation: int) -> None:
    kept = trainer(
        tmp_path / "none",
        [_ReturnsNone()],
        rows=16,
        gradient_accumulation_steps=accumulation,
        save_strategy="steps",
        save_steps=2,
    )
    kept.train()
    assert _checkpoints(tmp_path / "none") == list(range(2, kept.state.global_step + 1, 2))
    lost = trainer(
        tmp_path / "fresh",
        [_FreshControl()],
        rows=16,
        gradient_accumulation_steps=accumulation,
        save_strategy="steps",
        save_steps=2,
    )
    lost.train()
    assert _checkpoints(tmp_path / "fresh") == []


def _scripted(values: list[float]) -> Any:
    """compute_metrics that returns the next scripted score at each evaluation."""
    queue = list(values)

    def compute(prediction: Any) -> dict[str, float]:
        return {"score": queue.pop(0)}

    return compute


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="`EarlyStoppingCallback` stops on an absolute lack of improvement",
    covers=[
        "scores that rise by 0.001 (never stops)",
        "a flat score (stops after the patience)",
        "greater and smaller is better",
        "a threshold of 0.01",
    ],
)
@pytest.mark.parametrize("greater", [True, False])
def test_early_stopping_is_absolute(tmp_path: Any, greater: bool) -> None:
    from tiny_training import toy_dataset
    from transformers import EarlyStoppingCallback

    sign = 1 if greater else -1
    rising = [sign * (0.5 + 0.001 * step) for step in range(16)]
    flat = [sign * 0.5] * 16

    def run(folder: str, scores: list[float], threshold: float) -> int:
        done = trainer(
            tmp_path / folder,
            [EarlyStoppingCallback(early_stopping_patience=2, early_stopping_threshold=threshold)],
            rows=32,
            eval_dataset=toy_dataset(4),
            compute_metrics=_scripted(scores),
            eval_strategy="steps",
            eval_steps=1,
            save_strategy="steps",
            save_steps=1,
            load_best_model_at_end=True,
            metric_for_best_model="score",
            greater_is_better=greater,
        )
        done.train()
        return done.state.global_step

    assert run("rising", rising, 0.0) == 16  # tiny gains count: never stops
    assert run("flat", flat, 0.0) == 3  # the first, then two without improvement
    assert run("threshold", rising, 0.01) == 3  # gains below the threshold do not count
