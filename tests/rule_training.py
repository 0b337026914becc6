"""Quiet, tiny Trainers for the rule tests (tests/lesson_NN/test_rules.py): each trains in well under a second on
one thread, on ``TinyModel`` (a forward without ``**kwargs``) or a BERT or Llama classifier built from a config, so
a rule is tried on the cases a learner meets beyond the lesson's own run (uneven last micro-batch, accumulation,
another model)."""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
from datasets import Dataset
from tiny_training import TinyModel, toy_dataset
from transformers import Trainer, TrainerCallback, TrainingArguments

from exercises.checks import fixtures

_QUIET = {"PrinterCallback", "ProgressCallback", "NotebookProgressCallback"}
_FIELDS = {field.name for field in dataclasses.fields(TrainingArguments)}


def arguments(tmp_path: Any, **settings: Any) -> TrainingArguments:
    """TrainingArguments for a quiet CPU run: batch 2, no logging, evaluation or saving unless asked."""
    base = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=2,
        num_train_epochs=1,
        logging_strategy="no",
        eval_strategy="no",
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    base.update(settings)
    return TrainingArguments(**base)


def trainer(
    tmp_path: Any,
    callbacks: list[TrainerCallback] | None = None,
    rows: int = 16,
    model: Any = None,
    train_dataset: Any = None,
    trainer_class: type = Trainer,
    model_init: Any = None,
    **settings: Any,
) -> Trainer:
    """A Trainer on ``TinyModel`` and ``rows`` toy rows (or the ``model`` and ``train_dataset`` given); ``settings``
    that are TrainingArguments fields go to the arguments, the others to the Trainer (``model_init`` replaces the
    model)."""
    torch.manual_seed(0)
    built = trainer_class(
        model=None if model_init is not None else model if model is not None else TinyModel(),
        model_init=model_init,
        args=arguments(tmp_path, **{key: value for key, value in settings.items() if key in _FIELDS}),
        train_dataset=train_dataset if train_dataset is not None else toy_dataset(rows),
        callbacks=callbacks,
        **{key: value for key, value in settings.items() if key not in _FIELDS},
    )
    for callback in list(built.callback_handler.callbacks):
        if type(callback).__name__ in _QUIET:
            built.remove_callback(callback)
    return built


class Events(TrainerCallback):
    """Records each event's name with ``state.global_step``, and what a test asks for at an event."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []
        self.max_steps_at_begin: int | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.max_steps_at_begin = state.max_steps
        self.seen.append(("on_train_begin", state.global_step))

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_") and name != "on_train_begin":
            seen = object.__getattribute__(self, "seen")

            def record(args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                seen.append((name, state.global_step))

            return record
        return object.__getattribute__(self, name)

    def count(self, event: str) -> int:
        return sum(name == event for name, _ in self.seen)

    def names(self) -> list[str]:
        return [name for name, _ in self.seen]


MODELS = {"bert": fixtures.tiny_model, "distilbert": fixtures.tiny_distilbert, "llama": fixtures.tiny_llama}


def ids(rows: int) -> Dataset:
    return fixtures.random_ids(rows=rows, length=10, seed=1)


def first_step(
    tmp_path: Any, model: str, rows: int, batch: int, accumulation: int, flag: bool | None
) -> tuple[float, float]:
    """The logged loss and grad_norm of the first update over ``rows`` rows of ``model`` (a key of MODELS), with
    ``trainer.model_accepts_loss_kwargs`` set to ``flag`` unless it is None."""
    run = trainer(
        tmp_path,
        model=MODELS[model](seed=0),
        train_dataset=ids(rows),
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        max_steps=1,
        logging_strategy="steps",
        logging_steps=1,
        learning_rate=1e-3,
        max_grad_norm=0.0,
    )
    if flag is not None:
        run.model_accepts_loss_kwargs = flag
    run.train()
    entry = next(entry for entry in run.state.log_history if "grad_norm" in entry)
    return entry["loss"], entry["grad_norm"]
