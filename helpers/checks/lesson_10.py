"""Exercises of lesson 10: steps per epoch on several processes, and a callback that acts on process zero only."""

from __future__ import annotations

import math
import random
from typing import Any

from helpers.checks import fixtures
from helpers.checks.core import Exercise, Wrong, bind_exercises, learner_code
from helpers.checks.lesson_05 import misspelled_events_note
from helpers.solutions import lesson_10 as solutions


def _trainer_steps(examples: int, per_device_batch: int, processes: int, accumulation: int) -> int:
    """The Trainer's own count (trainer.py, ``num_update_steps_per_epoch``), with the batches one process reads."""
    batches_per_process = math.ceil(examples / (per_device_batch * processes))
    return max(batches_per_process // accumulation + int(batches_per_process % accumulation > 0), 1)


STEPS_SEED = 101  # the check draws its cases from this seed each time it runs; none is a case the lesson shows


def steps_cases(seed: int = STEPS_SEED) -> list[tuple[int, int, int, int]]:
    """``(examples, per_device_batch, processes, accumulation)`` cases drawn at check time: always one whose last
    batch is smaller, one with fewer batches per process than accumulation steps, one with a single process and
    one with a single example; the rest at random."""
    rng = random.Random(seed)
    batch, processes, accumulation = rng.randint(3, 16), rng.randint(2, 8), rng.randint(2, 4)
    ragged = batch * processes * rng.randint(3, 9) + rng.randint(1, batch * processes - 1)
    cases = [
        (ragged, batch, processes, 1),
        (rng.randint(1, batch * processes * (accumulation - 1)), batch, processes, accumulation),
        (rng.randint(50, 900), rng.randint(2, 32), 1, rng.randint(1, 4)),
        (1, rng.randint(1, 32), rng.randint(1, 8), rng.randint(1, 4)),
    ]
    cases += [(rng.randint(1, 5000), rng.randint(1, 64), rng.randint(1, 16), rng.randint(1, 8)) for _ in range(120)]
    return cases


def _check_steps(answer: Any) -> None:
    if not callable(answer):
        raise Wrong(
            "steps_per_epoch should be a function (examples, per_device_batch, processes, accumulation) -> int."
        )
    for case in steps_cases():
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


def _log_as(collector: Any, args: Any, world_zero: bool, local_zero: bool, logs: dict[str, float]) -> None:
    """Call ``on_log`` as the Trainer does on a process with these flags: a real ``TrainerState`` whose
    ``log_history`` already ends with this log (``Trainer.log`` appends it before the event)."""
    from transformers import TrainerControl, TrainerState

    state = TrainerState(global_step=1, max_steps=3)
    state.is_world_process_zero, state.is_local_process_zero = world_zero, local_zero
    state.log_history.append({**logs, "step": state.global_step})
    collector.on_log(args, state, TrainerControl(), logs=dict(logs))


def _check_collector(callback_class: Any) -> None:
    from transformers import TrainerCallback, TrainingArguments

    if not (isinstance(callback_class, type) and issubclass(callback_class, TrainerCallback)):
        raise Wrong("RankZeroLossCollector should be a class that subclasses transformers.TrainerCallback.")
    args = TrainingArguments(output_dir=fixtures.scratch_dir(), use_cpu=True, report_to="none")
    with learner_code("creating RankZeroLossCollector()"):
        collector = callback_class()
    if not isinstance(getattr(collector, "losses", None), list):
        raise Wrong("give the callback a list attribute `losses`, set in __init__.")
    for world_zero, local_zero in [(False, False), (False, True)]:  # rank 1 of one machine; rank 0 of machine 2
        with learner_code("calling your on_log as another process"):
            _log_as(collector, args, world_zero, local_zero, {"loss": 0.5})
        if collector.losses:
            raise Wrong(
                f"a process with is_world_process_zero={world_zero}, is_local_process_zero={local_zero} "
                "collected a loss; only the one world process zero should, or every loss is kept twice. The "
                "check plays each process through `state`, as the exercise asks you to decide from it (`args` "
                "here belongs to this one process)."
            )
    with learner_code("calling your on_log as process zero"):
        _log_as(collector, args, True, True, {"learning_rate": 1e-4, "eval_loss": 0.4})
        _log_as(collector, args, True, True, {"loss": 0.25, "grad_norm": 1.0})
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
    answer_name="steps_per_epoch",
    checker=_check_steps,
    hint_text="global batch = per_device_batch x processes; batches per process = ceil(examples / global batch); "
    "then group them by `accumulation`, rounding up.",
    solution_obj=solutions.steps_per_epoch,
)

q2 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="RankZeroLossCollector",
    checker=_check_collector,
    hint_text="on_log receives `state` and `logs`; test state.is_world_process_zero (the check plays each process "
    "through `state`) before appending logs['loss'].",
    solution_obj=solutions.RankZeroLossCollector,
)

bind_exercises(globals())
