"""The recorders of lesson 05 and the probe of lesson 06 (their exported code): they see what a real (tiny)
Trainer run does, and FlagProbe acts exactly once."""

from __future__ import annotations

import pytest
import torch
from tiny_training import TinyModel, toy_dataset
from transformers import Trainer, TrainerCallback, TrainerControl, TrainingArguments

from helpers.callback_events import (
    EventRecorder,
    LogRecorder,
    StateRecorder,
    callback_event_names,
    is_trainer_callback,
    unknown_event_methods,
)
from helpers.control_matrix import CONTROL_FLAGS, FlagProbe, flag_effect, measure_control_matrix, run_actions
from helpers.lessons.lesson_03 import AppliedLRRecorder


def _train(tmp_path, callbacks: list[TrainerCallback], **overrides) -> Trainer:
    settings = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=2,
        gradient_accumulation_steps=2,
        num_train_epochs=2,
        logging_steps=1,
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    settings.update(overrides)
    torch.manual_seed(0)
    trainer = Trainer(
        model=TinyModel(),
        args=TrainingArguments(**settings),
        train_dataset=toy_dataset(),
        eval_dataset=toy_dataset(4),
        callbacks=callbacks,
    )
    trainer.train()
    return trainer


def test_event_names_come_from_the_class() -> None:
    names = callback_event_names()
    assert names[0] == "on_init_end" and "on_substep_end" in names and len(names) == len(set(names))


def test_event_recorder_counts_order_and_kwargs(tmp_path) -> None:
    recorder = EventRecorder()
    _train(tmp_path, [recorder])
    counts = recorder.counts()
    assert counts["on_step_end"] == 4 and counts["on_substep_end"] == 4 and counts["on_epoch_begin"] == 2
    assert counts["on_evaluate"] == 2 and counts["on_push_begin"] == 0
    assert recorder.events()[:3] == ["on_init_end", "on_train_begin", "on_epoch_begin"]
    init, begin = recorder.of("on_init_end")[0], recorder.of("on_train_begin")[0]
    assert "optimizer" in init.kwargs and "optimizer" not in init.given and "optimizer" in begin.given
    assert "metrics" in recorder.of("on_evaluate")[0].given
    assert "should_log" in recorder.of("on_step_end")[0].flags  # DefaultFlowCallback raised it before us
    with pytest.raises(ValueError, match="not a TrainerCallback event"):
        recorder.of("on_banana")


def test_log_state_and_lr_recorders(tmp_path) -> None:
    logs, state, lrs = LogRecorder(), StateRecorder(), AppliedLRRecorder()
    trainer = _train(tmp_path, [logs, state, lrs], learning_rate=0.1)
    assert len(logs.with_key("loss")) == 4 and len(logs.with_key("eval_loss")) == 2
    assert state.series("global_step") == [1, 2, 3, 4] and state.series("max_steps") == [4] * 4
    assert state.events == ["on_step_end"] * 4
    assert state.series("log_history")[-1] <= len(trainer.state.log_history)
    assert lrs.steps == [0, 1, 2, 3] and lrs.lrs[0] == pytest.approx(0.1)
    with pytest.raises(KeyError, match="not recorded"):
        state.series("banana")
    with pytest.raises(ValueError, match="not a TrainerCallback event"):
        StateRecorder(event="on_banana")
    with pytest.raises(ValueError, match="at least one"):
        StateRecorder(event=())


def test_state_recorder_watches_several_events(tmp_path) -> None:
    state = StateRecorder(event=("on_init_end", "on_train_begin", "on_step_end"))
    _train(tmp_path, [state], eval_strategy="no")
    assert state.events == ["on_init_end", "on_train_begin"] + ["on_step_end"] * 4
    assert state.series("max_steps", event="on_init_end") == [0]
    assert state.series("max_steps", event="on_train_begin") == [4]
    assert state.series("global_step", event="on_step_end") == [1, 2, 3, 4]
    assert state.series("global_step") == [0, 0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="not watched"):
        state.series("global_step", event="on_log")


def test_flag_probe_and_effects(tmp_path) -> None:
    base_recorder = EventRecorder()
    baseline = _train(tmp_path / "a", [base_recorder], eval_strategy="no", logging_strategy="no")
    base = run_actions(baseline.state.log_history, base_recorder)
    assert base == {"log": (), "evaluate": (), "save": (), "last_step": 4, "epoch_steps": (2, 2)}
    probe, recorder = FlagProbe("on_step_begin", "should_training_stop", at_step=1), EventRecorder()
    probed = _train(tmp_path / "b", [probe, recorder], eval_strategy="no", logging_strategy="no")
    assert probe.fired_at == 1
    assert flag_effect(base, run_actions(probed.state.log_history, recorder)) == "steps per epoch 1 (not 2+2)"
    assert flag_effect(base, base) == "no effect"
    probe.reset()
    assert probe.fired_at is None
    with pytest.raises(ValueError, match="flag must be one of"):
        FlagProbe("on_step_end", "should_dance")
    assert set(CONTROL_FLAGS) == set(vars(TrainerControl()))


def test_measure_control_matrix_runs_one_probe_per_cell_and_removes_it(tmp_path) -> None:
    recorder = EventRecorder()
    trainer = _train(tmp_path, [recorder], eval_strategy="no", logging_strategy="no")
    baseline = run_actions(trainer.state.log_history, recorder)
    events = ["on_step_end", "on_train_begin"]
    cells, fired_at = measure_control_matrix(trainer, recorder, baseline, events, at_step={"on_train_begin": 0})
    assert set(cells) == {(event, flag) for event in events for flag in CONTROL_FLAGS}
    assert fired_at == {"on_step_end": 1, "on_train_begin": 0}
    # raised after DefaultFlowCallback at the end of step 1: each action happens there
    assert [cells["on_step_end", flag] for flag in ("should_log", "should_evaluate", "should_save")] == [
        "+log@1",
        "+evaluate@1",
        "+save@1",
    ]
    # raised at on_train_begin: lowered at the next on_step_begin before anything reads it
    assert all(
        cells["on_train_begin", flag] == "no effect" for flag in ("should_log", "should_evaluate", "should_save")
    )
    assert cells["on_step_end", "should_training_stop"] == "steps per epoch 1 (not 2+2)"
    assert not any(isinstance(callback, FlagProbe) for callback in trainer.callback_handler.callbacks)


def test_state_recorder_refuses_unknown_fields_and_events() -> None:
    with pytest.raises(ValueError, match="TrainerState has no"):
        StateRecorder(fields=("global_step", "banana"))
    with pytest.raises(ValueError, match="not a TrainerCallback event"):
        StateRecorder(event=("on_step_end", "on_banana"))


def test_run_actions_needs_a_run() -> None:
    with pytest.raises(ValueError, match="no on_epoch_end"):
        run_actions([], EventRecorder())


class _Misspelled(TrainerCallback):
    """One real event and two misspelled ones; each counts its calls."""

    def __init__(self) -> None:
        self.calls = {"on_epoch_end": 0, "on_epoch_ended": 0, "on_step_ends": 0}

    def on_epoch_end(self, args, state, control, **kwargs) -> None:
        self.calls["on_epoch_end"] += 1

    def on_epoch_ended(self, args, state, control, **kwargs) -> None:
        self.calls["on_epoch_ended"] += 1

    def on_step_ends(self, args, state, control, **kwargs) -> None:
        self.calls["on_step_ends"] += 1


@pytest.mark.rule(
    lesson="05",
    section="Recap",
    text="A misspelled `on_*` method never fires and raises nothing; `unknown_event_methods` finds it.",
    covers=["two misspellings beside a real event", "2 epochs", "the class and an instance"],
)
def test_a_misspelled_event_never_fires_and_the_helper_names_it(tmp_path) -> None:
    callback = _Misspelled()
    _train(tmp_path, [callback], eval_strategy="no")
    assert callback.calls == {"on_epoch_end": 2, "on_epoch_ended": 0, "on_step_ends": 0}
    expected = {"on_epoch_ended": "on_epoch_end", "on_step_ends": "on_step_end"}
    assert unknown_event_methods(_Misspelled) == expected and unknown_event_methods(callback) == expected


def test_is_trainer_callback_takes_a_class_or_an_instance() -> None:
    assert is_trainer_callback(EventRecorder) and is_trainer_callback(EventRecorder())
    assert not any(is_trainer_callback(other) for other in (object, object(), None, "on_evaluate", TrainerControl))


def test_unknown_event_methods_edge_cases() -> None:
    assert unknown_event_methods(EventRecorder()) == {} and unknown_event_methods(TrainerCallback) == {}
    probe = FlagProbe("on_step_end", "should_log")  # sets its event method on the instance
    assert unknown_event_methods(probe) == {}

    class Odd(TrainerCallback):
        on_gpu = True  # not a method: ignored

        def on_gpu_ready(self, args, state, control, **kwargs) -> None:
            pass

    odd = Odd()
    odd.on_trian_begin = lambda args, state, control, **kwargs: None  # set on the instance only
    assert unknown_event_methods(Odd) == {"on_gpu_ready": None}
    assert unknown_event_methods(odd) == {"on_gpu_ready": None, "on_trian_begin": "on_train_begin"}
    assert unknown_event_methods(Odd, cutoff=0.5)["on_gpu_ready"] in callback_event_names()


def test_unknown_event_methods_rejects_what_is_not_a_callback() -> None:
    class NotACallback:
        def on_epoch_end(self, args, state, control, **kwargs) -> None:
            pass

    for bad in (NotACallback, NotACallback(), "on_epoch_end"):
        with pytest.raises(TypeError, match="inherit from transformers.TrainerCallback"):
            unknown_event_methods(bad)
