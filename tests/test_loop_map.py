"""Lesson 05's loop map (its exported code) and helpers.plots.loop_map: a real tiny run recorded in calling order,
and its map."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from transformers import Trainer

from helpers.callback_events import EventRecorder
from helpers.loop_calls import LOOP_METHODS, LoopCall, LoopRecorder, record_loop_map
from helpers.plots.loop_map import plot_loop_map


@pytest.fixture(scope="module")
def recorded() -> tuple[LoopRecorder, EventRecorder]:
    events = EventRecorder()
    return record_loop_map(callbacks=[events], name="test_loop_map"), events


def test_setup_comes_before_the_first_step(recorded: tuple[LoopRecorder, EventRecorder]) -> None:
    loop, _ = recorded
    order = ["get_train_dataloader", "create_optimizer", "create_scheduler", "on_train_begin", "on_step_begin"]
    assert [loop.first(name) for name in order] == sorted(loop.first(name) for name in order)


def test_compute_loss_runs_inside_training_step_and_prediction_step(
    recorded: tuple[LoopRecorder, EventRecorder],
) -> None:
    loop, _ = recorded
    assert loop.inside("training_step") == ["compute_loss"]
    assert loop.inside("prediction_step") == ["compute_loss"]
    # two accumulated batches per optimizer step: on_substep_end between them, the optimizer events after
    names = loop.names()
    step = names[names.index("on_step_begin") : names.index("on_step_end") + 1]
    assert step == [
        "on_step_begin",
        "training_step",
        "compute_loss",
        "on_substep_end",
        "training_step",
        "compute_loss",
        "on_pre_optimizer_step",
        "on_optimizer_step",
        "on_step_end",
    ]
    assert names.count("training_step") == 4


def test_log_evaluate_and_save_wrap_their_events(recorded: tuple[LoopRecorder, EventRecorder]) -> None:
    loop, _ = recorded
    assert loop.inside("log") == ["on_log"]
    inside_evaluate = loop.inside("evaluate")
    assert inside_evaluate[0] == "get_eval_dataloader" and inside_evaluate[-1] == "on_evaluate"
    assert "on_prediction_step" in inside_evaluate and "on_log" in inside_evaluate
    assert loop.inside("_save_checkpoint") == ["save_model"]
    assert loop.names()[loop.calls[loop.first("_save_checkpoint")].end + 1] == "on_save"
    assert loop.inside("predict")[-1] == "on_predict"


def test_events_match_an_event_recorder_in_the_same_run(recorded: tuple[LoopRecorder, EventRecorder]) -> None:
    loop, events = recorded
    assert [call.name for call in loop.calls if call.kind == "event"] == events.events()
    assert loop.calls[loop.first("train")].end == loop.first("on_train_end")
    for call in loop.calls:
        assert call.index <= call.end and (call.kind == "method" or call.end == call.index)
        assert call.kind == "method" or call.name.startswith("on_")


def test_recorder_refuses_unknown_methods_and_classes() -> None:
    with pytest.raises(ValueError, match="no method"):
        LoopRecorder(methods=("compute_loss", "compute_lose"))
    with pytest.raises(TypeError, match="subclass"):
        LoopRecorder().trainer_class(base=dict)
    assert issubclass(LoopRecorder().trainer_class(), Trainer)
    assert set(LOOP_METHODS) >= {"compute_loss", "training_step", "prediction_step", "evaluate", "log"}
    with pytest.raises(KeyError, match="not called"):
        LoopRecorder().first("compute_loss")


def test_plot_draws_one_label_per_call(recorded: tuple[LoopRecorder, EventRecorder]) -> None:
    loop, _ = recorded
    figure = plot_loop_map(loop.calls)
    assert isinstance(figure, Figure)
    ax = figure.axes[0]
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
    labels = [text.get_text() for text in ax.texts if not text.get_text().startswith("global_step")]
    assert len(labels) == len(loop.calls)
    assert "compute_loss()" in labels and "on_substep_end" in labels
    assert sum(text.get_text().startswith("global_step") for text in ax.texts) == 2
    plt.close(figure)


def test_plot_explains_bad_input() -> None:
    with pytest.raises(ValueError, match="no calls"):
        plot_loop_map([])
    with pytest.raises(ValueError, match="LoopCall"):
        plot_loop_map([object()])
    with pytest.raises(ValueError, match="kind"):
        plot_loop_map([LoopCall(0, "hook", "x", 0, 0, 0)])
