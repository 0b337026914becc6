"""The small models, datasets and Trainers that the exercise checks share (one place, cached where it can be).

Everything here is built the same way whatever ran before in the notebook: models are initialised under their
own seed (torch's global generator is left as it was), datasets come from seeded generators, and a Trainer's
arguments start from the library's defaults, so a check never imposes a value the learner did not write
except those it names in ``fixed``.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from exercises.checks.core import Wrong, learner_code

_SCRATCH: list[str] = []


def scratch_dir() -> str:
    """A fresh temporary folder, deleted when Python exits."""
    if not _SCRATCH:
        _SCRATCH.append(tempfile.mkdtemp(prefix="course-checks-"))
        atexit.register(shutil.rmtree, _SCRATCH[0], ignore_errors=True)
    return tempfile.mkdtemp(dir=_SCRATCH[0])


@lru_cache(maxsize=1)
def tokenizer() -> Any:
    """The course tokenizer (loaded once)."""
    from helpers.models import load_tokenizer

    return load_tokenizer()


def tiny_model(seed: int = 0, layers: int = 2, vocab_size: int = 100, **config: Any) -> Any:
    """A BERT sequence classifier, 32 wide, dropout off, with random weights drawn under its own ``seed``."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    settings = dict(hidden_size=32, num_attention_heads=2, intermediate_size=64, max_position_embeddings=64)
    settings.update(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=2, **config)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return BertForSequenceClassification(BertConfig(vocab_size=vocab_size, num_hidden_layers=layers, **settings))


def tiny_llama(seed: int = 0, layers: int = 2) -> Any:
    """A Llama sequence classifier (head ``score``), 32 wide, with random weights drawn under its own ``seed``."""
    import torch
    from transformers import LlamaConfig, LlamaForSequenceClassification

    sizes = dict(hidden_size=32, intermediate_size=64, num_attention_heads=2, num_key_value_heads=2)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return LlamaForSequenceClassification(
            LlamaConfig(vocab_size=100, num_hidden_layers=layers, pad_token_id=0, num_labels=2, **sizes)
        )


def tiny_distilbert(seed: int = 0, layers: int = 2) -> Any:
    """A DistilBERT sequence classifier (``pre_classifier`` then ``classifier``), 32 wide, dropout off, built from
    a config (no weights) under its own ``seed``."""
    import torch
    from transformers import DistilBertConfig, DistilBertForSequenceClassification

    sizes = dict(dim=32, hidden_dim=64, n_heads=2, max_position_embeddings=64, dropout=0.0, attention_dropout=0.0)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return DistilBertForSequenceClassification(
            DistilBertConfig(vocab_size=100, n_layers=layers, num_labels=2, seq_classif_dropout=0.0, **sizes)
        )


@lru_cache(maxsize=8)
def random_ids(rows: int = 64, length: int = 12, seed: int = 0) -> Any:
    """Token ids of one length (no padding needed), labels from the second token (about 30 % positive)."""
    import torch
    from datasets import Dataset

    ids = torch.randint(1, 100, (rows, length), generator=torch.Generator().manual_seed(seed))
    labels = (ids[:, 1] > 70).long()
    return Dataset.from_dict(
        {"input_ids": ids.tolist(), "attention_mask": torch.ones_like(ids).tolist(), "labels": labels.tolist()}
    )


@lru_cache(maxsize=2)
def reviews(count: int = 256, max_length: int = 64) -> Any:
    """``count`` training reviews of the course data, tokenized without padding."""
    import datasets

    from helpers.data import load_reviews, select_examples, tokenize_reviews

    shown = datasets.is_progress_bar_enabled()
    datasets.disable_progress_bars()
    try:
        return tokenize_reviews(select_examples(load_reviews()["train"], count), tokenizer(), max_length=max_length)
    finally:
        if shown:
            datasets.enable_progress_bars()


def batch(dataset: Any, rows: int) -> dict[str, Any]:
    """The first ``rows`` rows of a fixed-length dataset as tensors."""
    import torch

    return {key: torch.tensor(value) for key, value in dataset[:rows].items()}


def trainer(
    settings: Mapping[str, Any] | None = None,
    *,
    fixed: Mapping[str, Any] | None = None,
    trainer_class: Any = None,
    model: Any = None,
    train_dataset: Any = None,
    **trainer_kwargs: Any,
) -> Any:
    """A quiet Trainer on :func:`tiny_model` and :func:`random_ids` (by default), CPU.

    Args:
        settings: the learner's ``TrainingArguments`` keywords; anything they leave out keeps the library default.
        fixed: keywords the check needs (``max_steps``...); a learner's different value for one is reported.
        trainer_class: the learner's Trainer subclass (``Trainer`` by default).
        model, train_dataset, trainer_kwargs: passed to the Trainer.
    """
    from transformers import Trainer, TrainingArguments

    from helpers.trainers import quiet

    if not isinstance(settings, Mapping):
        raise Wrong(f"the answer should be a dict of TrainingArguments keywords, got {type(settings).__name__}.")
    clashes = {k: v for k, v in (fixed or {}).items() if k in settings and settings[k] != v}
    if clashes:
        raise Wrong(f"the check runs with {clashes}; leave {sorted(clashes)} out of your dict (or use these values).")
    base = {"output_dir": scratch_dir(), "report_to": "none", "use_cpu": True, "disable_tqdm": True}
    with learner_code("building TrainingArguments from your keywords"):
        args = TrainingArguments(**{**base, **dict(settings), **dict(fixed or {})})
    with learner_code(f"creating your {getattr(trainer_class, '__name__', 'Trainer')}"):
        built = (trainer_class or Trainer)(
            model=model if model is not None else tiny_model(),
            args=args,
            train_dataset=train_dataset if train_dataset is not None else random_ids(),
            **trainer_kwargs,
        )
    return quiet(built)


def train(built: Any, step: str = "training with your answer", **kwargs: Any) -> Any:
    """``built.train(**kwargs)`` with the learner's code in it, without progress bars; returns the Trainer."""
    from transformers.utils import logging

    shown = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        with learner_code(step):
            built.train(**kwargs)
    finally:
        if shown:
            logging.enable_progress_bar()
    return built


def log_entries(built: Any, key: str) -> list[tuple[int, float]]:
    """``(step, value)`` for every log entry of ``built`` that has ``key``."""
    return [(entry["step"], entry[key]) for entry in built.state.log_history if key in entry]
