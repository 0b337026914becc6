"""Lesson 06's rules (control flags), tried beyond the lesson's run: accumulation 1, 2 and 3 with an uneven last
group, checkpoints asked by the arguments and by a callback, a stop asked between accumulated batches."""

from __future__ import annotations

import os
from typing import Any

import pytest
from rule_training import trainer
from transformers import TrainerCallback, TrainerControl

ACCUMULATIONS = [1, 2, 3]  # 7 micro-batches (13 rows, batch 2): 3 + 3 + 1 at accumulation 3


def _checkpoints(tmp_path: Any) -> list[int]:
    return sorted(int(name.split("-")[1]) for name in os.listdir(tmp_path) if name.startswith("checkpoint-"))


class _Flags(TrainerCallback):
    """Sets (or vetoes) should_save at one event, at the steps given."""

    def __init__(self, event: str, steps: set[int], value: bool) -> None:
        self.steps, self.value = steps, value
        setattr(self, event, self._set)

    def _set(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step in self.steps or not self.steps:
            control.should_save = self.value


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="Set flags at `on_step_end`, after `DefaultFlowCallback` raised them from your arguments: add to its "
    "decisions or veto them.",
    covers=["accumulation 1, 2, 3", "uneven last accumulation group", "add a checkpoint", "veto every checkpoint"],
)
@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="An action flag acts at the end of the step it is set in",
    covers=["accumulation 1, 2, 3", "uneven last accumulation group"],
)
@pytest.mark.parametrize("accumulation", ACCUMULATIONS)
def test_flags_set_at_step_end_add_and_veto(tmp_path: Any, accumulation: int) -> None:
    steps = -(-7 // accumulation)
    trainer(
        tmp_path / "add", [_Flags("on_step_end", {1}, True)], rows=13, gradient_accumulation_steps=accumulation
    ).train()
    assert _checkpoints(tmp_path / "add") == [1]
    veto = _Flags("on_step_end", set(), False)
    trainer(
        tmp_path / "veto",
        [veto],
        rows=13,
        gradient_accumulation_steps=accumulation,
        save_strategy="steps",
        save_steps=1,
    ).train()
    assert _checkpoints(tmp_path / "veto") == [], f"{steps} updates"


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="A veto at `on_step_begin` has no effect.",
    covers=["accumulation 1, 2, 3", "uneven last accumulation group", "veto should_save"],
)
@pytest.mark.rule(
    lesson="06",
    section="1. Who raises a flag",
    text="Lowering flags at `on_step_begin` is the commonest mistake: they are lowered there anyway and raised again "
    "at `on_step_end`.",
    covers=["accumulation 1, 2, 3", "uneven last accumulation group", "raise should_save", "veto should_save"],
)
@pytest.mark.parametrize("accumulation", ACCUMULATIONS)
def test_a_veto_at_step_begin_has_no_effect_a_raise_works(tmp_path: Any, accumulation: int) -> None:
    veto = _Flags("on_step_begin", set(), False)
    run = trainer(
        tmp_path / "veto",
        [veto],
        rows=13,
        gradient_accumulation_steps=accumulation,
        save_strategy="steps",
        save_steps=1,
    )
    run.train()
    assert _checkpoints(tmp_path / "veto") == list(range(1, run.state.global_step + 1))
    # Raised at on_step_begin (after the handler lowered it), should_save acts at the end of that same step; the
    # recap's first wording ("lowered and raised again: no effect") said otherwise, and this case failed it.
    trainer(
        tmp_path / "add", [_Flags("on_step_begin", {1}, True)], rows=13, gradient_accumulation_steps=accumulation
    ).train()
    assert _checkpoints(tmp_path / "add") == [2]


class _StopAtSubstep(TrainerCallback):
    def on_substep_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == 1:
            control.should_training_stop = True


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="`should_training_stop` set before the optimizer step drops the half-accumulated step.",
    covers=["accumulation 2", "accumulation 3", "2 epochs"],
)
@pytest.mark.parametrize("accumulation", [2, 3])
def test_a_stop_between_accumulated_batches_drops_the_step(tmp_path: Any, accumulation: int) -> None:
    run = trainer(tmp_path, [_StopAtSubstep()], rows=24, gradient_accumulation_steps=accumulation, num_train_epochs=2)
    run.train()
    assert run.state.global_step == 1


class _FreshControl(TrainerCallback):
    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> TrainerControl:
        return TrainerControl()


class _ReturnsNone(TrainerCallback):
    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        return None


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="Return `None`, never a fresh `TrainerControl`.",
    covers=["checkpoints by steps", "accumulation 1 and 2", "a stop by max_steps"],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_a_fresh_control_drops_the_trainers_decisions(tmp_path: Any, accumulation: int) -> None:
    kept = trainer(
        tmp_path / "none",
        [_ReturnsNone()],
        rows=16,
        gradient_accumulation_steps=accumulation,
        save_strategy="steps",
        save_steps=2,
    )
    kept.train()
    assert _checkpoints(tmp_path / "none") == list(range(2, kept.state.global_step + 1, 2))
    lost = trainer(
        tmp_path / "fresh",
        [_FreshControl()],
        rows=16,
        gradient_accumulation_steps=accumulation,
        save_strategy="steps",
        save_steps=2,
    )
    lost.train()
    assert _checkpoints(tmp_path / "fresh") == []


def _scripted(values: list[float]) -> Any:
    """compute_metrics that returns the next scripted score at each evaluation."""
    queue = list(values)

    def compute(prediction: Any) -> dict[str, float]:
        return {"score": queue.pop(0)}

    return compute


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="`EarlyStoppingCallback` stops on an absolute lack of improvement",
    covers=[
        "scores that rise by 0.001 (never stops)",
        "a flat score (stops after the patience)",
        "greater and smaller is better",
        "a threshold of 0.01",
    ],
)
@pytest.mark.parametrize("greater", [True, False])
def test_early_stopping_is_absolute(tmp_path: Any, greater: bool) -> None:
    from tiny_training import toy_dataset
    from transformers import EarlyStoppingCallback

    sign = 1 if greater else -1
    rising = [sign * (0.5 + 0.001 * step) for step in range(16)]
    flat = [sign * 0.5] * 16

    def run(folder: str, scores: list[float], threshold: float) -> int:
        done = trainer(
            tmp_path / folder,
            [EarlyStoppingCallback(early_stopping_patience=2, early_stopping_threshold=threshold)],
            rows=32,
            eval_dataset=toy_dataset(4),
            compute_metrics=_scripted(scores),
            eval_strategy="steps",
            eval_steps=1,
            save_strategy="steps",
            save_steps=1,
            load_best_model_at_end=True,
            metric_for_best_model="score",
            greater_is_better=greater,
        )
        done.train()
        return done.state.global_step

    assert run("rising", rising, 0.0) == 16  # tiny gains count: never stops
    assert run("flat", flat, 0.0) == 3  # the first, then two without improvement
    assert run("threshold", rising, 0.01) == 3  # gains below the threshold do not count


def _smart_early_stopping() -> type:
    """The lesson's ``SmartEarlyStopping``, run from the notebook's own cell (the code a learner copies)."""
    import json
    from pathlib import Path

    notebook = Path(__file__).resolve().parents[2] / "notebooks" / "06_callback_control.ipynb"
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    source = next(
        "".join(cell["source"])
        for cell in cells
        if cell["cell_type"] == "code" and "class SmartEarlyStopping" in "".join(cell["source"])
    )
    namespace: dict[str, Any] = {"TrainerCallback": TrainerCallback}
    exec(compile(source, str(notebook), "exec"), namespace)
    return namespace["SmartEarlyStopping"]


def _relative_run(
    folder: Any, scores: list[float], greater: bool, accumulation: int, resume: str | None = None
) -> tuple[int, Any]:
    from tiny_training import toy_dataset

    stopper = _smart_early_stopping()(patience=2)
    run = trainer(
        folder,
        [stopper],
        rows=27,  # 14 micro-batches of 2: an uneven last one, and at accumulation 4 an uneven last group
        num_train_epochs=2,
        gradient_accumulation_steps=accumulation,
        eval_dataset=toy_dataset(4),
        compute_metrics=_scripted(scores),
        eval_strategy="steps",
        eval_steps=1,
        save_strategy="steps",
        save_steps=1,
        metric_for_best_model="score",
        greater_is_better=greater,
        restore_callback_states_from_checkpoint=True,
    )
    run.train(resume_from_checkpoint=resume)
    return run.state.global_step, run


@pytest.mark.rule(
    lesson="06",
    section="4. Early stopping",
    text="For a *relative* rule (less than 5% better counts as no better), write a callback: this one reads "
    "`metric_for_best_model` and `greater_is_better`, starts afresh in `on_train_begin` of a new run, and its "
    "counters survive a resume (`ExportableState`, section 7).",
    covers=[
        "greater and smaller is better",
        "gains of 1% (stops after the patience) and of 10% (never stops)",
        "accumulation 1 and 4 (uneven last group)",
        "a resume from the checkpoint of each step with restore_callback_states_from_checkpoint=True: it stops at "
        "the step of the uninterrupted run",
        "a second train() on the same Trainer starts afresh",
    ],
)
@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="a relative rule is a short stateful callback (`ExportableState`) that reads `metric_for_best_model`.",
    covers=["greater and smaller is better", "accumulation 1 and 4", "a resume from every checkpoint"],
)
@pytest.mark.parametrize(("greater", "accumulation"), [(True, 1), (False, 4)])
def test_the_relative_stopper_stops_the_same_after_a_resume(tmp_path: Any, greater: bool, accumulation: int) -> None:
    def scores(gain: float) -> list[float]:  # the score improves by `gain` of itself at each evaluation
        return [(1 + gain) ** step if greater else (1 - gain) ** step for step in range(60)]

    stop, run = _relative_run(tmp_path / "full", scores(0.01), greater, accumulation)
    assert stop == 3  # the first evaluation, then two below 5% better
    assert _relative_run(tmp_path / "steep", scores(0.10), greater, accumulation)[0] > 3  # 10% better: never
    run.compute_metrics = _scripted(scores(0.01))
    run.train()  # a second train() starts afresh: the same stop
    assert run.state.global_step == 3
    for cut in (1, 2):  # resume from each checkpoint, with the scores the uninterrupted run saw after it
        resumed, _ = _relative_run(
            tmp_path / "full", scores(0.01)[cut:], greater, accumulation, str(tmp_path / "full" / f"checkpoint-{cut}")
        )
        assert resumed == stop, f"resumed from checkpoint-{cut}: stopped at step {resumed}, not {stop}"


class _FreezeEmbeddings(TrainerCallback):
    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        for parameter in model.get_input_embeddings().parameters():
            parameter.requires_grad_(False)


class _ZeroClassifierBias(TrainerCallback):
    def on_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        import torch

        with torch.no_grad():
            model.classifier.bias.zero_()


class _EventArguments(TrainerCallback):
    """The names of the keyword arguments every event receives."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):
            names = object.__getattribute__(self, "names")

            def record(args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                names.update(kwargs)

            return record
        return object.__getattribute__(self, name)


@pytest.mark.rule(
    lesson="06",
    section="Recap",
    text="callbacks can change the model, subclasses change the computation.",
    covers=[
        "BERT and DistilBERT classifiers",
        "accumulation 1 and 3 (uneven last group), weight decay 0.1, 2 epochs",
        "embeddings frozen at on_train_begin stay as they were; a bias zeroed at on_optimizer_step ends at zero",
        "no event of a run with evaluation receives the batch, the outputs or the loss",
    ],
)
@pytest.mark.rule(
    lesson="06",
    section="8. Callbacks can change the model",
    text="it sees the loop only at fixed points, never the batch, the outputs or the loss before the backward pass.",
    covers=["every event of a run with accumulation 3 and evaluation by steps", "BERT and DistilBERT classifiers"],
)
@pytest.mark.parametrize(("model", "accumulation"), [("bert", 1), ("distilbert", 3)])
def test_callbacks_change_the_model_not_the_computation(tmp_path: Any, model: str, accumulation: int) -> None:
    import torch
    from rule_training import MODELS, ids

    built = MODELS[model](seed=0)
    start = {name: value.clone() for name, value in built.state_dict().items()}
    events = _EventArguments()
    run = trainer(
        tmp_path,
        [_FreezeEmbeddings(), _ZeroClassifierBias(), events],
        model=built,
        train_dataset=ids(13),
        eval_dataset=ids(4),
        gradient_accumulation_steps=accumulation,
        num_train_epochs=2,
        learning_rate=1e-2,
        weight_decay=0.1,
        eval_strategy="steps",
        eval_steps=2,
    )
    run.train()
    after = run.model.state_dict()
    embeddings = {f"{name}" for name, _ in built.named_parameters() if "embed" in name and "word" in name}
    assert embeddings and all(torch.equal(start[name], after[name]) for name in embeddings)
    assert not torch.equal(start["classifier.weight"], after["classifier.weight"])
    assert not after["classifier.bias"].any()
    assert events.names and not events.names & {"inputs", "batch", "outputs", "loss"}, sorted(events.names)


class _RaiseOnce(TrainerCallback):
    """Raises ``flag`` at the first firing of ``event``."""

    def __init__(self, event: str, flag: str) -> None:
        self.flag, self.done = flag, False
        setattr(self, event, self._raise)

    def _raise(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if not self.done:
            self.done = True
            setattr(control, self.flag, True)


def _acted(tmp_path: Any, event: str, flag: str, accumulation: int, **settings: Any) -> dict[str, list[int]]:
    """The steps that logged, evaluated and saved, and the steps trained, with ``flag`` raised once at ``event``."""
    from tiny_training import toy_dataset

    folder = tmp_path / f"{event}-{flag}-{accumulation}"
    run = trainer(
        folder,
        [_RaiseOnce(event, flag)],
        rows=13,
        num_train_epochs=2,
        gradient_accumulation_steps=accumulation,
        eval_dataset=toy_dataset(4),
        **settings,
    )
    run.train()
    history = run.state.log_history[:-1]  # the last entry is the end-of-training summary
    return {
        "log": [entry["step"] for entry in history if "loss" in entry],
        "evaluate": [entry["step"] for entry in history if "eval_loss" in entry],
        "save": _checkpoints(folder),
        "steps": [run.state.global_step],
    }


@pytest.mark.rule(
    lesson="06",
    section="2. The control matrix",
    text="An action flag set at `on_train_begin` or `on_epoch_begin` is lowered at the next `on_step_begin` before "
    "anything reads it.",
    covers=["should_log, should_evaluate, should_save", "accumulation 1 and 3 (uneven last group)", "2 epochs"],
)
@pytest.mark.rule(
    lesson="06",
    section="2. The control matrix",
    text="Set from `on_step_begin` up to `on_step_end`, `should_log`, `should_evaluate` and `should_save` act at the "
    "end of that same step.",
    covers=[
        "on_step_begin, on_substep_end (accumulation 3), on_pre_optimizer_step, on_optimizer_step, on_step_end",
        "accumulation 1 and 3 (uneven last group)",
    ],
)
@pytest.mark.rule(
    lesson="06",
    section="2. The control matrix",
    text="From `on_log` you can still ask for an evaluation or a save; from `on_evaluate` only for a save; from "
    "`on_save`, nothing more in that step (unless it ends an epoch).",
    covers=["logs, evaluations and saves at update 2 (mid-epoch)", "accumulation 1 and 3 (uneven last group)"],
)
@pytest.mark.rule(
    lesson="06",
    section="2. The control matrix",
    text="**An epoch end checks the flags once more**, so `should_log` or `should_evaluate` raised at its step's "
    "`on_evaluate`, `on_save` or `on_epoch_end` still acts.",
    covers=[
        "accumulation 1 (7 updates an epoch) and 3 (3, the last of one micro-batch)",
        "should_log at on_evaluate, on_save and on_epoch_end: a log at that update",
        "should_evaluate at on_evaluate (a second evaluation at that update), on_save and on_epoch_end",
    ],
)
@pytest.mark.rule(
    lesson="06",
    section="2. The control matrix",
    text="**`should_epoch_stop` at `on_epoch_end` does nothing**: it is lowered at the next `on_epoch_begin`.",
    covers=["accumulation 1 and 3", "2 epochs: every update of both is trained"],
)
@pytest.mark.parametrize("accumulation", [1, 3])
def test_the_control_matrix_readings_hold(tmp_path: Any, accumulation: int) -> None:
    per_epoch = -(-7 // accumulation)
    quiet = {"log": [], "evaluate": [], "save": [], "steps": [2 * per_epoch]}
    for event in ("on_train_begin", "on_epoch_begin"):
        for flag in ("should_log", "should_evaluate", "should_save"):
            assert _acted(tmp_path, event, flag, accumulation) == quiet, (event, flag)
    within = ["on_step_begin", "on_pre_optimizer_step", "on_optimizer_step", "on_step_end"]
    if accumulation > 1:
        within.append("on_substep_end")
    for event in within:
        for flag, action in (("should_log", "log"), ("should_evaluate", "evaluate"), ("should_save", "save")):
            assert _acted(tmp_path, event, flag, accumulation)[action] == [1], (event, flag)
    for event, flag, acted, strategy in (  # mid-epoch, at update 2
        ("on_log", "should_evaluate", [2], "logging"),
        ("on_log", "should_save", [2], "logging"),
        ("on_evaluate", "should_save", [2], "eval"),
        ("on_evaluate", "should_log", [], "eval"),
        ("on_save", "should_log", [], "save"),
        ("on_save", "should_evaluate", [], "save"),
    ):
        action = {"should_log": "log", "should_evaluate": "evaluate", "should_save": "save"}[flag]
        settings = {f"{strategy}_strategy": "steps", f"{strategy}_steps": 2}
        assert _acted(tmp_path, event, flag, accumulation, **settings)[action] == acted, (event, flag)
    for event, strategy in (("on_evaluate", "eval"), ("on_save", "save")):  # at an epoch's last update
        settings = {f"{strategy}_strategy": "steps", f"{strategy}_steps": per_epoch}
        assert _acted(tmp_path, event, "should_log", accumulation, **settings)["log"] == [per_epoch], event
        evaluated = _acted(tmp_path, event, "should_evaluate", accumulation, **settings)["evaluate"]
        assert evaluated.count(per_epoch) == (2 if event == "on_evaluate" else 1), (event, evaluated)
    assert _acted(tmp_path, "on_epoch_end", "should_evaluate", accumulation)["evaluate"] == [per_epoch]
    assert _acted(tmp_path, "on_epoch_end", "should_log", accumulation)["log"] == [per_epoch]
    assert _acted(tmp_path, "on_epoch_end", "should_epoch_stop", accumulation)["steps"] == [2 * per_epoch]
