"""Exercises of lesson 10: steps per epoch on several processes, and a callback that acts on process zero only."""

from __future__ import annotations

import math
from typing import Any

from helpers.checks import fixtures
from helpers.checks.core import Exercise, Wrong, learner_code
from helpers.solutions import lesson_10 as solutions


def _trainer_steps(examples: int, per_device_batch: int, processes: int, accumulation: int) -> int:
    """The Trainer's own count (trainer.py, ``num_update_steps_per_epoch``), with the batches one process reads."""
    batches_per_process = math.ceil(examples / (per_device_batch * processes))
    return max(batches_per_process // accumulation + int(batches_per_process % accumulation > 0), 1)


def _check_steps(answer: Any) -> None:
    if not callable(answer):
        raise Wrong(
            "steps_per_epoch should be a function (examples, per_device_batch, processes, accumulation) -> int."
        )
    cases = [
        (n, b, p, a)
        for n in (1, 7, 10, 32, 100, 101, 640, 1000)
        for b in (1, 4, 8, 32)
        for p in (1, 2, 3, 8)
        for a in (1, 2, 3, 4)
    ]
    for case in cases:
        with learner_code(f"calling steps_per_epoch{case}"):
            yours = answer(*case)
        expected = _trainer_steps(*case)
        if yours != expected:
            examples, batch, processes, accumulation = case
            raise Wrong(
                f"{examples} reviews, batch {batch} per process, {processes} processes, accumulation "
                f"{accumulation}: the Trainer takes {expected} optimizer steps per epoch, you said {yours}. "
                "Each process reads its own batch, and a last, smaller batch still counts."
            )


def _state(world_zero: bool, local_zero: bool) -> Any:
    from transformers import TrainerState

    state = TrainerState()
    state.is_world_process_zero, state.is_local_process_zero = world_zero, local_zero
    return state


def _check_collector(callback_class: Any) -> None:
    from transformers import TrainerCallback, TrainerControl, TrainingArguments

    if not (isinstance(callback_class, type) and issubclass(callback_class, TrainerCallback)):
        raise Wrong("RankZeroLossCollector should be a class that subclasses transformers.TrainerCallback.")
    args = TrainingArguments(output_dir=fixtures.scratch_dir(), use_cpu=True, report_to="none")
    with learner_code("creating RankZeroLossCollector()"):
        collector = callback_class()
    if not isinstance(getattr(collector, "losses", None), list):
        raise Wrong("give the callback a list attribute `losses`, set in __init__.")
    for world_zero, local_zero in [(False, False), (False, True)]:  # rank 1 of one machine; rank 0 of machine 2
        with learner_code("calling your on_log as another process"):
            collector.on_log(args, _state(world_zero, local_zero), TrainerControl(), logs={"loss": 0.5})
        if collector.losses:
            raise Wrong(
                f"a process with is_world_process_zero={world_zero}, is_local_process_zero={local_zero} "
                "collected a loss; only the one world process zero should, or every loss is kept twice."
            )
    with learner_code("calling your on_log as process zero"):
        collector.on_log(args, _state(True, True), TrainerControl(), logs={"learning_rate": 1e-4, "eval_loss": 0.4})
        collector.on_log(args, _state(True, True), TrainerControl(), logs={"loss": 0.25, "grad_norm": 1.0})
    if collector.losses != [0.25]:
        raise Wrong(
            f"on process zero, keep logs['loss'] when the logs have one (and nothing else): got {collector.losses}."
        )
    _check_in_real_run(callback_class)


def _check_in_real_run(callback_class: Any) -> None:
    with learner_code("creating RankZeroLossCollector()"):
        collector = callback_class()
    settings = {"per_device_train_batch_size": 8, "max_steps": 3, "logging_steps": 1, "save_strategy": "no"}
    trainer = fixtures.train(fixtures.trainer(settings, callbacks=[collector]), "training with your callback")
    logged = [loss for _, loss in fixtures.log_entries(trainer, "loss")]
    if collector.losses != logged:
        raise Wrong(f"in a real 1-process run the Trainer logged {logged}, your callback kept {collector.losses}.")


q1 = Exercise(
    name="10.1",
    answer_name="steps_per_epoch",
    checker=_check_steps,
    hint_text="global batch = per_device_batch x processes; batches per process = ceil(examples / global batch); "
    "then group them by `accumulation`, rounding up.",
    solution_obj=solutions.steps_per_epoch,
    wrong_answers=[solutions.wrong_steps_ignore_processes, solutions.wrong_steps_floor],
)

q2 = Exercise(
    name="10.2",
    answer_name="RankZeroLossCollector",
    checker=_check_collector,
    hint_text="on_log receives `state` and `logs`; test state.is_world_process_zero (the check plays each process "
    "through `state`) before appending logs['loss'].",
    solution_obj=solutions.RankZeroLossCollector,
    wrong_answers=[solutions.WrongCollectorEveryProcess, solutions.WrongCollectorLocalZero],
)
