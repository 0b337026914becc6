"""Recording callbacks that several lessons share. Apart from :class:`FlagProbe`, they only *read* the run.

* :class:`EventRecorder` records every event the installed ``TrainerCallback`` defines (the list is taken
  from the class, so a new event in a future release is recorded too), with the step, epoch, the names of
  the keyword arguments the Trainer passed, which of them were not ``None``, and the ``TrainerControl``
  flags that were up when the event reached it.
* :class:`AppliedLRRecorder` records the learning rate the optimizer really used at each optimizer step.
* :class:`LogRecorder` keeps a copy of every ``logs`` dict that reached ``on_log``.
* :class:`StateRecorder` snapshots chosen ``TrainerState`` fields at one or more events.
* :class:`FlagProbe` sets one ``TrainerControl`` flag at one event, once, so that a lesson can measure what
  the flag does there; :func:`run_actions` and :func:`flag_effect` turn two runs into a verdict.
* :func:`unknown_event_methods` lists the ``on_*`` methods of a callback that no event calls (misspellings),
  with the closest real event name.
"""

from __future__ import annotations

import difflib
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any

from transformers import TrainerCallback

CONTROL_FLAGS: tuple[str, ...] = (
    "should_training_stop",
    "should_epoch_stop",
    "should_save",
    "should_evaluate",
    "should_log",
)


def callback_event_names() -> list[str]:
    """Every event method of the installed ``TrainerCallback`` (``on_...``), in source order."""
    methods = inspect.getmembers(TrainerCallback, predicate=inspect.isfunction)
    names = [name for name, _ in methods if name.startswith("on_")]
    return sorted(names, key=lambda name: inspect.getsourcelines(getattr(TrainerCallback, name))[1])


def is_trainer_callback(candidate: Any) -> bool:
    """True for a ``TrainerCallback`` subclass or an instance of one (the two forms a Trainer accepts)."""
    is_class = isinstance(candidate, type)
    return issubclass(candidate, TrainerCallback) if is_class else isinstance(candidate, TrainerCallback)


def unknown_event_methods(callback: Any, cutoff: float = 0.7) -> dict[str, str | None]:
    """The ``on_*`` methods of a callback that are not events of the installed ``TrainerCallback``.

    The Trainer calls a callback's events by name, so a method whose name is misspelled (``on_epoch_ended``,
    ``on_step_ends``) is simply never called, and nothing warns. This finds such methods and suggests, for
    each, the closest real event name (:func:`difflib.get_close_matches`).

    Args:
        callback: a ``TrainerCallback`` subclass or an instance of one (methods set on the instance count too).
        cutoff: how similar (0 to 1, difflib's ratio) an event name must be to be suggested.

    Returns:
        ``{method name: closest event name, or None when none is similar enough}``, sorted by method name;
        empty when every ``on_*`` method is an event.

    Raises:
        TypeError: ``callback`` is neither a ``TrainerCallback`` subclass nor an instance of one.
    """
    if not is_trainer_callback(callback):
        shown = callback.__name__ if isinstance(callback, type) else type(callback).__name__
        raise TypeError(f"{shown} is not a TrainerCallback: inherit from transformers.TrainerCallback and check again.")
    events = callback_event_names()
    unknown: dict[str, str | None] = {}
    for name in sorted(dir(callback)):
        if name.startswith("on_") and name not in events and callable(getattr(callback, name)):
            closest = difflib.get_close_matches(name, events, n=1, cutoff=cutoff)
            unknown[name] = closest[0] if closest else None
    return unknown


def _check_event(event: str) -> None:
    if event not in callback_event_names():
        raise ValueError(
            f"{event!r} is not a TrainerCallback event; the installed version has {callback_event_names()}."
        )


def _raised_flags(control: Any) -> frozenset[str]:
    return frozenset(flag for flag in CONTROL_FLAGS if getattr(control, flag, False))


@dataclass(frozen=True)
class EventRecord:
    """One event as the Trainer fired it.

    ``kwargs`` holds the names of every keyword argument passed; ``given`` those whose value was not ``None``;
    ``flags`` the ``TrainerControl`` flags that were ``True`` when the event reached this callback.
    """

    index: int
    event: str
    global_step: int
    epoch: float | None
    kwargs: tuple[str, ...]
    given: tuple[str, ...] = ()
    flags: frozenset[str] = frozenset()


class EventRecorder(TrainerCallback):
    """Records each event with ``state.global_step``, ``state.epoch`` and the kwarg names it received.

    ``recorder.records`` is the list of :class:`EventRecord`; ``recorder.counts()`` counts them per event.
    """

    def __init__(self) -> None:
        self.records: list[EventRecord] = []

    def _record(self, event: str, state: Any, control: Any, kwargs: dict[str, Any]) -> None:
        given = tuple(sorted(name for name, value in kwargs.items() if value is not None))
        self.records.append(
            EventRecord(
                len(self.records),
                event,
                int(state.global_step),
                state.epoch,
                tuple(sorted(kwargs)),
                given,
                _raised_flags(control),
            )
        )

    def counts(self) -> dict[str, int]:
        """Number of times each event fired (every defined event appears, with 0 if it never fired)."""
        counts = {name: 0 for name in callback_event_names()}
        for record in self.records:
            counts[record.event] = counts.get(record.event, 0) + 1
        return counts

    def events(self) -> list[str]:
        """The event names in firing order."""
        return [record.event for record in self.records]

    def of(self, event: str) -> list[EventRecord]:
        """The records of one event, in firing order."""
        _check_event(event)
        return [record for record in self.records if record.event == event]


def _make_recording_method(event: str) -> Any:
    def method(self: EventRecorder, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._record(event, state, control, kwargs)

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


@dataclass
class LogRecorder(TrainerCallback):
    """A copy of every ``logs`` dict that reached ``on_log``, with the ``global_step`` it was logged at.

    It copies the dict on arrival: a callback later in the list (``PrinterCallback`` pops ``total_flos``)
    may change the very dict the Trainer passes around. ``entries[i]`` is ``(global_step, logs)``.
    """

    entries: list[tuple[int, dict[str, Any]]] = field(default_factory=list)

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        if logs is None:
            raise RuntimeError("on_log received no logs; this transformers version changed the event.")
        self.entries.append((int(state.global_step), dict(logs)))

    def with_key(self, key: str) -> list[tuple[int, dict[str, Any]]]:
        """The entries that contain ``key``: ``"loss"`` for training logs, ``"eval_loss"`` for evaluations."""
        return [(step, logs) for step, logs in self.entries if key in logs]


@dataclass
class StateRecorder(TrainerCallback):
    """Snapshots of ``TrainerState`` fields at every firing of ``event`` (``on_step_end`` by default).

    ``event`` may also be a tuple of events, so that one recorder watches several (two recorders of one class
    in a Trainer make it log a warning). ``snapshots[i]`` maps each name in ``fields`` to its value then
    (lists such as ``log_history`` are recorded by length, so the snapshot stays small), and ``events[i]``
    is the event it was taken at.
    """

    fields: tuple[str, ...] = (
        "global_step",
        "epoch",
        "max_steps",
        "num_input_tokens_seen",
        "total_flos",
        "best_metric",
        "log_history",
    )
    event: str | tuple[str, ...] = "on_step_end"
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._watched = (self.event,) if isinstance(self.event, str) else tuple(self.event)
        if not self._watched:
            raise ValueError("event must name at least one TrainerCallback event, such as 'on_step_end'.")
        for event in self._watched:
            _check_event(event)
            setattr(self, event, functools.partial(self._snapshot, event))

    def _snapshot(self, event: str, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        missing = [name for name in self.fields if not hasattr(state, name)]
        if missing:
            raise AttributeError(f"TrainerState has no field(s) {missing}; this version has {sorted(vars(state))}.")
        snapshot = {}
        for name in self.fields:
            value = getattr(state, name)
            snapshot[name] = len(value) if isinstance(value, (list, dict)) else value
        self.snapshots.append(snapshot)
        self.events.append(event)

    def series(self, name: str, event: str | None = None) -> list[Any]:
        """The values of one field over the snapshots, or over those taken at ``event`` only."""
        if name not in self.fields:
            raise KeyError(f"{name!r} was not recorded; the recorder keeps {self.fields}.")
        if event is not None and event not in self._watched:
            raise ValueError(f"{event!r} is not watched by this recorder; it watches {self._watched}.")
        return [snapshot[name] for snapshot, seen in zip(self.snapshots, self.events) if event in (None, seen)]


@dataclass
class FlagProbe(TrainerCallback):
    """Sets ``control.<flag> = True`` once: at the first firing of ``event`` with ``global_step >= at_step``.

    Put it after ``DefaultFlowCallback`` (any callback passed to ``Trainer(callbacks=...)`` is). ``fired_at``
    is the ``global_step`` at which it acted, or ``None`` if the event never fired late enough.
    Call :meth:`reset` before reusing it for another ``train()``.
    """

    event: str
    flag: str
    at_step: int = 1
    fired_at: int | None = None

    def __post_init__(self) -> None:
        _check_event(self.event)
        if self.flag not in CONTROL_FLAGS:
            raise ValueError(f"flag must be one of {CONTROL_FLAGS}, got {self.flag!r}.")
        if not isinstance(self.at_step, int) or self.at_step < 0:
            raise ValueError(f"at_step must be a non-negative int (a global_step), got {self.at_step!r}.")
        setattr(self, self.event, self._maybe_set)

    def reset(self) -> None:
        """Forget that the probe fired, so it acts again in the next run."""
        self.fired_at = None

    def _maybe_set(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.fired_at is None and state.global_step >= self.at_step:
            setattr(control, self.flag, True)
            self.fired_at = int(state.global_step)


def run_actions(log_history: list[dict[str, Any]], recorder: EventRecorder) -> dict[str, Any]:
    """What one training run did, from its ``state.log_history`` and an :class:`EventRecorder`.

    Returns ``{"log": steps with a training log, "evaluate": steps with an evaluation, "save": steps with
    a checkpoint, "last_step": the final global_step, "epoch_steps": optimizer steps made in each epoch}``.
    """
    epoch_ends = [record.global_step for record in recorder.of("on_epoch_end")]
    if not epoch_ends:
        raise ValueError("the recorder saw no on_epoch_end: pass it to the Trainer and call train() first.")
    return {
        "log": tuple(entry["step"] for entry in log_history if "loss" in entry),
        "evaluate": tuple(entry["step"] for entry in log_history if "eval_loss" in entry),
        "save": tuple(record.global_step for record in recorder.of("on_save")),
        "last_step": recorder.records[-1].global_step,
        "epoch_steps": tuple(end - start for start, end in zip([0] + epoch_ends, epoch_ends)),
    }


def flag_effect(baseline: dict[str, Any], probed: dict[str, Any]) -> str:
    """A short verdict on what a probed run did differently from the baseline (both from :func:`run_actions`).

    ``"no effect"``, or ``;``-joined changes such as ``"+log@2"`` (an extra training log at step 2),
    ``"-save@6"`` (a checkpoint the baseline made and this run, still going, did not) or
    ``"steps per epoch 1 (not 4+4)"``.
    """
    changes = []
    for action in ("log", "evaluate", "save"):
        extra = sorted(set(probed[action]) - set(baseline[action]))
        missing = [step for step in sorted(set(baseline[action]) - set(probed[action])) if step <= probed["last_step"]]
        changes += [f"+{action}@{step}" for step in extra] + [f"-{action}@{step}" for step in missing]
    if probed["epoch_steps"] != baseline["epoch_steps"]:

        def shown(counts: tuple[int, ...]) -> str:
            return "+".join(str(count) for count in counts)

        changes.append(f"steps per epoch {shown(probed['epoch_steps'])} (not {shown(baseline['epoch_steps'])})")
    return "; ".join(changes) if changes else "no effect"
