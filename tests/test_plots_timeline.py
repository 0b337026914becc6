"""helpers.plots.timeline: events spread in firing order inside their step, and the plot is labelled."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from helpers.callback_events import EventRecord
from helpers.plots.timeline import plot_event_timeline, timeline_points


def _records() -> list[EventRecord]:
    events = [("on_train_begin", 0), ("on_step_begin", 0), ("on_step_end", 1), ("on_log", 1), ("on_train_end", 1)]
    return [EventRecord(index, event, step, None, ()) for index, (event, step) in enumerate(events)]


def test_points_spread_in_firing_order() -> None:
    points = timeline_points(_records())
    assert [x for x, _ in points] == pytest.approx([1 / 3, 2 / 3, 1.25, 1.5, 1.75])
    assert [event for _, event in points][0] == "on_train_begin"


def test_plot_has_one_row_per_event_and_keeps_empty_rows() -> None:
    order = ["on_train_begin", "on_step_begin", "on_step_end", "on_log", "on_train_end", "on_push_begin"]
    figure = plot_event_timeline(_records(), event_order=order)
    assert isinstance(figure, Figure)
    ax = figure.axes[0]
    assert ax.get_title() and ax.get_xlabel().startswith("optimizer step") and ax.get_ylabel() == "event"
    assert [label.get_text() for label in ax.get_yticklabels()] == list(reversed(order))
    assert len(ax.collections[0].get_offsets()) == 5
    plt.close(figure)


def test_bad_input_is_explained() -> None:
    with pytest.raises(ValueError, match="no records"):
        timeline_points([])
    with pytest.raises(ValueError, match="event_order lacks"):
        plot_event_timeline(_records(), event_order=["on_log"])
    with pytest.raises(ValueError, match="needs .event"):
        timeline_points([object()])
