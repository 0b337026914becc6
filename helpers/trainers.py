"""Quiet Trainers for the lessons' mechanics demos.

A real training run in a notebook shows the Trainer's own progress table (``NotebookProgressCallback``),
as a learner sees it in their own work. The many short runs that only demonstrate a mechanism (an event, a
flag, a scaling factor) should print nothing: the lesson prints the one line that makes its point.
:func:`quiet` silences a Trainer, :func:`make_trainer` builds a quiet one for a short run, and
:func:`evaluate_with` runs one quiet evaluation with a chosen ``compute_metrics`` (lesson 04's instrument).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

PRINTING_CALLBACKS = ("PrinterCallback", "ProgressCallback", "NotebookProgressCallback")


def quiet(trainer: Any) -> Any:
    """Remove the callbacks that print progress or log dicts, and return the same Trainer.

    The Trainer installs exactly one of them: ``NotebookProgressCallback`` in a notebook,
    ``ProgressCallback`` in a terminal, or ``PrinterCallback`` when ``disable_tqdm`` is on (which it is by
    default when the transformers log level is above WARNING). Logging itself is untouched:
    ``trainer.state.log_history`` and your own callbacks still receive every log.

    Raises:
        TypeError: ``trainer`` is not a ``transformers.Trainer``.
    """
    from transformers import Trainer

    if not isinstance(trainer, Trainer):
        raise TypeError(f"quiet() takes a transformers.Trainer, got {type(trainer).__name__}; build the Trainer first.")
    for callback in list(trainer.callback_handler.callbacks):
        if type(callback).__name__ in PRINTING_CALLBACKS:
            trainer.remove_callback(callback)
    return trainer


def make_trainer(
    name: str,
    *,
    model: Any = None,
    settings: dict[str, Any] | None = None,
    callbacks: Any = (),
    trainer_class: Any = None,
    **keywords: Any,
) -> Any:
    """The course's quiet short-run factory: a silent Trainer for a mechanics run in ``runs/<name>``.

    Tucked cells and tests use it to make the many short runs a lesson proves itself with; a lesson's shown
    cells write ``TrainingArguments(...)`` and ``Trainer(...)`` out instead. Defaults: ``report_to="none"``,
    ``save_strategy="no"``, ``seed=helpers.SEED`` and the active profile's precision. ``settings`` and keyword arguments
    that are ``TrainingArguments`` fields override them; other keywords go to the Trainer. ``model`` is a
    module or a function that builds one (called once per Trainer). The Trainer is passed through
    :func:`quiet`: no progress table, no printed dicts; logs are kept.
    """
    import dataclasses

    import torch
    from transformers import Trainer, TrainingArguments

    from helpers.context import active_profile, run_dir
    from helpers.device import SEED

    fields = {f.name for f in dataclasses.fields(TrainingArguments)}
    arguments: dict[str, Any] = dict(report_to="none", save_strategy="no", seed=SEED)
    arguments.update(active_profile().precision_kwargs())
    arguments.update(settings or {})
    to_trainer = {}
    for key, value in keywords.items():  # a TrainingArguments field overrides settings
        (arguments if key in fields else to_trainer)[key] = value
    if "output_dir" not in arguments:
        arguments["output_dir"] = str(run_dir(name))
    if callable(model) and not isinstance(model, torch.nn.Module):
        model = model()  # a function that builds the model: a fresh one per Trainer
    args = TrainingArguments(**arguments)
    cls = trainer_class or Trainer
    return quiet(cls(model=model, args=args, callbacks=[*callbacks], **to_trainer))


def evaluate_with(
    fn: Callable[..., dict[str, float]] | None,
    model: Any,
    data: Any,
    collator: Any = None,
    preprocess: Callable[[Any, Any], Any] | None = None,
    ignore: list[str] | None = None,
    **settings: Any,
) -> dict[str, float]:
    """One silent evaluation with ``compute_metrics=fn``; ``settings`` go to ``TrainingArguments``.

    Defaults: ``per_device_eval_batch_size=128``, ``report_to="none"``, bf16 where the GPU supports it.

    Args:
        fn: the ``compute_metrics`` to call (``None``: the loss only).
        model: the model to evaluate.
        data: the evaluation dataset (with labels, for metrics).
        collator: the data collator (``None``: the Trainer's default).
        preprocess: ``preprocess_logits_for_metrics``.
        ignore: ``ignore_keys`` for ``evaluate`` (model outputs to leave out of the predictions).

    Raises:
        TypeError: a keyword of ``settings`` is not a ``TrainingArguments`` field (raised by transformers).
    """
    import torch
    from transformers import Trainer, TrainingArguments

    from helpers.context import run_dir

    bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    defaults: dict[str, Any] = {"per_device_eval_batch_size": 128, "bf16": bf16, "report_to": "none"}
    args = TrainingArguments(output_dir=str(run_dir("eval_runs")), **{**defaults, **settings})
    evaluator = Trainer(
        model=model,
        args=args,
        eval_dataset=data,
        data_collator=collator,
        compute_metrics=fn,
        preprocess_logits_for_metrics=preprocess,
    )
    return quiet(evaluator).evaluate(ignore_keys=ignore)
