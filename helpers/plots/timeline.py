"""The callback-event timeline: which event fired when, against the optimizer step.

:func:`timeline_points` places each recorded event at ``x = global_step + k / (n + 1)``, where ``k`` is its
position among the ``n`` events that fired while ``global_step`` had that value, so events of one step
spread out in firing order between that step and the next. :func:`plot_event_timeline` draws them, one row
per event name.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from helpers.plots.base import finish, new_axes


def timeline_points(records: Sequence[Any]) -> list[tuple[float, str]]:
    """``(x, event)`` for each record (anything with ``.event`` and ``.global_step``, such as an ``EventRecord``).

    Raises:
        ValueError: no records, or a record without ``event`` / ``global_step``.
    """
    if not records:
        raise ValueError("no records to draw: pass EventRecorder().records after a run.")
    for record in records:
        if not hasattr(record, "event") or not hasattr(record, "global_step"):
            raise ValueError(f"each record needs .event and .global_step (an EventRecord), got {record!r}.")
    per_step: dict[int, int] = {}
    for record in records:
        per_step[record.global_step] = per_step.get(record.global_step, 0) + 1
    seen: dict[int, int] = {}
    points = []
    for record in records:
        position = seen.get(record.global_step, 0) + 1
        seen[record.global_step] = position
        points.append((record.global_step + position / (per_step[record.global_step] + 1), record.event))
    return points


def plot_event_timeline(
    records: Sequence[Any],
    event_order: Sequence[str] | None = None,
    title: str = "Callback events in one training run",
    ax: Any = None,
) -> Any:
    """One marker per fired event: x = optimizer step (spread in firing order), y = event name.

    Args:
        records: the events in firing order (``EventRecorder().records``).
        event_order: the rows from top to bottom (for example ``callback_event_names()``); events that never
            fired keep an empty row, so a missing event is visible. Defaults to the order of first firing.
        title: the plot title.
        ax: draw into these axes instead of a new figure.

    Returns:
        The matplotlib Figure.
    """
    points = timeline_points(records)
    fired = list(dict.fromkeys(event for _, event in points))
    rows = list(event_order) if event_order is not None else fired
    unknown = sorted(set(fired) - set(rows))
    if unknown:
        raise ValueError(f"event_order lacks {unknown}, which fired in this run; add them or leave event_order None.")
    row_of = {event: len(rows) - 1 - index for index, event in enumerate(rows)}
    height = max(3.0, 0.28 * len(rows) + 1.2)
    ax = new_axes(
        title,
        "optimizer step (global_step when the event fired; events of one step in firing order)",
        "event",
        ax=ax,
        figsize=(8.0, height),
    )
    xs = [x for x, _ in points]
    ax.scatter(xs, [row_of[event] for _, event in points], s=18, color="tab:blue", zorder=3)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(list(reversed(rows)), fontsize=8)
    last_step = max(record.global_step for record in records)
    for step in range(last_step + 2):
        ax.axvline(step, color="grey", linewidth=0.6, alpha=0.5, zorder=1)
    ax.set_xlim(-0.1, last_step + 1.1)
    return finish(ax)
