"""Exercises of lesson 10: steps per epoch on several processes, and a callback that acts on process zero only."""

from __future__ import annotations

import random
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.checks.lesson_05 import misspelled_events_note
from exercises.checks.steps import steps_advice, trainer_steps
from exercises.solutions import lesson_10 as solutions

STEPS_SEED = 101  # the check draws its cases from this seed each time it runs; none is a case the lesson shows


def steps_cases(seed: int = STEPS_SEED) -> list[tuple[int, int, int, int]]:
    """Cases drawn at check time: a smaller last batch, few batches, 1 process, 1 example; the rest at random."""
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
        expected = trainer_steps(*case)
        if yours != expected:
            examples, batch, processes, accumulation = case
            raise Wrong(
                f"{examples} reviews, batch {batch} per process, {processes} process{'es' if processes != 1 else ''}, "
                f"accumulation {accumulation}: the Trainer takes {expected} optimizer steps per epoch, you said "
                f"{yours}. {steps_advice(yours, *case)}"
            )


def _log_as(collector: Any, args: Any, world_zero: bool, local_zero: bool, logs: dict[str, float]) -> None:
    """Call ``on_log`` as the Trainer does on a process with these flags (log_history already ends with it)."""
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
                "collected a loss; only the one world process zero should, or every loss is kept twice (the check "
                "plays each process through `state`; `args` here belongs to this one process)."
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


# ---- 10.3: loss by class, over every process ----

CLASS_SEED = 103
CLASSES = {"loss_negative": 0, "loss_positive": 1}


def _by_class(model: Any, batch: dict[str, Any]) -> dict[str, tuple[float, float]]:
    """Each class's summed cross-entropy over its reviews of the micro-batch, and their number."""
    import torch.nn.functional as F

    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits.float()
    per_review = F.cross_entropy(logits, batch["labels"], reduction="none")
    return {
        name: (float(per_review[batch["labels"] == label].sum()), float((batch["labels"] == label).sum()))
        for name, label in CLASSES.items()
    }


def _class_data(rng: random.Random, rows: int) -> Any:
    """``rows`` reviews whose groups of 4 (one micro-batch) hold 1, 2 or 3 positive ones, drawn."""
    labels = []
    for _ in range(rows // 4):
        group = [1] * rng.randint(1, 3)
        group += [0] * (4 - len(group))
        rng.shuffle(group)
        labels += group
    return (
        fixtures.random_ids(rows, seed=rng.randrange(100, 1000)).remove_columns("labels").add_column("labels", labels)
    )


def _class_trainer(answer: Any, data: Any, learning_rate: float, **settings: Any) -> Any:
    from exercises.checks.by_hand import ByHand

    settings.update(gradient_accumulation_steps=2, max_steps=4, logging_steps=2, logging_first_step=True)
    settings.update(train_sampling_strategy="sequential", save_strategy="no", learning_rate=learning_rate)
    trainer = fixtures.trainer(settings, trainer_class=answer, train_dataset=data)
    trainer.add_callback(ByHand(trainer.get_train_dataloader(), _by_class))
    return trainer


def _hand_and_history(trainer: Any) -> tuple[list[Any], list[dict[str, Any]]]:
    from exercises.checks.by_hand import ByHand

    hand = next(callback for callback in trainer.callback_handler.callbacks if isinstance(callback, ByHand))
    return hand.train, trainer.state.log_history


def _compare_class_logs(history: list[dict[str, Any]], ranks: list[list[Any]], where: str) -> None:
    """Each training log must hold each class's loss over every process's reviews (``ranks``) since the last."""
    from exercises.checks.by_hand import close, merged, training_windows, window_of

    everyone = [measure for train in ranks for measure in train]
    for entry, _, want in training_windows(history, everyone):
        missing = [name for name in CLASSES if name not in entry]
        if missing:
            raise Wrong(
                f"{where}: the training log at step {entry['step']} has no {missing} column: add both to the logs "
                "dict in log() before the Trainer's own log() writes it."
            )
        window, own = window_of(history, entry, everyone), merged(window_of(history, entry, ranks[0]))
        for name in CLASSES:
            if close(entry[name], want[name]):
                continue
            means = [measure[name][0] / measure[name][1] for measure in window]
            per_process = [merged(window_of(history, entry, train)).get(name) for train in ranks]
            if len(ranks) > 1 and None not in per_process and close(entry[name], sum(per_process) / len(ranks)):
                why = "that is the mean of the processes' own means, which weighs a process with few reviews of "
                why += "the class like one with many: add up the sums and the counts over every process (one "
                why += "all-reduce of both, reduction='sum'), then divide."
            elif len(ranks) > 1 and close(entry[name], own[name]):
                why = "that is process 0's reviews alone: add up the sums and the counts over every process (one "
                why += "all-reduce of both, self.accelerator.reduce) before you divide."
            elif close(entry[name], sum(means) / len(means)):
                why = "that is the mean of the micro-batches' means, which weighs a micro-batch with 1 positive review "
                why += (
                    "like one with 3: keep each class's summed loss and its number of reviews, and divide at log time."
                )
            else:
                why = "keep each class's summed loss and number of reviews since the previous log, then start again."
            raise Wrong(
                f"{where}: at step {entry['step']} your {name!r} is {entry[name]!r}; the cross-entropy averaged over "
                f"the {int(sum(measure[name][1] for measure in window))} reviews of that class trained on since the "
                f"previous training log is {want[name]:.5f}: {why}"
            )


def _check_class_loss_trainer(answer: Any) -> None:
    from transformers import Trainer

    from exercises.checks.processes import two_processes

    if not (isinstance(answer, type) and issubclass(answer, Trainer)):
        raise Wrong(f"ClassLossTrainer must be a class that subclasses transformers.Trainer, got {answer!r}.")
    rng = random.Random(CLASS_SEED)
    learning_rate = round(rng.uniform(5e-3, 2e-2), 6)
    one = _class_data(rng, 32)  # 4 steps of 2 micro-batches of 4 on one process
    trainer = fixtures.train(_class_trainer(answer, one, learning_rate, per_device_train_batch_size=4))
    train, history = _hand_and_history(trainer)
    _compare_class_logs(history, [train], "on one process")
    two = _class_data(rng, 64)  # the same steps on each of two processes

    def make(**settings: Any) -> Any:
        return _class_trainer(answer, two, learning_rate, **settings)

    (train_0, history_0), (train_1, _) = two_processes(make, _hand_and_history)
    _compare_class_logs(history_0, [train_0, train_1], "on 2 processes (process 0's log)")


q1 = Exercise(
    answer_name="steps_per_epoch",
    checker=_check_steps,
    hint_text="Global batch = one process's batch x processes; a last, smaller batch counts; accumulation rounds up.",
    solution_obj=solutions.steps_per_epoch,
)

q2 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="RankZeroLossCollector",
    checker=_check_collector,
    hint_text="The state says if this process is the job's process zero (each machine has a local zero); keep losses.",
    solution_obj=solutions.RankZeroLossCollector,
)

q3 = Exercise(
    answer_name="ClassLossTrainer",
    checker=_check_class_loss_trainer,
    hint_text=(
        "A mean over reviews is a sum over a count: note both per class in compute_loss (training only); in log(), "
        "add them over every process (one all-reduce, as lesson 07's RunningMeans), divide, start again."
    ),
    solution_obj=solutions.ClassLossTrainer,
)

bind_exercises(globals())
