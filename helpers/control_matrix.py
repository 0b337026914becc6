"""The ``TrainerControl`` matrix of lesson 06: what raising one flag at one event does to a run.

- :data:`CONTROL_FLAGS`: the flags of the installed ``TrainerControl``, in field order.
- :func:`run_actions`: the steps at which a finished run logged, evaluated and saved, its last step and its
  steps per epoch (from ``state.log_history`` and lesson 05's ``EventRecorder``).
- :func:`flag_effect`: the difference between two such runs, as a short text (``"+log@2"``, ``"no effect"``).
- :class:`FlagProbe`: a callback that raises one flag, once, at one event.
- :func:`measure_control_matrix`: one ``train()`` per (event, flag), each with its probe.
- :func:`matrix_readings`: the lesson's six readings of the matrix, each true or false on a measured matrix.

Lesson 06 and the tests import them from here; this module imports nothing of the lessons.
"""

from __future__ import annotations

import dataclasses
import gc
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from transformers import TrainerCallback, TrainerControl

from helpers.callback_events import check_event

CONTROL_FLAGS: tuple[str, ...] = tuple(field.name for field in dataclasses.fields(TrainerControl))

ACTIONS = {"should_log": "log", "should_evaluate": "evaluate", "should_save": "save"}


def run_actions(log_history: Sequence[Mapping[str, Any]], recorder: Any) -> dict[str, Any]:
    """What one run did, from its ``state.log_history`` and an ``EventRecorder`` (lesson 05) that saw it.

    Returns ``{"log": steps with a training log, "evaluate": steps with an evaluation, "save": steps of
    on_save, "last_step": the last global_step, "epoch_steps": optimizer steps of each epoch}``.

    Raises:
        ValueError: the recorder saw no ``on_epoch_end`` (it was not among the Trainer's callbacks, or the
            Trainer did not train).
    """
    epoch_ends = [record.global_step for record in recorder.of("on_epoch_end")]
    if not epoch_ends:
        raise ValueError("the recorder saw no on_epoch_end: pass it to the Trainer and train first.")
    return {
        "log": tuple(entry["step"] for entry in log_history if "loss" in entry),
        "evaluate": tuple(entry["step"] for entry in log_history if "eval_loss" in entry),
        "save": tuple(record.global_step for record in recorder.of("on_save")),
        "last_step": recorder.records[-1].global_step,
        "epoch_steps": tuple(end - start for start, end in zip([0, *epoch_ends], epoch_ends)),
    }


def flag_effect(baseline: Mapping[str, Any], probed: Mapping[str, Any]) -> str:
    """What a probed run did differently from the baseline (both from :func:`run_actions`).

    ``"no effect"``, or changes such as ``"+log@2"`` (an extra log at step 2), ``"-save@6"`` (a checkpoint the
    baseline made and this run, still going at that step, did not) or ``"steps per epoch 1 (not 4+4)"``,
    joined by ``"; "``.
    """
    changes = []
    for action in ("log", "evaluate", "save"):
        extra = sorted(set(probed[action]) - set(baseline[action]))
        missing = sorted(set(baseline[action]) - set(probed[action]))
        changes += [f"+{action}@{step}" for step in extra]
        changes += [f"-{action}@{step}" for step in missing if step <= probed["last_step"]]
    if probed["epoch_steps"] != baseline["epoch_steps"]:
        now, before = ("+".join(map(str, run["epoch_steps"])) for run in (probed, baseline))
        changes.append(f"steps per epoch {now} (not {before})")
    return "; ".join(changes) if changes else "no effect"


@dataclass
class FlagProbe(TrainerCallback):
    """Sets ``control.<flag> = True`` once: at the first firing of ``event`` with ``global_step >= at_step``.

    ``fired_at`` is the step it acted at (``None``: not yet); :meth:`reset` makes it act again in the next
    ``train()``. Only ``event`` is overridden on the instance; every other event stays the base class's no-op.

    Raises:
        ValueError: an unknown event (with the nearest names), a flag ``TrainerControl`` does not have, or an
            ``at_step`` that is not an int >= 0.
    """

    event: str
    flag: str
    at_step: int = 1
    fired_at: int | None = None

    def __post_init__(self) -> None:
        check_event(self.event)
        if self.flag not in CONTROL_FLAGS:
            raise ValueError(f"flag must be one of {CONTROL_FLAGS}, got {self.flag!r}.")
        if not isinstance(self.at_step, int) or self.at_step < 0:
            raise ValueError(f"at_step must be a global_step (an int >= 0), got {self.at_step!r}.")
        setattr(self, self.event, self._maybe_set)  # this event, and no other

    def reset(self) -> None:
        """Forget that the probe fired, so that it acts again in the next run."""
        self.fired_at = None

    def _maybe_set(self, args: Any, state: Any, control: TrainerControl, **kwargs: Any) -> None:
        if self.fired_at is None and state.global_step >= self.at_step:
            setattr(control, self.flag, True)
            self.fired_at = int(state.global_step)


def measure_control_matrix(
    trainer: Any,
    recorder: Any,
    baseline: Mapping[str, Any],
    events: Iterable[str],
    at_step: Mapping[str, int] | None = None,
) -> tuple[dict[tuple[str, str], str], dict[str, int | None]]:
    """``{(event, flag): flag_effect text}`` for every event and every flag of :data:`CONTROL_FLAGS`.

    One ``train()`` of ``trainer`` per cell, with a :class:`FlagProbe` at ``at_step.get(event, 1)``, removed
    again afterwards; ``recorder`` is an ``EventRecorder`` among the trainer's callbacks. Also returns
    ``{event: the global_step its probe acted at}``.
    """
    cells: dict[tuple[str, str], str] = {}
    fired_at: dict[str, int | None] = {}
    gc.freeze()  # each train() starts with gc.collect(): skip the objects alive now
    for event in events:
        for flag in CONTROL_FLAGS:
            probe = FlagProbe(event, flag, at_step=(at_step or {}).get(event, 1))
            trainer.add_callback(probe)
            recorder.records.clear()
            trainer.control = TrainerControl()
            try:
                trainer.train()
            finally:
                trainer.remove_callback(probe)
            cells[event, flag] = flag_effect(baseline, run_actions(trainer.state.log_history, recorder))
            fired_at[event] = probe.fired_at
    return cells, fired_at


def matrix_readings(cells: Mapping[tuple[str, str], str]) -> dict[str, bool]:
    """Whether each reading lesson 06 gives of the matrix holds on ``cells``.

    ``cells`` comes from :func:`measure_control_matrix` on lesson 06's baseline run (16 examples, batches of 2,
    accumulation 2, 2 epochs: 8 steps; a log at 1, evaluations at 5 and 8, checkpoints at 3, 6 and 8), with the
    probe at step 2 for the per-step events and at step 0 for ``on_train_begin``.

    Raises:
        KeyError: ``cells`` lacks an event or flag a reading needs (measure every event the lesson lists).
    """
    in_step = ["on_step_begin", "on_substep_end", "on_pre_optimizer_step", "on_optimizer_step", "on_step_end"]
    stop_after = {"on_step_begin": 1, "on_substep_end": 1, "on_pre_optimizer_step": 2}
    stop_after |= {"on_optimizer_step": 2, "on_step_end": 2}
    after_step = [cells["on_log", flag] for flag in ACTIONS]
    after_step += [cells["on_evaluate", flag] for flag in ACTIONS]
    after_step += [cells["on_save", flag] for flag in ACTIONS]
    return {
        "too early, no effect": all(
            cells[event, flag] == "no effect" for event in ("on_train_begin", "on_epoch_begin") for flag in ACTIONS
        ),
        "within the step, it works": all(
            cells[event, flag] == f"+{action}@2" for event in in_step for flag, action in ACTIONS.items()
        ),
        "log, then evaluate, then save": after_step
        == ["no effect", "+evaluate@1", "+save@1", "no effect", "no effect", "+save@5", *["no effect"] * 3],
        "an epoch end checks the flags once more": cells["on_epoch_end", "should_log"] == "+log@4",
        "stopping mid-accumulation drops work": all(
            cells[event, "should_training_stop"] == f"steps per epoch {steps} (not 4+4)"
            and cells[event, "should_epoch_stop"].startswith(f"steps per epoch {steps}+4")
            for event, steps in stop_after.items()
        ),
        "should_epoch_stop at on_epoch_end does nothing": cells["on_epoch_end", "should_epoch_stop"] == "no effect",
    }
