"""Recording callbacks that several lessons share. They only *read* the training run.

* :class:`EventRecorder` records every event the installed ``TrainerCallback`` defines (the list is taken
  from the class, so a new event in a future release is recorded too), with the step, epoch and the
  names of the keyword arguments the Trainer passed.
* :class:`AppliedLRRecorder` records the learning rate the optimizer really used at each optimizer step.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

from transformers import TrainerCallback


def callback_event_names() -> list[str]:
    """Every event method of the installed ``TrainerCallback`` (``on_...``), in source order."""
    methods = inspect.getmembers(TrainerCallback, predicate=inspect.isfunction)
    names = [name for name, _ in methods if name.startswith("on_")]
    return sorted(names, key=lambda name: inspect.getsourcelines(getattr(TrainerCallback, name))[1])


@dataclass(frozen=True)
class EventRecord:
    """One event as the Trainer fired it."""

    index: int
    event: str
    global_step: int
    epoch: float | None
    kwargs: tuple[str, ...]


class EventRecorder(TrainerCallback):
    """Records each event with ``state.global_step``, ``state.epoch`` and the kwarg names it received.

    ``recorder.records`` is the list of :class:`EventRecord`; ``recorder.counts()`` counts them per event.
    """

    def __init__(self) -> None:
        self.records: list[EventRecord] = []

    def _record(self, event: str, state: Any, kwargs: dict[str, Any]) -> None:
        self.records.append(EventRecord(len(self.records), event, int(state.global_step), state.epoch,
                                        tuple(sorted(kwargs))))

    def counts(self) -> dict[str, int]:
        """Number of times each event fired (every defined event appears, with 0 if it never fired)."""
        counts = {name: 0 for name in callback_event_names()}
        for record in self.records:
            counts[record.event] = counts.get(record.event, 0) + 1
        return counts

    def events(self) -> list[str]:
        """The event names in firing order."""
        return [record.event for record in self.records]


def _make_recording_method(event: str) -> Any:
    def method(self: EventRecorder, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._record(event, state, kwargs)

    method.__name__ = event
    method.__doc__ = f"Record ``{event}``."
    return method


for _event in callback_event_names():
    setattr(EventRecorder, _event, _make_recording_method(_event))


@dataclass
class AppliedLRRecorder(TrainerCallback):
    """The learning rate of each optimizer parameter group, read right after ``optimizer.step()``.

    ``on_optimizer_step`` fires after the optimizer has stepped and before the scheduler steps, so the
    value read there is the one the update just used. ``steps[i]`` is the 0-based optimizer step and
    ``lrs[i]`` the learning rate of parameter group ``group`` at that step.
    """

    group: int = 0
    steps: list[int] = field(default_factory=list)
    lrs: list[float] = field(default_factory=list)

    def on_optimizer_step(self, args: Any, state: Any, control: Any, optimizer: Any = None, **kwargs: Any) -> None:
        if optimizer is None:
            raise RuntimeError("on_optimizer_step received no optimizer; this transformers version changed the event.")
        self.steps.append(int(state.global_step))  # global_step is incremented after this event
        self.lrs.append(float(optimizer.param_groups[self.group]["lr"]))
