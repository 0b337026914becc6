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
