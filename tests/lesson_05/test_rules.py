"""Lesson 05's rules (callback events), tried beyond the lesson's run: accumulation 1 and 3 with an uneven last
accumulation group, several epochs, a step limit, and checkpoints by steps and by epochs."""

from __future__ import annotations

import math
import os
from typing import Any

import pytest
from rule_training import Events, trainer
from transformers import TrainerCallback

# (rows, batch, accumulation, epochs): 7 micro-batches an epoch as 3 + 3 + 1 at accumulation 3 (uneven last group)
SPLITS = [(16, 2, 1, 1), (14, 2, 3, 2), (15, 4, 2, 1)]


@pytest.mark.rule(
    lesson="05",
    section="Recap",
    text="Step events fire once per optimizer step, `on_substep_end` between accumulated batches",
    covers=["accumulation 1", "accumulation 3 with an uneven last group (3 + 3 + 1)", "2 epochs", "uneven last batch"],
)
@pytest.mark.rule(
    lesson="05",
    section="Recap",
    text="`state.max_steps` is known from `on_train_begin`",
    covers=["epochs with an uneven last accumulation group", "accumulation 3", "uneven last batch"],
)
@pytest.mark.parametrize(("rows", "batch", "accumulation", "epochs"), SPLITS)
def test_step_events_once_per_update_substeps_between(
    tmp_path: Any, rows: int, batch: int, accumulation: int, epochs: int
) -> None:
    events = Events()
    run = trainer(
        tmp_path,
        [events],
        rows=rows,
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        num_train_epochs=epochs,
    )
    run.train()
    per_epoch = math.ceil(rows / batch)
    micro_batches = per_epoch * epochs
    updates = run.state.global_step
    assert updates == math.ceil(per_epoch / accumulation) * epochs  # the uneven last group still steps
    assert events.count("on_step_begin") == events.count("on_step_end") == events.count("on_optimizer_step") == updates
    assert events.count("on_substep_end") == micro_batches - updates
    assert events.max_steps_at_begin == updates


class _SavedFolder(TrainerCallback):
    def __init__(self) -> None:
        self.found: list[set[str]] = []

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
        self.found.append(set(os.listdir(folder)) if os.path.isdir(folder) else set())


@pytest.mark.rule(
    lesson="05",
    section="Recap",
    text="`on_save` after the checkpoint is written",
    covers=["save by steps", "save by epochs", "save_total_limit=1 (rotation)", "accumulation 2"],
)
@pytest.mark.parametrize(
    "how", [{"save_strategy": "steps", "save_steps": 2}, {"save_strategy": "epoch", "save_total_limit": 1}]
)
def test_on_save_sees_the_written_checkpoint(tmp_path: Any, how: dict[str, Any]) -> None:
    probe = _SavedFolder()
    trainer(tmp_path, [probe], rows=12, gradient_accumulation_steps=2, num_train_epochs=2, **how).train()
    assert probe.found and all({"trainer_state.json", "model.safetensors"} <= files for files in probe.found), (
        probe.found
    )


@pytest.mark.rule(
    lesson="05",
    section="Recap",
    text="`on_log` before `on_evaluate`",
    covers=["evaluation by steps", "evaluation by epochs", "logging off", "accumulation 2"],
)
@pytest.mark.parametrize(
    "how",
    [
        {"eval_strategy": "steps", "eval_steps": 2, "logging_strategy": "steps", "logging_steps": 1},
        {"eval_strategy": "epoch", "logging_strategy": "no"},
    ],
)
def test_on_log_comes_before_on_evaluate(tmp_path: Any, how: dict[str, Any]) -> None:
    from tiny_training import toy_dataset

    events = Events()
    trainer(
        tmp_path,
        [events],
        rows=12,
        gradient_accumulation_steps=2,
        num_train_epochs=2,
        eval_dataset=toy_dataset(4),
        **how,
    ).train()
    names = events.names()
    evaluations = [index for index, name in enumerate(names) if name == "on_evaluate"]
    assert evaluations
    for index in evaluations:
        assert names[index - 1] == "on_log", names[index - 3 : index + 1]


class _Keys(TrainerCallback):
    def __init__(self) -> None:
        self.logs: list[dict[str, Any]] = []

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        self.logs.append(dict(logs))


class _LateKeys(_Keys):
    pass


@pytest.mark.rule(
    lesson="05",
    section="Recap",
    text="to log a value everywhere, override `Trainer.log`.",
    covers=[
        "training, evaluation and final logs",
        "a callback before and after",
        "accumulation 3",
        "uneven last accumulation group",
    ],
)
def test_a_value_logged_by_overriding_log_reaches_everything(tmp_path: Any) -> None:
    from tiny_training import toy_dataset
    from transformers import Trainer

    class Everywhere(Trainer):
        def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
            logs["from_log"] = 1.0
            super().log(logs, start_time)

    early, late = _Keys(), _LateKeys()
    run = trainer(
        tmp_path,
        [early, late],
        rows=14,
        trainer_class=Everywhere,
        gradient_accumulation_steps=3,
        logging_strategy="steps",
        logging_steps=1,
        eval_strategy="steps",
        eval_steps=2,
        eval_dataset=toy_dataset(4),
    )
    run.train()
    kinds = {"eval_loss" in logs for logs in early.logs}
    assert kinds == {True, False} and any("train_runtime" in logs for logs in early.logs)
    assert all("from_log" in logs for logs in early.logs + late.logs)
    assert all("from_log" in entry for entry in run.state.log_history)


class _Acts(TrainerCallback):
    """Reads metrics at on_evaluate and logs at on_log, and adds a file to every checkpoint at on_save."""

    def __init__(self) -> None:
        self.metrics: list[dict[str, float]] = []
        self.logs: list[dict[str, float]] = []

    def on_evaluate(self, args: Any, state: Any, control: Any, metrics: Any = None, **kwargs: Any) -> None:
        self.metrics.append(dict(metrics))

    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        self.logs.append(dict(logs))

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        folder = os.path.join(args.output_dir, f"checkpoint-{state.global_step}")
        with open(os.path.join(folder, "note.txt"), "w") as note:
            note.write(str(state.global_step))


@pytest.mark.rule(
    lesson="05",
    section="Recap",
    text="read `metrics` at `on_evaluate` and `logs` at `on_log`, and can add files to a checkpoint at `on_save`",
    covers=[
        "accumulation 2",
        "save_total_limit=2 (rotation keeps the file with its checkpoint)",
        "2 epochs",
        "a resume from the checkpoint",
    ],
)
def test_callbacks_read_metrics_and_logs_and_add_files(tmp_path: Any) -> None:
    from tiny_training import toy_dataset

    acts = _Acts()
    settings = dict(
        rows=12,
        gradient_accumulation_steps=2,
        num_train_epochs=2,
        eval_dataset=toy_dataset(4),
        eval_strategy="steps",
        eval_steps=2,
        logging_strategy="steps",
        logging_steps=1,
        save_strategy="steps",
        save_steps=2,
        save_total_limit=2,
    )
    trainer(tmp_path, [acts], **settings).train()
    assert acts.metrics and all("eval_loss" in metrics for metrics in acts.metrics)
    assert any("loss" in logs for logs in acts.logs)
    kept = sorted(name for name in os.listdir(tmp_path) if name.startswith("checkpoint-"))
    assert len(kept) == 2 and all(os.path.isfile(tmp_path / name / "note.txt") for name in kept)
    again = trainer(tmp_path, [_Acts()], **settings)
    again.train(resume_from_checkpoint=str(tmp_path / kept[0]))
    assert again.state.global_step == 6


class _AddsKey(TrainerCallback):
    def on_log(self, args: Any, state: Any, control: Any, logs: Any = None, **kwargs: Any) -> None:
        logs["mine"] = 1.0


class _Carried(TrainerCallback):
    """For every event: whether it received ``metrics`` and ``logs``; best_metric at on_step_end and on_evaluate."""

    def __init__(self) -> None:
        self.carried: dict[str, set[str]] = {}
        self.best: list[tuple[str, int, Any]] = []

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):
            carried, best = object.__getattribute__(self, "carried"), object.__getattribute__(self, "best")

            def record(args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                carried.setdefault(name, set()).update(k for k in ("metrics", "logs") if kwargs.get(k) is not None)
                if name in ("on_step_end", "on_evaluate"):
                    best.append((name, state.global_step, state.best_metric))

            return record
        return object.__getattribute__(self, name)


@pytest.mark.rule(
    lesson="05",
    section="5. The callback list",
    text="`log()` stores the logs *before* it calls `on_log`, so a callback's key reaches only the callbacks after it.",
    covers=["training, evaluation and final logs", "accumulation 3, uneven last group", "a callback before and after"],
)
@pytest.mark.rule(
    lesson="05",
    section="3. The order of events",
    text="`metrics` and `logs` come only where they exist.",
    covers=["every event of train() with evaluation by steps", "predict()", "accumulation 3"],
)
@pytest.mark.rule(
    lesson="05",
    section="3. The order of events",
    text="`metrics` reaches `on_evaluate` and `on_predict`, `logs` only `on_log`.",
    covers=["every event of train() with evaluation by steps", "predict() and evaluate()", "accumulation 3"],
)
@pytest.mark.rule(
    lesson="05",
    section="4. `TrainerState` as you read it",
    text="`best_metric` is set by the evaluation after a step once `on_evaluate` has run, so at that step's "
    "`on_step_end`, and in `on_evaluate` itself, it still holds the previous value.",
    covers=["evaluation every update and every 2", "accumulation 3 (uneven last group)", "2 epochs"],
)
@pytest.mark.parametrize("eval_steps", [1, 2])
def test_what_each_event_receives_and_when_it_is_set(tmp_path: Any, eval_steps: int) -> None:
    from tiny_training import toy_dataset

    early, late, carried = _Keys(), _LateKeys(), _Carried()
    run = trainer(
        tmp_path,
        [early, _AddsKey(), late, carried],
        rows=14,
        gradient_accumulation_steps=3,
        num_train_epochs=2,
        logging_strategy="steps",
        logging_steps=1,
        eval_strategy="steps",
        eval_steps=eval_steps,
        eval_dataset=toy_dataset(4),
        metric_for_best_model="loss",
        learning_rate=0.5,
    )
    run.train()
    run.predict(toy_dataset(3))
    assert early.logs and not any("mine" in logs for logs in early.logs)
    assert late.logs and all("mine" in logs for logs in late.logs)
    assert not any("mine" in entry for entry in run.state.log_history)
    assert {name: keys for name, keys in carried.carried.items() if keys} == {
        "on_evaluate": {"metrics"},
        "on_predict": {"metrics"},
        "on_log": {"logs"},
    }
    losses = {entry["step"]: entry["eval_loss"] for entry in run.state.log_history if "eval_loss" in entry}
    best_so_far: float | None = None
    for name, step, best in carried.best:  # at on_step_end and in on_evaluate: the previous evaluations' best
        assert best == best_so_far, (name, step, best, best_so_far)
        if name == "on_evaluate":
            best_so_far = losses[step] if best_so_far is None else min(best_so_far, losses[step])
    assert run.state.best_metric == best_so_far


class _Stops(TrainerCallback):
    """Records every event's keyword names; prints a line at each step end; stops at update 2's on_step_end."""

    def __init__(self) -> None:
        self.keys: dict[str, set[str]] = {}

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):
            keys = object.__getattribute__(self, "keys")

            def record(args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                keys.setdefault(name, set()).update(kwargs)
                if name == "on_step_end":
                    print(f"step {state.global_step}")
                    control.should_training_stop = state.global_step == 2

            return record
        return object.__getattribute__(self, name)


@pytest.mark.rule(
    lesson="05",
    section="2. Callbacks you will write",
    text="`disable_tqdm=True` and removing the `PrinterCallback` it brings take the progress display out, so a run "
    "prints only what its callbacks print.",
    covers=["logs, evaluations and saves every update", "accumulation 1 and 3", "a stop at update 2"],
)
@pytest.mark.rule(
    lesson="05",
    section="2. Callbacks you will write",
    text="A callback stops training by setting `control.should_training_stop = True`; the Trainer finishes the "
    "step (its log, evaluation and save) and leaves the loop.",
    covers=["set at update 2's on_step_end, logs, evaluations and saves every update", "accumulation 1 and 3"],
)
@pytest.mark.rule(
    lesson="05",
    section="3. The order of events",
    text="Every event gets the same six keyword arguments (`model`, `processing_class`, `optimizer`, "
    "`lr_scheduler`, `train_dataloader`, `eval_dataloader`), but some are still `None` when it fires",
    covers=["every event of train() with evaluation and of predict()", "no processing_class given (None)"],
)
@pytest.mark.parametrize("accumulation", [1, 3])
def test_a_quiet_run_that_stops_and_what_events_get(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], accumulation: int
) -> None:
    from tiny_training import toy_dataset

    stops = _Stops()
    run = trainer(
        tmp_path,
        [stops],
        rows=13,
        num_train_epochs=2,
        gradient_accumulation_steps=accumulation,
        logging_strategy="steps",
        logging_steps=1,
        eval_strategy="steps",
        eval_steps=1,
        eval_dataset=toy_dataset(4),
        save_strategy="steps",
        save_steps=1,
    )
    capsys.readouterr()
    run.train()
    run.predict(toy_dataset(3))
    assert capsys.readouterr().out == "step 1\nstep 2\n"
    history = run.state.log_history
    assert [entry["step"] for entry in history if "loss" in entry] == [1, 2]
    assert [entry["step"] for entry in history if "eval_loss" in entry] == [1, 2]
    assert sorted(os.listdir(tmp_path)) == ["checkpoint-1", "checkpoint-2"] and run.state.global_step == 2
    six = {"model", "processing_class", "optimizer", "lr_scheduler", "train_dataloader", "eval_dataloader"}
    assert stops.keys and all(six <= keys for keys in stops.keys.values()), stops.keys
