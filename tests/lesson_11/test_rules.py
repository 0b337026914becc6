"""Lesson 11's rules, each tried on the cases a learner meets beyond the lesson's own run (issue 59): a cut inside
the first epoch, inside the second and on the epoch boundary, gradient accumulation 2, dropout on, a resume from
``True`` and from a path, other optimizers, other save limits, two stateful callbacks.

Each test carries one ``rule`` marker per sentence of the main text it tries (COORDINATION.md). The runs are the
tiny BERT of ``exercises.checks.fixtures`` on 32 rows of random ids: 8 steps an epoch at batch 4.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import torch

from exercises.checks import fixtures

pytestmark = [pytest.mark.filterwarnings("ignore"), pytest.mark.slow]

TOTAL = 12  # 1.5 epochs of 8 steps


def run(
    folder: Path,
    cut: int | None = None,
    model: Any = None,
    trainer_class: Any = None,
    eval_dataset: Any = None,
    **settings: Any,
) -> Any:
    """A quiet Trainer of the 1.5-epoch run into ``folder`` (a checkpoint every 4 steps), stopped at ``cut``."""
    from helpers.lessons.lesson_11 import StopAtStep

    base = dict(output_dir=str(folder), per_device_train_batch_size=4, max_steps=TOTAL, logging_steps=1)
    base |= dict(save_strategy="steps", save_steps=4, learning_rate=1e-3, seed=0)
    return fixtures.trainer(
        base | settings,
        model=model if model is not None else fixtures.tiny_model(seed=3),
        trainer_class=trainer_class,
        train_dataset=fixtures.random_ids(32, seed=5),
        callbacks=[StopAtStep(cut)] if cut else [],
        eval_dataset=eval_dataset,
    )


def losses(trainer: Any) -> dict[int, float]:
    return {log["step"]: log["loss"] for log in trainer.state.log_history if "loss" in log}


def weight_gap(one: Any, other: Any) -> float:
    pairs = zip(one.model.state_dict().values(), other.model.state_dict().values())
    return max(float((a - b).abs().max()) for a, b in pairs)


class Payload:
    """Stands in for whatever a malicious pickle might carry."""


def with_dropout() -> Any:
    model = fixtures.tiny_model(seed=3)
    for module in model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.1
    return model


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="a new Trainer with the same arguments continues with `train(resume_from_checkpoint=True or path)`, and on "
    "this run the losses and final weights matched the uninterrupted run.",
    covers=["cut inside the first epoch", "cut inside the second epoch", "cut on the epoch boundary",
            "gradient accumulation 2", "dropout on", "resume from a path"],
)  # fmt: skip
@pytest.mark.parametrize(
    ("case", "cut", "settings"),
    [
        ("inside the first epoch", 5, {}),
        ("inside the second epoch", 10, {}),
        ("on the epoch boundary", 8, dict(save_steps=8)),
        ("accumulation 2", 5, dict(per_device_train_batch_size=2, gradient_accumulation_steps=2)),
        ("dropout on", 5, {}),
        ("from a path", 5, {}),
    ],
)
def test_a_resumed_run_is_the_uninterrupted_run(tmp_path: Path, case: str, cut: int, settings: dict) -> None:
    make = with_dropout if case == "dropout on" else (lambda: fixtures.tiny_model(seed=3))
    settings = settings | dict(save_steps=settings.get("save_steps", cut))  # a checkpoint at the cut
    reference = run(tmp_path / "reference", model=make(), **(settings | dict(save_strategy="no")))
    reference.train()
    run(tmp_path / "cut", cut, model=make(), **settings).train()
    resumed = run(tmp_path / "cut", model=make(), **settings)
    resumed.train(resume_from_checkpoint=str(tmp_path / "cut" / f"checkpoint-{cut}") if case == "from a path" else True)
    assert sorted(losses(resumed)) == list(range(1, TOTAL + 1))
    gap = max(abs(loss - losses(reference)[step]) for step, loss in losses(resumed).items())
    assert gap <= 1e-6 and weight_gap(resumed, reference) <= 1e-6, (case, gap)


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="Nothing resumes by itself.",
    covers=["output_dir holding checkpoints", "resume_from_checkpoint left out", "resume_from_checkpoint=None"],
)
@pytest.mark.parametrize("keywords", [{}, {"resume_from_checkpoint": None}], ids=["left out", "None"])
def test_a_trainer_on_a_folder_with_checkpoints_starts_again_at_step_0(tmp_path: Path, keywords: dict) -> None:
    run(tmp_path, 5, save_steps=5).train()
    again = run(tmp_path, save_steps=5)
    again.train(**keywords)
    assert sorted(losses(again)) == list(range(1, TOTAL + 1))
    fresh = run(tmp_path / "fresh", save_strategy="no")
    fresh.train()
    assert losses(again) == pytest.approx(losses(fresh), abs=1e-6)  # step 1 on: a new run


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="A checkpoint holds weights, optimizer, scheduler, random states, `trainer_state.json` and the arguments: "
    "about three times the model with AdamW.",
    covers=["AdamW (the default)", "adamw_torch_fused", "SGD without momentum (about once the model)",
            "a DistilBERT classifier"],
)  # fmt: skip
@pytest.mark.parametrize("optim", ["adamw_torch", "adamw_torch_fused", "sgd"])
@pytest.mark.parametrize("family", ["bert", "distilbert"])
def test_a_checkpoint_is_about_three_times_the_model_with_adamw(tmp_path: Path, optim: str, family: str) -> None:
    model = fixtures.tiny_model(3, hidden_size=128, intermediate_size=256) if family == "bert" else None
    if family == "distilbert":
        model = fixtures.tiny_distilbert(seed=3)
    run(tmp_path, 4, model=model, optim=optim).train()
    folder = tmp_path / "checkpoint-4"
    names = {path.name for path in folder.iterdir()}
    assert {"model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth", "trainer_state.json"} <= names
    assert "training_args.bin" in names
    weights = (folder / "model.safetensors").stat().st_size
    states = ((folder / "model.safetensors").stat().st_size + (folder / "optimizer.pt").stat().st_size) / weights
    if optim.startswith("adamw"):
        assert 2.8 < states < 3.3, states
    else:
        assert states < 1.3, states  # SGD keeps no moment: the rule's "with AdamW" matters


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="`ignore_data_skip=True` restarts the epoch's data",
    covers=["cut inside the first epoch", "cut inside the second epoch"],
)
@pytest.mark.parametrize("cut", [5, 10], ids=["first epoch", "second epoch"])
def test_ignore_data_skip_restarts_the_epoch_that_was_cut(tmp_path: Path, cut: int) -> None:
    from helpers.step_records import RecordingTrainer

    reference = run(tmp_path / "reference", trainer_class=RecordingTrainer, save_strategy="no")
    reference.train()
    run(tmp_path / "cut", cut, save_steps=cut).train()
    ignored = run(tmp_path / "cut", trainer_class=RecordingTrainer, save_steps=cut, ignore_data_skip=True)
    ignored.train(resume_from_checkpoint=True)
    epoch_start = (cut // 8) * 8  # the steps of earlier epochs
    for step, batch in ignored.step_batches.items():
        assert batch == reference.step_batches[step - cut + epoch_start], step


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="`save_only_model=True` checkpoints resume without an error but not exactly: check a folder "
    "(`require_resumable`) before resuming.",
    covers=["cut inside the first epoch", "gradient accumulation 2", "a folder marked incomplete"],
)
@pytest.mark.parametrize("settings", [{}, dict(per_device_train_batch_size=2, gradient_accumulation_steps=2)])
def test_a_save_only_model_checkpoint_resumes_but_not_exactly_and_require_resumable_refuses_it(
    tmp_path: Path, settings: dict
) -> None:
    from helpers.lessons.lesson_11 import INCOMPLETE_MARKER, require_resumable

    reference = run(tmp_path / "reference", save_strategy="no", **settings)
    reference.train()
    run(tmp_path / "light", 5, save_steps=5, save_only_model=True, **settings).train()
    with pytest.raises(ValueError, match="optimizer.pt"):
        require_resumable(tmp_path / "light" / "checkpoint-5")
    light = run(tmp_path / "light", save_steps=5, save_only_model=True, **settings)
    light.train(resume_from_checkpoint=True)  # no error
    assert max(abs(loss - losses(reference)[step]) for step, loss in losses(light).items()) > 1e-4
    run(tmp_path / "full", 5, save_steps=5, **settings).train()
    require_resumable(tmp_path / "full" / "checkpoint-5")  # passes
    (tmp_path / "full" / "checkpoint-5" / INCOMPLETE_MARKER).write_text("cut short")
    with pytest.raises(ValueError, match="cut short"):
        require_resumable(tmp_path / "full" / "checkpoint-5")


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="`save_total_limit` keeps the latest and, with `load_best_model_at_end`, the best checkpoint",
    covers=["save_total_limit 1 and 2", "with and without load_best_model_at_end", "during training"],
)
@pytest.mark.parametrize("limit", [1, 2])
@pytest.mark.parametrize("best", [True, False], ids=["load_best", "no load_best"])
def test_save_total_limit_keeps_the_latest_and_the_best(tmp_path: Path, limit: int, best: bool) -> None:
    from helpers.step_records import ListCheckpoints

    lister = ListCheckpoints()
    settings = dict(save_total_limit=limit, save_steps=3, save_only_model=True)
    if best:
        settings |= dict(eval_strategy="steps", eval_steps=3, load_best_model_at_end=True)
        settings |= dict(metric_for_best_model="eval_loss")
    trainer = run(tmp_path, eval_dataset=fixtures.random_ids(8, seed=6) if best else None, **settings)
    trainer.add_callback(lister)
    trainer.train()
    evals = {log["step"]: log["eval_loss"] for log in trainer.state.log_history if "eval_loss" in log}
    for step, on_disk in lister.on_disk.items():
        newest = [s for s in (3, 6, 9, 12) if s <= step][-limit:]
        kept = set(newest)
        if best:
            kept.add(min((s for s in evals if s <= step), key=evals.get))
        assert set(on_disk) == kept, (step, on_disk, kept)


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="a restored `ExportableState` callback is a new object at the end of the list.",
    covers=["one stateful callback", "two stateful callbacks", "a cut inside the first epoch"],
)
@pytest.mark.parametrize("count", [1, 2])
def test_a_restored_stateful_callback_is_a_new_object_at_the_end(tmp_path: Path, count: int) -> None:
    from transformers import TrainerCallback
    from transformers.trainer_callback import ExportableState

    from helpers.step_records import ListCheckpoints

    def counter(name: str) -> type:
        def state(self: Any) -> dict:
            return {"args": {}, "attributes": {"steps_seen": self.steps_seen}}

        def on_step_end(self: Any, args: Any, state_: Any, control: Any, **kwargs: Any) -> None:
            self.steps_seen += 1

        def init(self: Any, steps_seen: int = 0) -> None:
            self.steps_seen = steps_seen

        return type(name, (TrainerCallback, ExportableState), dict(__init__=init, state=state, on_step_end=on_step_end))

    classes = [counter(f"Counter{i}") for i in range(count)]
    first = run(tmp_path, 5, save_steps=5)
    for cls in classes:
        first.add_callback(cls())
    first.train()
    passed = [cls() for cls in classes]
    again = run(tmp_path, save_steps=5, restore_callback_states_from_checkpoint=True)
    for callback in passed:
        again.add_callback(callback)
    again.add_callback(ListCheckpoints())
    again.train(resume_from_checkpoint=True)
    callbacks = again.callback_handler.callbacks
    live = [cb for cb in callbacks if type(cb) in classes]
    assert len(live) == count and all(cb.steps_seen == TOTAL for cb in live)
    assert not any(cb is mine for cb in live for mine in passed)
    assert {type(cb) for cb in callbacks[-count:]} == set(classes)


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="Load weights from safetensors, anything else with `torch.load(..., weights_only=True)`.",
    covers=["model.safetensors", "optimizer.pt", "scheduler.pt", "rng_state.pth (with the Trainer's allow-list)",
            "a pickle carrying a class"],
)  # fmt: skip
def test_checkpoint_files_load_safely(tmp_path: Path) -> None:
    from safetensors.torch import load_file
    from transformers.trainer_pt_utils import safe_globals

    run(tmp_path, 4).train()
    folder = tmp_path / "checkpoint-4"
    assert all(isinstance(t, torch.Tensor) for t in load_file(folder / "model.safetensors").values())
    for name in ("optimizer.pt", "scheduler.pt"):
        torch.load(folder / name, weights_only=True)
    with pytest.raises(Exception, match="numpy"):  # torch raises UnpicklingError
        torch.load(folder / "rng_state.pth", weights_only=True)
    with safe_globals():
        assert {"python", "numpy", "cpu"} <= set(torch.load(folder / "rng_state.pth", weights_only=True))

    torch.save({"payload": Payload()}, tmp_path / "suspicious.pt")
    with pytest.raises(Exception, match="Payload"):
        torch.load(tmp_path / "suspicious.pt", weights_only=True)


def _stream_run(folder: Path, rows: list[Any], max_steps: int, accumulation: int, cls: Any, resume: str | None):
    """TinyModel on a ReviewStream of ``rows`` (batch 2), saving every step; the stream and the x of each batch."""
    from rule_training import trainer
    from tiny_training import TinyModel

    from helpers.streams import ReviewStream

    class Seen(TinyModel):
        def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
            self.seen.append(x[:, 0].tolist())
            return super().forward(x, labels)

    model, stream = Seen(), ReviewStream(rows)
    model.seen = []
    run = trainer(
        folder,
        model=model,
        train_dataset=stream,
        trainer_class=cls,
        max_steps=max_steps,
        gradient_accumulation_steps=accumulation,
        save_strategy="steps",
        save_steps=1,
    )
    run.train(resume_from_checkpoint=resume)
    return stream, model.seen


def _seeking_trainer() -> Any:
    from transformers import Trainer

    class SeekingTrainer(Trainer):  # the lesson's override
        def get_resumed_dataloader(self, dataloader: Any, num_batches: int) -> Any:
            self.train_dataset.start = num_batches * self.args.per_device_train_batch_size
            return dataloader

    return SeekingTrainer


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="a stream is read again up to the cut unless `get_resumed_dataloader` seeks (a cut in its first pass);",
    covers=[
        "accumulation 1 and 2",
        "a cut in the first pass: both resume on the uninterrupted run's batches, the seek reads cut × "
        "accumulation × batch rows fewer",
        "a cut in the second pass: the default resumes on other batches, the seek fails with a clear error",
    ],
)
@pytest.mark.rule(
    lesson="11",
    section="3. `ignore_data_skip`",
    text="It must seek exactly where `num_batches` says (tried on one process, cutting in the stream's first "
    "pass); a stream that cannot seek keeps the default: exact, slower. A cut past its end breaks both.",
    covers=["accumulation 1 and 2", "a cut in the first pass", "a cut in the second pass (neither holds)"],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_a_stream_is_read_again_unless_it_seeks(tmp_path: Path, accumulation: int) -> None:
    from tiny_training import toy_dataset
    from transformers import Trainer

    rows = toy_dataset(10)  # 5 batches of 2 a pass
    passes = {"first": (4 // accumulation, 4 // accumulation // 2), "second": (12 // accumulation, 6 // accumulation)}
    for name, (total, cut) in passes.items():
        full, seen = _stream_run(tmp_path / name, rows, total, accumulation, Trainer, None)
        checkpoint = str(tmp_path / name / f"checkpoint-{cut}")
        default, default_seen = _stream_run(tmp_path / name, rows, total, accumulation, Trainer, checkpoint)
        if name == "first":
            seeking, seeking_seen = _stream_run(
                tmp_path / name, rows, total, accumulation, _seeking_trainer(), checkpoint
            )
            assert default_seen == seeking_seen == seen[cut * accumulation :]
            assert default.read - seeking.read == cut * accumulation * 2
        else:  # past the end of the stream, num_batches counts every batch since the start
            assert default_seen != seen[cut * accumulation :]
            with pytest.raises(ValueError, match="outside the 10 rows"):
                _stream_run(tmp_path / name, rows, total, accumulation, _seeking_trainer(), checkpoint)


def _paced_run(out_dir: str, mode: str) -> None:
    """A long TinyModel run at accumulation 2 (a step of 20 ms, a save every 25), with or without the handler."""
    from rule_training import trainer
    from tiny_training import toy_dataset

    from helpers.preemption import Pace

    trainer(
        out_dir,
        [Pace(0.02)],
        train_dataset=toy_dataset(64),
        max_steps=1000,
        gradient_accumulation_steps=2,
        save_strategy="steps",
        save_steps=25,
        enable_jit_checkpoint=mode == "jit",
    ).train()


@pytest.mark.rule(
    lesson="11",
    section="Recap",
    text="SIGTERM kills a plain run where it stands; `enable_jit_checkpoint=True` saves a checkpoint first.",
    covers=[
        "a real SIGTERM after step 30 of a forked Trainer (TinyModel, accumulation 2, many epochs)",
        "plain: exit code -15, checkpoint-25 only; jit: exit code 0, a checkpoint at its last step",
        "a new Trainer resumes from the jit checkpoint at its step",
    ],
)
def test_sigterm_kills_a_plain_run_and_the_jit_checkpoint_saves(tmp_path: Path) -> None:
    import signal

    from rule_training import trainer
    from tiny_training import toy_dataset

    from helpers.preemption import stop_with_sigterm

    report = stop_with_sigterm(_paced_run, {"plain": tmp_path / "plain", "jit": tmp_path / "jit"}, signal_after=30)
    assert report["plain"]["exit code"] == -signal.SIGTERM and report["plain"]["saved"] == [25]
    assert report["jit"]["exit code"] == 0 and report["jit"]["saved"][-1] == report["jit"]["last step"] >= 30
    last = report["jit"]["saved"][-1]
    resumed = trainer(
        tmp_path / "jit", train_dataset=toy_dataset(64), max_steps=last + 2, gradient_accumulation_steps=2
    )
    resumed.train(resume_from_checkpoint=str(tmp_path / "jit" / f"checkpoint-{last}"))
    assert resumed.state.global_step == last + 2


@pytest.mark.rule(
    lesson="11",
    section="7. Pre-emption",
    text="the folder exists but lacks files, and `resume_from_checkpoint=True` still picks it, since "
    "`get_last_checkpoint` compares step numbers only.",
    covers=[
        "a complete checkpoint-9 beside a cut-short checkpoint-10 (the marker only): 10 is picked, as a number",
        "resume_from_checkpoint=True picks it and fails (no valid checkpoint); require_resumable names the marker",
    ],
)
def test_the_last_checkpoint_is_the_highest_number_even_cut_short(tmp_path: Path) -> None:
    from transformers.trainer_utils import get_last_checkpoint

    from helpers.lessons.lesson_11 import INCOMPLETE_MARKER, require_resumable

    run(tmp_path, 9, save_steps=9).train()
    cut = tmp_path / "checkpoint-10"
    cut.mkdir()
    (cut / INCOMPLETE_MARKER).write_text("cut short")
    assert get_last_checkpoint(str(tmp_path)) == str(cut)
    with pytest.raises(ValueError, match="cut short"):
        require_resumable(cut)
    with pytest.raises(ValueError, match="Can't find a valid checkpoint at .*checkpoint-10"):
        run(tmp_path, save_steps=9).train(resume_from_checkpoint=True)  # picks 10, not the complete 9


STEP_S = 2.0  # each step sleeps this long in `training_step`: the JIT flag, raised 3 s after SIGTERM, waits for it


def _slow_step_run(out_dir: str, mode: str) -> None:
    """A TinyModel run with `enable_jit_checkpoint=True` whose steps last STEP_S, and no regular save."""
    import time

    from rule_training import trainer
    from tiny_training import toy_dataset
    from transformers import Trainer

    from helpers.preemption import Pace

    class Slow(Trainer):
        def training_step(self, *args: Any, **kwargs: Any) -> Any:
            time.sleep(STEP_S)
            return super().training_step(*args, **kwargs)

    settings = dict(max_steps=100, save_strategy="steps", save_steps=1000, enable_jit_checkpoint=True)
    trainer(out_dir, [Pace(0.0)], train_dataset=toy_dataset(64), trainer_class=Slow, **settings).train()


@pytest.mark.rule(
    lesson="11",
    section="7. Pre-emption",
    text="set `enable_jit_checkpoint=True` and ask for a grace period longer than 3 s + one step + one save",
    covers=[
        "a real SIGTERM after step 1 of a forked Trainer whose steps last 2 s, then SIGKILL when the grace ends",
        "grace 2.5 s (< 3 s): killed, no checkpoint",
        "grace 3.5 s (> 3 s, < 3 s + one step): killed, no checkpoint",
        "grace 3 s + one step + one save (+ 1.5 s): exit 0 about 4 s after SIGTERM, checkpoint-2 (no regular save)",
    ],
)
def test_the_grace_period_must_cover_3_s_a_step_and_a_save(tmp_path: Path) -> None:
    import signal
    import time
    from concurrent.futures import ThreadPoolExecutor

    from helpers.preemption import checkpoint_steps, start_run

    def stop(grace: float, child: Any, output: Any) -> dict[str, Any]:
        for line in output:  # the first step's end
            if line.startswith("step 1"):
                break
        os.kill(child.pid, signal.SIGTERM)
        sent = time.monotonic()
        child.join(timeout=grace)
        ended = time.monotonic() - sent
        if child.is_alive():  # the cluster's SIGKILL at the end of the grace period
            os.kill(child.pid, signal.SIGKILL)
            child.join()
        output.close()
        return {"exit code": child.exitcode, "after": ended, "saved": checkpoint_steps(tmp_path / str(grace))}

    graces = [2.5, 3.5, 3 + STEP_S + 1.5]
    runs = [start_run(_slow_step_run, tmp_path / str(grace), "jit") for grace in graces]  # forked from this thread
    with ThreadPoolExecutor(len(graces)) as pool:
        short, above_3_s, enough = pool.map(stop, graces, *zip(*runs, strict=True))
    for lost in (short, above_3_s):
        assert lost["exit code"] == -signal.SIGKILL and lost["saved"] == [], (short, above_3_s)
    # the flag rose 3 s after SIGTERM, inside step 3 (2 to 4 s): checkpoint-2 saved before that step's update
    assert enough["exit code"] == 0 and enough["saved"] == [2], enough
    assert 3 + STEP_S / 2 < enough["after"] < graces[-1], enough
