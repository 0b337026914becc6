"""A two-input classifier and its data, small enough that a test trains a real Trainer in well under a second.

Shared by the tests of callbacks, control flags and gradients (lessons 05, 06 and 08), with :func:`tiny_trainer`,
the tests' one factory of a small Trainer: ``TinyModel`` takes ``x`` and optional
``labels`` and returns a dict with ``logits`` (and ``loss``), as a Hugging Face model does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn


class TinyModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 2)

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        logits = self.linear(x)
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = nn.functional.cross_entropy(logits, labels)
        return out


def toy_dataset(count: int = 8) -> list[dict[str, torch.Tensor]]:
    """``count`` rows of 4 seeded features, labels alternating 0 and 1."""
    generator = torch.Generator().manual_seed(0)
    return [{"x": torch.randn(4, generator=generator), "labels": torch.tensor(index % 2)} for index in range(count)]


def tiny_trainer(
    tmp_path: Any,
    callbacks: Sequence[Any] = (),
    trainer_class: type | None = None,
    model: Any = TinyModel,
    train_dataset: Any = None,
    quiet: bool = False,
    **keywords: Any,
) -> Any:
    """The tests' one small Trainer: ``model`` (a module, or a class built after seeding; :class:`TinyModel`) on
    ``train_dataset`` (:func:`toy_dataset`), seeded, on the CPU, logging every step, reporting and saving nothing,
    batches of 2, one epoch. ``keywords`` that are ``TrainingArguments`` fields override those settings; the rest
    go to the Trainer (``eval_dataset``, ...). ``quiet`` removes the printer and progress callbacks."""
    from transformers import Trainer, TrainingArguments

    fields = {field.name for field in dataclasses.fields(TrainingArguments)}
    settings: dict[str, Any] = dict(
        output_dir=str(tmp_path),
        per_device_train_batch_size=2,
        num_train_epochs=1,
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        seed=0,
        disable_tqdm=True,
    )
    settings.update({key: value for key, value in keywords.items() if key in fields})
    torch.manual_seed(0)
    trainer = (trainer_class or Trainer)(
        model=model() if isinstance(model, type) else model,
        args=TrainingArguments(**settings),
        train_dataset=toy_dataset() if train_dataset is None else train_dataset,
        callbacks=list(callbacks),
        **{key: value for key, value in keywords.items() if key not in fields},
    )
    if quiet:
        for callback in list(trainer.callback_handler.callbacks):
            if type(callback).__name__ in {"PrinterCallback", "ProgressCallback", "NotebookProgressCallback"}:
                trainer.remove_callback(callback)
    return trainer
