"""Lesson 07's instrument for its short runs: the course model and the small review sets they train on
(:func:`short_runs`), one plain SGD step of a Trainer (:func:`one_sgd_step`), the multi-task model
(:class:`WithLengthHead`, with :func:`add_length_target` for its target column) and the running means of a loss's
parts (:class:`RunningMeans`, which lesson 07's ``LossPartsTrainer`` logs with).

They are measuring instruments, not code to copy: the lesson's Trainers (its pattern ``WeightedLossTrainer``, and
the loss-scaling recipes its appendix compares) are written in the notebook, exported to ``helpers.lessons.lesson_07``.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from transformers.modeling_outputs import SequenceClassifierOutput


def one_sgd_step(
    trainer_class: Any, make_model: Any, data: Any, batch_size: int, accumulation: int, **keywords: Any
) -> Any:
    """One plain SGD step (learning rate 0.01, no clipping) on all of ``data`` as ``batch_size`` x accumulation
    ``accumulation``, the model built by ``make_model()`` after seeding 0: its logged ``[loss, grad_norm]`` as a
    NumPy array. ``keywords`` go to the Trainer (``class_weights``, ``processing_class``, ...).

    With 10 rows as 4 x 3 the step's micro-batches hold 4, 4 and 2 rows: the case where a mean per micro-batch
    and a sum over the whole batch's count part ways (lesson 07, section 5).

    Raises:
        ValueError: ``data`` holds more rows than one step takes (``batch_size * accumulation``).
    """
    import tempfile

    import numpy as np
    from transformers import TrainingArguments, set_seed

    from helpers.trainers import quiet

    if len(data) > batch_size * accumulation:
        raise ValueError(
            f"{len(data)} rows need more than one step of {batch_size} x {accumulation}; pass at most "
            f"{batch_size * accumulation} rows, so that the step covers all of them."
        )
    set_seed(0)
    with tempfile.TemporaryDirectory(prefix="one-sgd-step-") as folder:  # nothing is saved there
        args = TrainingArguments(
            output_dir=folder,
            per_device_train_batch_size=batch_size,
            gradient_accumulation_steps=accumulation,
            max_steps=1,
            optim="sgd",
            max_grad_norm=0.0,
            learning_rate=0.01,
            logging_steps=1,
            report_to="none",
            save_strategy="no",
            seed=0,
        )
        trainer = trainer_class(model=make_model(), args=args, train_dataset=data, **keywords)
        quiet(trainer).train()
    log = trainer.state.log_history[0]
    return np.array([log["loss"], log["grad_norm"]])


def add_length_target(dataset: Any, reference_texts: Any) -> Any:
    """``dataset`` (with a ``text`` column) plus ``length_target``: the log of each review's word count,
    standardised by the mean and spread of ``reference_texts``."""
    log_counts = np.log([len(text.split()) for text in reference_texts])
    mean, spread = float(log_counts.mean()), float(log_counts.std())
    return dataset.map(lambda row: {"length_target": (math.log(len(row["text"].split())) - mean) / spread})


@dataclass
class LengthOutput(SequenceClassifierOutput):
    """The classifier's outputs plus ``predicted_length`` (a model output type of its own: DDP takes outputs
    apart and rebuilds them by their fields)."""

    predicted_length: torch.Tensor | None = None


class WithLengthHead(torch.nn.Module):
    """A sequence classifier and a length head on its first token's last hidden state, run together:
    ``forward`` returns a :class:`LengthOutput`."""

    def __init__(self, classifier: Any) -> None:
        super().__init__()
        self.base = classifier
        self.length_head = torch.nn.Linear(classifier.config.hidden_size, 1)
        self.config = classifier.config

    def forward(
        self, input_ids: Any, attention_mask: Any = None, token_type_ids: Any = None, labels: Any = None
    ) -> LengthOutput:
        outputs = self.base(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
            labels=labels,
            output_hidden_states=True,
        )
        first_token = outputs.hidden_states[-1][:, 0]
        return LengthOutput(
            loss=outputs.loss, logits=outputs.logits, predicted_length=self.length_head(first_token).squeeze(-1)
        )


class RunningMeans:
    """Running sums of named scalar tensors and their count; ``pop_means`` averages them over every process
    (one all-reduce) and starts again."""

    def __init__(self) -> None:
        self.sums: dict[str, Any] = {}
        self.count = 0

    def add(self, values: dict[str, Any]) -> None:
        """Add each named scalar tensor (detached, in float32) to its running sum, and count one more call."""
        for name, value in values.items():
            self.sums[name] = self.sums.get(name, 0.0) + value.detach().float()
        self.count += 1

    def pop_means(self, accelerator: Any, prefix: str = "") -> dict[str, float]:
        """Each name's mean over every ``add`` since the last call, on all processes."""
        names = sorted(self.sums)
        count = torch.tensor(float(self.count), device=accelerator.device)
        stacked = torch.stack([*(self.sums[name] for name in names), count])
        totals = accelerator.reduce(stacked, reduction="sum")
        self.sums, self.count = {}, 0
        means = totals[:-1] / totals[-1]
        return {f"{prefix}{name}": float(mean) for name, mean in zip(names, means)}


@dataclass
class ShortRuns:
    """The course model and the small review sets of lesson 07's short runs (an instrument)."""

    tokenizer: Any
    reviews: Any  # the course reviews, every split
    max_length: int  # tokens kept per review
    base_model: Any  # the course classifier, no dropout, word embeddings frozen
    train: Any  # the mechanics runs' reviews, tokenized
    aux_train: Any  # with ``length_target`` (section 4)
    aux_validation: Any

    def tokenized(self, count: int, seed: int = 2, split: str = "train") -> Any:
        """``count`` reviews of ``split`` picked with ``seed``, tokenized."""
        from helpers.data import select_examples, tokenize_reviews

        return tokenize_reviews(select_examples(self.reviews[split], count, seed=seed), self.tokenizer, self.max_length)

    def model(self) -> Any:
        """A fresh copy of the base model: every run starts from the same weights."""
        return copy.deepcopy(self.base_model)

    def multitask_model(self) -> WithLengthHead:
        """The base model with a length head, seeded so that its head starts the same each time."""
        from helpers.device import seed_everything

        seed_everything(0)
        return WithLengthHead(self.model())


def short_runs(profile: Any) -> ShortRuns:
    """Lesson 07's short runs' model and data for ``profile`` (``demo_layers`` encoder layers, ``demo_examples``
    reviews of half ``max_length`` tokens), seeded."""
    from helpers.data import load_reviews, select_examples, tokenize_reviews
    from helpers.device import seed_everything
    from helpers.models import load_model, load_tokenizer

    tokenizer, reviews, max_length = load_tokenizer(), load_reviews(), profile.max_length // 2
    train = tokenize_reviews(select_examples(reviews["train"], profile.demo_examples), tokenizer, max_length)
    seed_everything(0)
    base_model = load_model(num_layers=profile.demo_layers)
    for module in base_model.modules():
        if isinstance(module, torch.nn.Dropout):
            module.p = 0.0  # same inputs, same loss: the comparisons are exact
    base_model.bert.embeddings.word_embeddings.weight.requires_grad_(False)  # faster runs

    def length_reviews(split: str, count: int) -> Any:
        rows = add_length_target(select_examples(reviews[split], count, seed=1), reviews["train"]["text"])
        return tokenize_reviews(rows, tokenizer, max_length)

    aux_train = length_reviews("train", 4 * profile.demo_examples)
    aux_validation = length_reviews("validation", profile.demo_examples)
    return ShortRuns(tokenizer, reviews, max_length, base_model, train, aux_train, aux_validation)
