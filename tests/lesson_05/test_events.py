"""Lesson 05's claims that need more runs than the lesson shows: the callbacks share one ``logs`` dict in list
order (the printer pops ``total_flos``; a callback's key reaches only the callbacks after it, never
``log_history``), and the instruments of :mod:`helpers.callback_events` and :mod:`helpers.loop_calls` that the
lesson imports (``event_kwargs_table``)."""

from __future__ import annotations

import pytest
from tiny_training import tiny_trainer, toy_dataset
from transformers import PrinterCallback, Trainer, TrainerCallback

import helpers.callback_events as callback_events
from helpers.callback_events import STANDARD_KWARGS, EventRecorder, LogRecorder, event_kwargs_table


def _trainer(tmp_path, callbacks: list[TrainerCallback], **overrides) -> Trainer:
    return tiny_trainer(tmp_path, callbacks, eval_dataset=toy_dataset(4), **overrides)


class LateLogRecorder(LogRecorder):
    """A LogRecorder under its own name, so that the Trainer does not warn about two of one class."""


def test_the_printer_pops_total_flos_for_the_callbacks_after_it(tmp_path, capsys) -> None:
    early, late = LogRecorder(), LateLogRecorder()
    trainer = _trainer(tmp_path, [early], max_steps=1, logging_strategy="no")  # disable_tqdm: the printer
    assert isinstance(trainer.callback_handler.callbacks[-1], PrinterCallback)
    trainer.add_callback(late)
    names = [type(callback).__name__ for callback in trainer.callback_handler.callbacks]
    assert names == ["DefaultFlowCallback", "LogRecorder", "PrinterCallback", "LateLogRecorder"]
    trainer.train()
    printed = capsys.readouterr().out
    assert "train_runtime" in printed and "total_flos" not in printed
    assert "total_flos" in early.entries[-1][1] and "total_flos" not in late.entries[-1][1]
    assert "total_flos" in trainer.state.log_history[-1]  # stored before any callback ran


class AddsAKey(TrainerCallback):
    def on_log(self, args, state, control, logs=None, **kwargs):
        logs["from_callback"] = 1.0


@pytest.mark.rule(
    lesson="05",
    section="Recap",
    text="Callbacks share one `logs` dict, in list order",
    covers=["a callback before and one after the one that adds a key", "every log of the run"],
)
def test_a_key_added_in_on_log_reaches_only_later_callbacks(tmp_path) -> None:
    before, after = LogRecorder(), LateLogRecorder()
    trainer = _trainer(tmp_path, [before, AddsAKey(), after])
    trainer.train()
    assert after.entries and all("from_callback" in logs for _, logs in after.entries)
    assert not any("from_callback" in logs for _, logs in before.entries)
    assert not any("from_callback" in entry for entry in trainer.state.log_history)


def test_event_kwargs_table_reads_a_recorded_run(tmp_path) -> None:
    recorder = EventRecorder()
    trainer = _trainer(tmp_path, [recorder], eval_strategy="steps", eval_steps=2, max_steps=2)
    trainer.train()
    rows = {row["event"]: row for row in event_kwargs_table(recorder)}
    assert list(rows) == callback_events.callback_event_names()
    assert rows["on_step_end"]["fired"] == 2 and rows["on_step_end"]["last step"] == 2
    assert rows["on_push_begin"]["fired"] == 0 and rows["on_push_begin"]["first step"] == ""
    assert "optimizer" in rows["on_init_end"]["still None"]
    assert "optimizer" in rows["on_train_begin"]["kwargs with a value"]
    assert "metrics" in rows["on_evaluate"]["kwargs with a value"]
    assert set(rows["on_train_begin"]["still None"].split(", ")) <= set(STANDARD_KWARGS)


def test_event_kwargs_table_explains_bad_input() -> None:
    with pytest.raises(TypeError, match="EventRecorder"):
        event_kwargs_table(LogRecorder())
    with pytest.raises(ValueError, match="train first"):
        event_kwargs_table(EventRecorder())
