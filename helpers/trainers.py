"""The lessons' short mechanics runs: quiet Trainers, and the small models and data some of them train.

A real training run in a notebook shows the Trainer's own progress table (``NotebookProgressCallback``),
as a learner sees it in their own work. The many short runs that only demonstrate a mechanism (an event, a
flag, a scaling factor) should print nothing: the lesson prints the one line that makes its point.
:func:`quiet` silences a Trainer, :func:`make_trainer` builds a quiet one for a short run, and
:func:`evaluate_with` runs one quiet evaluation with a chosen ``compute_metrics`` (lesson 04's instrument).

Lesson 07's short runs (also run under several processes by lesson 10's tests): :func:`short_runs` gives their
model and review sets, :func:`one_sgd_step` one plain SGD step of any Trainer, :class:`WithLengthHead` the
multi-task model (its target column from :func:`helpers.data.add_length_target`) and :class:`RunningMeans` the
running means of a loss's parts that lesson 07's ``LossPartsTrainer`` logs (lesson 10's exercise checks name it).
These are measuring instruments, not code to copy: the lesson's Trainers are written in the notebook, exported
to ``helpers.lessons.lesson_07``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from transformers.modeling_outputs import SequenceClassifierOutput

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
    """The course model and the small review sets of lesson 07's short runs."""

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
    from helpers.data import add_length_target, load_reviews, select_examples, tokenize_reviews
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
