"""Instruments that record what callback events a Trainer run fires and what they receive (lesson 05).

- :func:`callback_event_names`: every event of the installed ``TrainerCallback``, in source order.
- :class:`EventRecorder`: one :class:`EventRecord` per event firing (step, kwargs, flags that were up).
- :class:`StateRecorder`: snapshots of chosen ``TrainerState`` fields at chosen events.
- :class:`LogRecorder`: a copy of every ``logs`` dict that reached ``on_log``.
- :func:`event_kwargs_table`: per event, how often it fired and which keyword arguments held a value.
- :func:`unknown_event_methods`: the ``on_*`` methods of a callback that no event calls (misspellings).

Lesson 05 and later lessons import them from here.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
from collections.abc import Iterable
from typing import Any

from transformers import TrainerCallback, TrainerState

# The six objects the CallbackHandler passes to every event (some still None early in a run).
STANDARD_KWARGS = ("model", "processing_class", "optimizer", "lr_scheduler", "train_dataloader", "eval_dataloader")


def callback_event_names() -> list[str]:
    """Every event method of the installed TrainerCallback (on_...), in source order."""
    methods = inspect.getmembers(TrainerCallback, predicate=inspect.isfunction)
    names = [name for name, _ in methods if name.startswith("on_")]

    def line(name: str) -> int:
        return inspect.getsourcelines(getattr(TrainerCallback, name))[1]

    return sorted(names, key=line)


def check_event(event: str) -> None:
    """Raise a ValueError that lists the real events when `event` is not one."""
    if event not in callback_event_names():
        raise ValueError(
            f"{event!r} is not a TrainerCallback event; the installed version has {callback_event_names()}."
        )


@dataclasses.dataclass(frozen=True)
class EventRecord:
    """One event as it reached the recorder: `kwargs` are the names passed, `given`
    those whose value was not None, `flags` the TrainerControl flags that were up."""

    index: int
    event: str
    global_step: int
    epoch: float | None
    kwargs: tuple[str, ...]
    given: tuple[str, ...] = ()
    flags: frozenset[str] = frozenset()


class EventRecorder(TrainerCallback):
    """Records every event of the installed TrainerCallback, in firing order."""

    def __init__(self) -> None:
        self.records: list[EventRecord] = []
        for event in callback_event_names():  # one recording method per event, on the instance
            setattr(self, event, functools.partial(self._record, event))

    def _record(self, event: str, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        given = tuple(sorted(k for k, v in kwargs.items() if v is not None))
        flags = frozenset(k for k, up in vars(control).items() if up is True)
        step, names = int(state.global_step), tuple(sorted(kwargs))
        record = EventRecord(len(self.records), event, step, state.epoch, names, given, flags)
        self.records.append(record)

    def counts(self) -> dict[str, int]:
        """How often each event fired (every event of the class; 0: never)."""
        counts = dict.fromkeys(callback_event_names(), 0)
        for record in self.records:
            counts[record.event] += 1
        return counts

    def events(self) -> list[str]:
        """The event names in firing order."""
        return [record.event for record in self.records]

    def of(self, event: str) -> list[EventRecord]:
        """The records of one event, in firing order."""
        check_event(event)
        return [record for record in self.records if record.event == event]


STATE_FIELDS: tuple[str, ...] = ("global_step", "epoch", "max_steps", "num_input_tokens_seen")
STATE_FIELDS += ("total_flos", "best_metric", "log_history")


def watched_events(event: str | Iterable[str]) -> tuple[str, ...]:
    """`event` (a name or a tuple of names) as a tuple of checked event names."""
    events = (event,) if isinstance(event, str) else tuple(event)
    if not events:
        raise ValueError("event must name at least one event, such as 'on_step_end'.")
    for name in events:
        check_event(name)
    return events


def check_state_fields(fields: Iterable[str]) -> None:
    """Raise a ValueError naming the fields that TrainerState does not have."""
    known = [field.name for field in dataclasses.fields(TrainerState)]
    if set(fields) - set(known):
        raise ValueError(f"TrainerState has no {set(fields) - set(known)}: {known}")


@dataclasses.dataclass
class StateRecorder(TrainerCallback):
    """Snapshots of TrainerState `fields` at every firing of `event` (or of a tuple
    of events): `snapshots[i]` maps each field to its value at `events[i]`."""

    fields: tuple[str, ...] = STATE_FIELDS
    event: str | tuple[str, ...] = "on_step_end"
    snapshots: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    events: list[str] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        check_state_fields(self.fields)
        self._watched = watched_events(self.event)
        for event in self._watched:
            setattr(self, event, functools.partial(self._snapshot, event))

    def _snapshot(self, event: str, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        values = {name: getattr(state, name) for name in self.fields}
        lists = {k: len(v) for k, v in values.items() if isinstance(v, list | dict)}
        self.snapshots.append({**values, **lists})  # lists by their length
        self.events.append(event)

    def series(self, name: str, event: str | None = None) -> list[Any]:
        """The values of one field over the snapshots (or those taken at `event`)."""
        if name not in self.fields:
            raise KeyError(f"{name!r} was not recorded; the recorder has {self.fields}.")
        if event is not None and event not in self._watched:
            raise ValueError(f"{event!r} is not watched; it watches {self._watched}.")
        pairs = zip(self.snapshots, self.events, strict=True)
        return [snapshot[name] for snapshot, seen in pairs if event in (None, seen)]


@dataclasses.dataclass
class LogRecorder(TrainerCallback):
    """A copy of each logs dict that reached on_log, as (global_step, logs)."""

    entries: list[tuple[int, dict[str, Any]]] = dataclasses.field(default_factory=list)

    def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if logs is None:
            raise RuntimeError("on_log received no logs; this transformers version changed.")
        self.entries.append((int(state.global_step), dict(logs)))

    def with_key(self, key: str) -> list[tuple[int, dict[str, Any]]]:
        """The entries holding `key`: "loss" (training) or "eval_loss" (evaluation)."""
        return [(step, logs) for step, logs in self.entries if key in logs]


def event_kwargs_table(recorder: EventRecorder) -> list[dict[str, Any]]:
    """One row per event of the class: how often it fired, the global_step of its first and last firing ("" when
    it never fired), the keyword arguments that held a value, and which of the six standard ones were None."""
    if not isinstance(recorder, EventRecorder):
        raise TypeError(f"pass the EventRecorder that watched a run, not {type(recorder).__name__}.")
    if not recorder.records:
        raise ValueError("the recorder saw no event: pass it in Trainer(callbacks=[...]) and train first.")
    rows = []
    for event in callback_event_names():
        fired = recorder.of(event)
        given = sorted(set().union(*(record.given for record in fired))) if fired else []
        rows.append(
            {
                "event": event,
                "fired": len(fired),
                "first step": fired[0].global_step if fired else "",
                "last step": fired[-1].global_step if fired else "",
                "kwargs with a value": ", ".join(given),
                "still None": ", ".join(name for name in STANDARD_KWARGS if name not in given),
            }
        )
    return rows


def is_trainer_callback(candidate: Any) -> bool:
    """True for a TrainerCallback subclass or an instance of one."""
    if isinstance(candidate, type):
        return issubclass(candidate, TrainerCallback)
    return isinstance(candidate, TrainerCallback)


def unknown_event_methods(callback: Any, cutoff: float = 0.7) -> dict[str, str | None]:
    """{method: closest event or None} for the on_* methods of `callback` (a class or
    an instance) that no event calls: misspellings. Empty when all are events.

    `cutoff` is how similar (difflib's ratio, 0 to 1) a suggestion must be.
    """
    if not is_trainer_callback(callback):
        shown = getattr(callback, "__name__", type(callback).__name__)
        raise TypeError(f"{shown} is not a TrainerCallback: inherit from transformers.TrainerCallback and check again.")
    events = callback_event_names()
    unknown: dict[str, str | None] = {}
    for name in sorted(dir(callback)):
        if name.startswith("on_") and name not in events:
            if callable(getattr(callback, name)):
                close = difflib.get_close_matches(name, events, n=1, cutoff=cutoff)
                unknown[name] = close[0] if close else None
    return unknown
