"""Exercises of lesson 17 (old Trainer code on 5.x). Each check builds or trains a tiny Trainer with your answer."""

from __future__ import annotations

import dataclasses
import inspect
import math
import random
from collections.abc import Mapping
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.checks.lesson_05 import misspelled_events_note
from exercises.solutions import lesson_17 as solutions


def _check_ported(settings: Any) -> None:
    from transformers import TrainingArguments

    from check_old_code.old_arguments import port_kwargs

    if not isinstance(settings, Mapping):
        raise Wrong(f"the answer should be a dict of TrainingArguments keywords, got {type(settings).__name__}.")
    if "output_dir" in settings:
        raise Wrong("leave output_dir out of your dict: the check chooses the folder.")
    fields = {field.name for field in dataclasses.fields(TrainingArguments)}
    old = sorted(name for name in settings if name not in fields)
    if old:
        ported = []
        for name in old:
            try:
                new, _ = port_kwargs({name: settings[name]})
            except ValueError:
                ported.append(f"{name} (not an argument of any release: check the spelling)")
                continue
            ported.append(f"{name} -> {', '.join(f'{k}={v!r}' for k, v in new.items()) or 'delete it'}")
        raise Wrong(
            f"{', '.join(old)}: the installed TrainingArguments has no such field, and building it raises TypeError. "
            f"What each became (section 1's map): {'; '.join(ported)}."
        )
    # A run length drawn when the check runs, so that a warmup written as a count for one length fails.
    steps = random.Random(16).randint(11, 47)
    trainer = fixtures.trainer(settings, fixed={"max_steps": steps}, eval_dataset=fixtures.random_ids(8, seed=3))
    args = trainer.args
    if args.eval_strategy != "steps":
        raise Wrong(
            f"the Trainer evaluates with eval_strategy={args.eval_strategy.value!r}, eval_steps={args.eval_steps}; "
            "the old call evaluated every 5 updates. evaluation_strategy is called eval_strategy in 5.x."
        )
    if args.eval_steps != 5:
        kept = "you left eval_steps out, so it" if "eval_steps" not in settings else "it"
        raise Wrong(
            f"eval_strategy is right, but the Trainer evaluates every {args.eval_steps:g} updates: {kept} follows "
            "logging_steps. The old call evaluated every 5 updates: keep eval_steps=5 beside eval_strategy."
        )
    if args.per_device_train_batch_size != 8:
        raise Wrong(
            f"per_device_train_batch_size is {args.per_device_train_batch_size}; the old call put 8 reviews per "
            "device in a batch. per_gpu_train_batch_size was removed: per_device_train_batch_size carries it."
        )
    warmup, wanted = args.get_warmup_steps(steps), math.ceil(0.2 * steps)
    if warmup != wanted:
        raise Wrong(
            f"on a run of {steps} updates your warmup lasts {warmup} updates, not {wanted} (20% of the run). "
            "warmup_ratio was removed: pass the fraction as warmup_steps (a float below 1 is a fraction of the run)."
        )
    if settings.get("use_cpu") is not True:
        raise Wrong("no_cuda=True kept the run on the CPU; its 5.x name is use_cpu=True.")
    if args.train_sampling_strategy != "group_by_length":
        raise Wrong(
            f"train_sampling_strategy is {args.train_sampling_strategy!r}: batches are not grouped by length. "
            "group_by_length=True is train_sampling_strategy='group_by_length' in 5.x."
        )
    with learner_code("creating the optimizer your keywords choose"):
        optimizer = trainer.create_optimizer()
    if type(optimizer).__name__ != "Adafactor":
        raise Wrong(
            f"the Trainer builds {type(optimizer).__name__}, not Adafactor. adafactor=True was removed: "
            "optim='adafactor' chooses it."
        )


def _check_epoch_recorder(answer: Any) -> None:
    from transformers import TrainerCallback

    if not (inspect.isclass(answer) and issubclass(answer, TrainerCallback)):
        raise Wrong(f"EpochRecorder should be a class that subclasses TrainerCallback, got {answer!r}.")
    # The number of epochs is drawn when the check runs, so a list written out for one run fails.
    epochs = random.Random(161).randint(2, 4)
    with learner_code("creating EpochRecorder()"):
        recorder = answer()
    trainer = fixtures.trainer(
        {},
        fixed={"num_train_epochs": epochs, "eval_strategy": "epoch", "per_device_train_batch_size": 8},
        train_dataset=fixtures.random_ids(24, seed=16),
        eval_dataset=fixtures.random_ids(8, seed=17),
        callbacks=[recorder],
    )
    fixtures.train(trainer, "training with your EpochRecorder")
    wanted_epochs = [float(epoch) for epoch in range(1, epochs + 1)]
    wanted_losses = [value for _, value in fixtures.log_entries(trainer, "eval_loss")]
    seen_epochs, seen_losses = getattr(recorder, "epochs", None), getattr(recorder, "eval_losses", None)
    if not isinstance(seen_epochs, list) or not isinstance(seen_losses, list):
        raise Wrong("each instance needs two lists, `epochs` and `eval_losses` (create them in __init__).")
    if seen_epochs != wanted_epochs:
        raise Wrong(
            f"after {epochs} epochs, self.epochs is {seen_epochs}, not {wanted_epochs}: append state.epoch once at "
            "the end of each epoch, in on_epoch_end."
        )
    if len(seen_losses) != len(wanted_losses) or any(
        not isinstance(mine, float) or abs(mine - true) > 1e-6 for mine, true in zip(seen_losses, wanted_losses)
    ):
        raise Wrong(
            f"self.eval_losses is {seen_losses}; the {len(wanted_losses)} evaluations gave "
            f"{[round(loss, 4) for loss in wanted_losses]}. Read eval_loss from the metrics keyword of on_evaluate."
        )
    with learner_code("creating a second EpochRecorder()"):
        second = answer()
    if getattr(second, "epochs", None) or getattr(second, "eval_losses", None):
        raise Wrong(
            "a new EpochRecorder already holds the first one's records: the lists belong to the class. "
            "Create them in __init__ (self.epochs = []), so each instance has its own."
        )


q1 = Exercise(
    answer_name="ported_arguments",
    checker=_check_ported,
    hint_text=(
        "Port each old keyword with section 1's map (or port_kwargs): evaluation_strategy is eval_strategy, "
        "per_gpu_train_batch_size is per_device_train_batch_size, warmup_ratio is a fractional warmup_steps, "
        "no_cuda is use_cpu, group_by_length=True is train_sampling_strategy='group_by_length', and adafactor=True "
        "is optim='adafactor'."
    ),
    solution_obj=solutions.ported_arguments,
)

q2 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="EpochRecorder",
    checker=_check_epoch_recorder,
    hint_text=(
        "The example's methods are not events: the end of an epoch is on_epoch_end, an evaluation is on_evaluate "
        "(its metrics arrive as a keyword argument). Make both lists in __init__."
    ),
    solution_obj=solutions.EpochRecorder,
)

bind_exercises(globals())
