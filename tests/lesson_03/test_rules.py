"""Lesson 03's rules (learning-rate schedules), tried beyond the lesson's run: accumulation 1, 3 and 4 with an
uneven last accumulation group, uneven last batch, 2 epochs, warmup as a count and as a share, on TinyModel."""

from __future__ import annotations

import math
from typing import Any

import pytest
from rule_training import trainer

from helpers.lessons.lesson_03 import AppliedLRRecorder
from helpers.plots.schedules import schedule_lrs

PEAK = 1e-2
# rows, batch, accumulation, epochs: micro-batches an epoch 7 (uneven last batch of 1 when rows are odd)
SPLITS = [(16, 2, 1, 1), (13, 2, 3, 2), (30, 2, 4, 1), (27, 4, 4, 2)]


def _run(tmp_path: Any, rows: int, batch: int, accumulation: int, epochs: int, **settings: Any) -> tuple[Any, Any]:
    recorder = AppliedLRRecorder()
    run = trainer(
        tmp_path,
        [recorder],
        rows=rows,
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        num_train_epochs=epochs,
        learning_rate=PEAK,
        **settings,
    )
    run.train()
    return run, recorder


@pytest.mark.rule(
    lesson="03",
    section="Recap",
    text="`warmup_steps` is a count (an int) or a share of all updates (a float below 1, rounded up).",
    covers=["accumulation 1, 3, 4", "uneven last accumulation group", "uneven last batch", "2 epochs", "count 2"],
)
@pytest.mark.rule(
    lesson="03",
    section="Recap",
    text="The scheduler steps once per optimizer update: gradient accumulation divides the number of its steps.",
    covers=["accumulation 1, 3, 4", "uneven last accumulation group (the number is rounded up)", "2 epochs"],
)
@pytest.mark.rule(
    lesson="03",
    section="6. Gradient accumulation",
    text="a warmup given as a share is counted in those updates (rounded up).",
    covers=["accumulation 3 and 4", "uneven last accumulation group", "2 epochs"],
)
@pytest.mark.parametrize(("rows", "batch", "accumulation", "epochs"), SPLITS)
@pytest.mark.parametrize("warmup", [0.3, 2])
def test_warmup_and_scheduler_steps_count_optimizer_updates(
    tmp_path: Any, rows: int, batch: int, accumulation: int, epochs: int, warmup: float
) -> None:
    run, recorder = _run(tmp_path, rows, batch, accumulation, epochs, warmup_steps=warmup, lr_scheduler_type="linear")
    updates = math.ceil(math.ceil(rows / batch) / accumulation) * epochs
    assert run.state.global_step == updates == len(recorder.lrs) == run.lr_scheduler.last_epoch
    warmup_updates = math.ceil(warmup * updates) if isinstance(warmup, float) else warmup
    assert recorder.lrs == pytest.approx(schedule_lrs("linear", updates, warmup_updates, PEAK), rel=1e-9)


@pytest.mark.rule(
    lesson="03",
    section="Recap",
    text="The rate each update applied equals the planned curve exactly; the linear schedule's last update uses "
    "`peak / (N − warmup)`, and the scheduler reaches 0 only after it.",
    covers=["accumulation 1, 3, 4", "uneven last accumulation group", "2 epochs", "warmup 0 and 2"],
)
@pytest.mark.parametrize(("rows", "batch", "accumulation", "epochs"), SPLITS)
@pytest.mark.parametrize("warmup", [0, 2])
def test_the_last_update_uses_one_step_of_decay(
    tmp_path: Any, rows: int, batch: int, accumulation: int, epochs: int, warmup: int
) -> None:
    run, recorder = _run(tmp_path, rows, batch, accumulation, epochs, warmup_steps=warmup, lr_scheduler_type="linear")
    updates = run.state.global_step
    assert recorder.lrs[-1] == pytest.approx(PEAK / (updates - warmup), rel=1e-9)
    assert run.lr_scheduler.get_last_lr()[0] == 0.0


@pytest.mark.rule(
    lesson="03",
    section="The pattern",
    text="The `learning_rate` the Trainer logs (`trainer.state.log_history`) is the same rate, at the logged updates.",
    covers=["accumulation 1, 3, 4", "uneven last accumulation group", "logging every update and every 2"],
)
@pytest.mark.parametrize(("rows", "batch", "accumulation", "epochs"), SPLITS)
@pytest.mark.parametrize("every", [1, 2])
def test_the_logged_rate_is_the_applied_one(
    tmp_path: Any, rows: int, batch: int, accumulation: int, epochs: int, every: int
) -> None:
    run, recorder = _run(
        tmp_path,
        rows,
        batch,
        accumulation,
        epochs,
        warmup_steps=1,
        lr_scheduler_type="cosine",
        logging_strategy="steps",
        logging_steps=every,
    )
    applied = dict(zip([step + 1 for step in recorder.steps], recorder.lrs, strict=True))
    logged = {entry["step"]: entry["learning_rate"] for entry in run.state.log_history if "learning_rate" in entry}
    assert logged and all(rate == pytest.approx(applied[step], rel=1e-9) for step, rate in logged.items()), (
        logged,
        applied,
    )


@pytest.mark.rule(
    lesson="03",
    section="1. Every scheduler type",
    text="Three types need a setting that has no default: a floor (`min_lr` or `min_lr_rate`) for the two min-lr "
    "cosines, and the length of the decay (`num_decay_steps`) for `warmup_stable_decay`.",
    covers=[
        "every SchedulerType built by get_scheduler with 10 warmup of 100 updates and no lr_scheduler_kwargs: "
        "exactly those three refuse",
        "each of them with its setting: a run of 4 updates at accumulation 2 (uneven last group)",
    ],
)
def test_three_scheduler_types_need_a_setting(tmp_path: Any) -> None:
    import torch
    from transformers import SchedulerType, get_scheduler

    needs = {
        "cosine_with_min_lr": {"min_lr": 1e-5},
        "cosine_warmup_with_min_lr": {"min_lr_rate": 0.1},
        "warmup_stable_decay": {"num_decay_steps": 2},
    }
    refused = set()
    for kind in SchedulerType:
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
        try:
            get_scheduler(kind.value, optimizer, num_warmup_steps=10, num_training_steps=100)
        except (TypeError, ValueError):
            refused.add(kind.value)
    assert refused == set(needs)
    for kind, setting in needs.items():
        run = trainer(
            tmp_path / kind,
            rows=15,
            gradient_accumulation_steps=2,
            max_steps=4,
            lr_scheduler_type=kind,
            lr_scheduler_kwargs=setting,
        )
        run.train()
        assert run.state.global_step == 4


@pytest.mark.rule(
    lesson="03",
    section="3. What `lr_scheduler_kwargs` changes",
    text="`polynomial` with `power=1` *is* the linear schedule (down to its `lr_end`, 1e-7 by default)",
    covers=["37 and 100 updates", "warmup 0 and 10", "a peak of 1 and of 2e-4: every rate within lr_end of linear's"],
)
def test_polynomial_power_one_is_linear() -> None:
    import torch
    from transformers import get_scheduler

    def rates(kind: str, peak: float, updates: int, warmup: int, **kwargs: Any) -> list[float]:
        optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=peak)
        scheduler = get_scheduler(
            kind, optimizer, num_warmup_steps=warmup, num_training_steps=updates, scheduler_specific_kwargs=kwargs
        )
        out = []
        for _ in range(updates):
            out.append(optimizer.param_groups[0]["lr"])
            optimizer.step()
            scheduler.step()
        return out

    for peak in (1.0, 2e-4):
        for updates, warmup in ((37, 0), (100, 10)):
            linear = rates("linear", peak, updates, warmup)
            polynomial = rates("polynomial", peak, updates, warmup, power=1.0)
            assert max(abs(a - b) for a, b in zip(linear, polynomial, strict=True)) <= 1e-7
            assert polynomial != rates("polynomial", peak, updates, warmup, power=2.0)


@pytest.mark.rule(
    lesson="03",
    section="4. Warmup as a count or as a fraction",
    text="A share follows the length of the run; a count does not.",
    covers=[
        "real runs of 13 rows for 1 and 3 epochs, accumulation 1 and 3 (uneven last group): 0.25 of 7, 21, 3 and "
        "9 updates, against a count of 2",
        "the warmup read from the rates applied (the first update at the peak)",
    ],
)
@pytest.mark.parametrize("accumulation", [1, 3])
def test_a_warmup_share_follows_the_run_a_count_does_not(tmp_path: Any, accumulation: int) -> None:
    def peak_at(warmup: float, epochs: int) -> tuple[int, int]:
        recorder = AppliedLRRecorder()
        run = trainer(
            tmp_path / f"{warmup}-{epochs}",
            [recorder],
            rows=13,
            gradient_accumulation_steps=accumulation,
            num_train_epochs=epochs,
            warmup_steps=warmup,
            learning_rate=1.0,
        )
        run.train()
        return recorder.lrs.index(max(recorder.lrs)), run.state.max_steps

    for epochs in (1, 3):
        reached, updates = peak_at(0.25, epochs)
        assert reached == math.ceil(0.25 * updates)
        assert peak_at(2, epochs)[0] == 2
