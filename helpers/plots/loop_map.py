"""The map of the training loop: recorded Trainer methods and callback events, one row per call, top first.

Each call of a recorded method is a bar from the row where it started to the row of the last call it made,
indented by how deeply it was nested, so everything a method contains sits beside its bar. Each callback
event is a marker in the right-hand column, on the row where it fired. A thin line marks each optimizer step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from helpers.plots.base import finish, new_axes

METHOD_INDENT = 0.45  # x distance between nesting levels of methods
EVENT_COLUMN = 3.4  # x of the callback-event column


def plot_loop_map(
    calls: Sequence[Any],
    title: str = "The training loop, recorded: where each override and callback runs",
    ax: Any = None,
) -> Any:
    """Draw recorded calls (``LoopRecorder.calls`` of :mod:`helpers.loop_calls`, lesson 05) as a map of the loop.

    Args:
        calls: the calls in order, each with ``index``, ``kind`` (``"method"`` or ``"event"``), ``name``,
            ``depth``, ``global_step`` and ``end``.
        title: the plot title.
        ax: draw into these axes instead of a new figure (sized to the number of calls).

    Returns:
        The matplotlib Figure.

    Raises:
        ValueError: no calls, or a call without the fields above.
    """
    if not calls:
        raise ValueError("no calls to draw: pass record_loop_map().calls (helpers.loop_calls).")
    for call in calls:
        if not all(hasattr(call, name) for name in ("index", "kind", "name", "depth", "global_step", "end")):
            raise ValueError(f"each call needs index, kind, name, depth, global_step, end (a LoopCall), got {call!r}.")
        if call.kind not in ("method", "event"):
            raise ValueError(f"a call's kind is 'method' or 'event', got {call.kind!r}.")
    rows = len(calls)
    ax = new_axes(
        title,
        "nesting: a method's bar spans the calls it makes  |  right: callback events",
        "call order in one run (first at the top)",
        ax=ax,
        figsize=(7.6, 1.2 + 0.19 * rows),
    )
    colors = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b")
    method_label, event_label = "Trainer method (bar: until it returns)", "callback event"
    for call in calls:
        if call.kind == "method":
            x = call.depth * METHOD_INDENT
            ax.plot([x, x], [call.index - 0.3, call.end + 0.3], color=colors[call.depth % 4], lw=4, label=method_label)
            ax.text(x + 0.08, call.index, f"{call.name}()", va="center", fontsize=8, color=colors[call.depth % 4])
            method_label = None
        else:
            ax.plot([EVENT_COLUMN], [call.index], marker="D", ms=4, color="#ff7f0e", ls="none", label=event_label)
            ax.text(EVENT_COLUMN + 0.1, call.index, call.name, va="center", fontsize=8, color="#a04000")
            event_label = None
    for before, after in zip(calls, calls[1:]):
        if after.global_step != before.global_step:
            ax.axhline(after.index - 0.5, color="grey", lw=0.6, ls="--")
            ax.text(5.35, after.index - 0.5, f"global_step {after.global_step}", fontsize=7, color="grey", va="bottom")
    ax.set_xlim(-0.2, 6.2)
    ax.set_ylim(rows + 1.5, -0.8)  # two empty rows at the bottom for the legend
    ax.set_xticks([0, EVENT_COLUMN])
    ax.set_xticklabels(["Trainer methods", "callback events"])
    ax.grid(False)
    figure = finish(ax)
    ax.legend(loc="lower left", fontsize=8, ncol=2)
    return figure
