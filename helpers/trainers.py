"""Quiet Trainers for the lessons' mechanics demos.

A real training run in a notebook shows the Trainer's own progress table (``NotebookProgressCallback``),
as a learner sees it in their own work. The many short runs that only demonstrate a mechanism (an event, a
flag, a scaling factor) should print nothing: the lesson prints the one line that makes its point.
"""

from __future__ import annotations

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
