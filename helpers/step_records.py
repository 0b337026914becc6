"""Lesson 11's instruments: ``RecordingTrainer`` compares two runs step by step, ``ListCheckpoints`` lists the
checkpoints on disk after each save.

A ``Trainer`` that also records, per optimizer step, the exact loss, the learning rate of its update and the first
word piece of each review in its batch. Lesson 11 compares an interrupted and resumed run with an uninterrupted one
through it (which batches a resume trains on, which learning rate it applies). It is a measuring instrument, not part
of the pattern a learner copies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transformers import Trainer, TrainerCallback


class RecordingTrainer(Trainer):
    """A Trainer that records, per optimizer step (accumulation 1), the exact loss (``step_losses``), the learning
    rate of its update (``step_lrs``) and the first word piece of each review in its batch (``step_batches``), keyed
    by step number.

    Raises:
        ValueError: ``gradient_accumulation_steps`` is above 1 (a step would be recorded once per micro-batch).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.args.gradient_accumulation_steps != 1:
            raise ValueError(
                "RecordingTrainer records one batch per optimizer step: use gradient_accumulation_steps=1 "
                f"(got {self.args.gradient_accumulation_steps})."
            )
        self.step_losses: dict[int, float] = {}
        self.step_batches: dict[int, tuple[int, ...]] = {}
        self.step_lrs: dict[int, float] = {}

    def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> Any:
        loss = super().training_step(model, inputs, num_items_in_batch)
        step = self.state.global_step + 1  # global_step grows after the update
        self.step_losses[step] = float(loss)
        self.step_batches[step] = tuple(inputs["input_ids"][:, 1].tolist())
        self.step_lrs[step] = self.optimizer.param_groups[0]["lr"]
        return loss


class ListCheckpoints(TrainerCallback):
    """After each save, record which ``checkpoint-N`` folders exist in ``output_dir`` (``on_disk``: the sorted
    steps N, keyed by the step of the save). Lesson 11 reads it to see which checkpoints ``save_total_limit``
    keeps."""

    def __init__(self) -> None:
        self.on_disk: dict[int, list[int]] = {}

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        folders = Path(args.output_dir).glob("checkpoint-*")
        self.on_disk[state.global_step] = sorted(int(path.name.split("-")[1]) for path in folders)
