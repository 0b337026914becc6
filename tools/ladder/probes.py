"""The ladder's probes: one small run per claim, written to run unchanged on every transformers release of the ladder.

This file runs inside a ladder environment (``.venv-ladder/<version>``, made by ``tools/ladder/``), where the
installed transformers may be anything from the oldest rung to the course's pin, so it imports nothing from the
course (no ``helpers``) and only the standard library, torch and transformers. Everything is offline: a one-layer
BERT built from a config and a word-level tokenizer built in memory; nothing is read from the Hub.

``python tools/ladder/probes.py OUT.json`` runs every probe and writes, for each, a verdict (``holds``,
``does not hold`` or ``cannot run``) and the evidence line that decided it, plus an inventory of the release
(``TrainingArguments`` fields, ``Trainer`` method signatures, ``TrainerCallback`` events) that
``check_old_code`` reads. ``PROBES`` (the registry) can be read without importing transformers:
``tools/ladder/`` does, with any Python.

A probe returns ``(holds, evidence)``. It raises :class:`CannotRun` when the release lacks what the claim is about
(an argument, a method); any other exception is recorded as ``cannot run`` with its type and message, so one broken
probe never stops the others, and the evidence says why.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import inspect
import io
import json
import logging
import platform
import re
import sys
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

HOLDS, DOES_NOT_HOLD, CANNOT_RUN = "holds", "does not hold", "cannot run"
VERDICTS = (HOLDS, DOES_NOT_HOLD, CANNOT_RUN)


class CannotRun(Exception):
    """The release has nothing to run this claim on (the argument or method does not exist there)."""


@dataclass(frozen=True)
class Probe:
    """One claim and the function that tests it.

    Attributes:
        id: a stable key (the results file and the page use it).
        claim: the claim, worded so that ``holds`` means the claim is true on that release.
        source: who made the claim: a source post's short name (README, "Sources"), or "course" for a statement of
            the lessons or of the learners' pain points.
        where: the lesson and section (or claim box) that shows it on the pinned release, e.g. ``"07 §6"``.
        function: the probe itself.
    """

    id: str
    claim: str
    source: str
    where: str
    function: Callable[[], tuple[bool, str]]


PROBES: list[Probe] = []


def probe(id: str, claim: str, source: str, where: str) -> Callable:
    def register(function: Callable[[], tuple[bool, str]]) -> Callable[[], tuple[bool, str]]:
        if any(existing.id == id for existing in PROBES):
            raise ValueError(f"two probes are called {id!r}")
        PROBES.append(Probe(id, claim, source, where, function))
        return function

    return register


# ---------------------------------------------------------------------------------------------------------------
# Small, version-agnostic building blocks
# ---------------------------------------------------------------------------------------------------------------
def _release_facts():
    """``check_old_code/release_facts.py``, loaded by path: the rules the checker reads releases by (standard
    library only, so it loads in any ladder environment, where the course's packages are not installed)."""
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "check_old_code" / "release_facts.py"
    spec = importlib.util.spec_from_file_location("ladder_release_facts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


RELEASE_FACTS = _release_facts()


def argument_choices() -> dict[str, list[str]]:
    """The values each enum-valued TrainingArguments field of the release accepts: ``{"optim": [...], ...}``."""
    import transformers.training_args as module

    return RELEASE_FACTS.argument_choices(module, field_names())


def enum_members() -> dict[str, dict[str, str]]:
    """The members of the enum-valued fields' enums, by name: ``{"OptimizerNames": {"ADAMW_HF": "adamw_hf"}}``."""
    import transformers.training_args as module

    return RELEASE_FACTS.enum_members(module)


VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] + [f"w{i}" for i in range(60)]
_TEMP = tempfile.TemporaryDirectory(prefix="ladder-")


def _folder(name: str) -> str:
    path = Path(_TEMP.name) / name
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


def field_names() -> set[str]:
    from transformers import TrainingArguments

    return {field.name for field in dataclasses.fields(TrainingArguments)}


def eval_key() -> str:
    """``eval_strategy`` where the release has it, else the 4.x ``evaluation_strategy``."""
    return "eval_strategy" if "eval_strategy" in field_names() else "evaluation_strategy"


def tiny_model(seed: int = 0, num_labels: int = 2):
    """A one-layer BERT classifier from a config (no weights to load), dropout off, seeded."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        num_labels=num_labels,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return BertForSequenceClassification(config)


class ListDataset:
    """A map-style dataset of dicts (a torch Dataset by duck typing, so no ``datasets`` package is needed)."""

    def __init__(self, rows: list[dict]):
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> dict:
        return dict(self.rows[index])


def examples(count: int = 16, length: int = 8, seed: int = 0, variable: bool = False) -> ListDataset:
    """``count`` reviews of ``length`` token ids (or 3 to ``length`` when ``variable``), labels 0/1, seeded."""
    import random

    rng = random.Random(seed)
    rows = []
    for _ in range(count):
        size = rng.randint(3, length) if variable else length
        ids = [2] + [rng.randrange(4, len(VOCAB)) for _ in range(size - 2)] + [3]
        rows.append({"input_ids": ids, "attention_mask": [1] * size, "labels": rng.randint(0, 1)})
    return ListDataset(rows)


def tiny_tokenizer():
    """A word-level fast tokenizer over ``VOCAB``, built in memory."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(WordLevel(vocab={word: i for i, word in enumerate(VOCAB)}, unk_token="[UNK]"))
    backend.pre_tokenizer = Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="[PAD]", unk_token="[UNK]")


def arguments(name: str, **overrides):
    """TrainingArguments for a silent short CPU run; ``overrides`` win."""
    from transformers import TrainingArguments

    settings = dict(
        output_dir=_folder(name),
        per_device_train_batch_size=4,
        per_device_eval_batch_size=4,
        max_steps=2,
        learning_rate=1e-3,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=0,
        disable_tqdm=True,
    )
    settings.update(overrides)
    return TrainingArguments(**settings)


def quiet(trainer):
    """Remove the progress display and the printer from one Trainer, so a probe prints nothing."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    for callback in (PrinterCallback, ProgressCallback):
        trainer.remove_callback(callback)
    with contextlib.suppress(ImportError):
        from transformers.utils.notebook import NotebookProgressCallback

        trainer.remove_callback(NotebookProgressCallback)
    return trainer


def make_trainer(name: str, trainer_class=None, model=None, train_dataset=None, callbacks=(), args=None, **keywords):
    from transformers import Trainer

    trainer_keywords = {key: keywords.pop(key) for key in list(keywords) if key in _TRAINER_KEYWORDS}
    if model is None and "model_init" not in trainer_keywords:
        model = tiny_model()
    trainer = (trainer_class or Trainer)(
        model=model,
        args=args if args is not None else arguments(name, **keywords),
        train_dataset=train_dataset if train_dataset is not None else examples(),
        callbacks=list(callbacks),
        **trainer_keywords,
    )
    return quiet(trainer)


_TRAINER_KEYWORDS = {
    "eval_dataset",
    "compute_metrics",
    "data_collator",
    "tokenizer",
    "processing_class",
    "compute_loss_func",
    "model_init",
    "optimizers",
}


def trainer_accepts(keyword: str) -> bool:
    from transformers import Trainer

    return keyword in inspect.signature(Trainer.__init__).parameters


def losses(trainer) -> list[float]:
    return [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]


def callback_base():
    from transformers import TrainerCallback

    return TrainerCallback


def event_names() -> list[str]:
    return sorted(name for name in vars(callback_base()) if name.startswith("on_"))


def accepts_argument(name: str, value) -> tuple[bool, str]:
    """Whether ``TrainingArguments(name=value)`` is accepted, with what it said (deprecation warnings)."""
    heard = _Heard()
    try:
        with heard:
            arguments(f"argument_{name}", **{name: value})
    except TypeError as error:
        return False, f"TypeError: {_line(error)}"
    said = heard.summary()
    return True, f"accepted{'; it warns: ' + said if said else ' without a warning'}"


class _Heard(logging.Handler):
    """Collects Python warnings and transformers log records (WARNING and above) inside a ``with`` block."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def __enter__(self):
        self._catch = warnings.catch_warnings(record=True)
        self._caught = self._catch.__enter__()
        warnings.simplefilter("always")
        self._logger = logging.getLogger("transformers")
        self._level = self._logger.level
        self._logger.setLevel(logging.WARNING)
        self._logger.addHandler(self)
        return self

    def __exit__(self, *exc) -> None:
        self._logger.removeHandler(self)
        self._logger.setLevel(self._level)
        self.lines.extend(str(warning.message) for warning in self._caught)
        self._catch.__exit__(*exc)

    def summary(self) -> str:
        relevant = [line for line in self.lines if "deprecat" in line.lower() or "removed" in line.lower()]
        return _line(relevant[0]) if relevant else ""


def _line(text) -> str:
    """The first line of a message, without terminal colours, at most 160 characters."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", str(text)).strip()
    first = plain.splitlines()[0] if plain else ""
    return first if len(first) <= 160 else first[:157] + "..."


def _signature(function) -> str:
    return ", ".join(list(inspect.signature(function).parameters)[1:])


# ---------------------------------------------------------------------------------------------------------------
# Signatures the lessons teach (lessons 01, 05, 07, 08)
# ---------------------------------------------------------------------------------------------------------------
@probe(
    "training_step_two_arguments",
    "A `training_step(self, model, inputs)` override (4.8.2's signature) trains.",
    "Short customisation post; Long customisation post",
    "08 §1 (PrintGradientTrainer, GradientMonitorTrainer)",
)
def training_step_two_arguments():
    from transformers import Trainer

    class PostTrainer(Trainer):
        def training_step(self, model, inputs):
            model.train()
            inputs = self._prepare_inputs(inputs)
            loss = self.compute_loss(model, inputs)
            loss.backward()
            return loss.detach()

    trainer = make_trainer("training_step_two", trainer_class=PostTrainer)
    try:
        trainer.train()
    except TypeError as error:
        return False, f"TypeError on the first step: {_line(error)}"
    return (
        True,
        f"trained {trainer.state.global_step} steps; the loop calls training_step({_signature(Trainer.training_step)})",
    )


@probe(
    "compute_loss_three_arguments",
    "A `compute_loss(self, model, inputs, return_outputs=False)` override (4.8.2's signature) trains and evaluates.",
    "Long customisation post",
    "07 §1 (MultiTaskTrainer)",
)
def compute_loss_three_arguments():
    from transformers import Trainer

    class PostTrainer(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False):
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss

    trainer = make_trainer("compute_loss_three", trainer_class=PostTrainer, eval_dataset=examples(8, seed=1))
    try:
        trainer.train()
        metrics = trainer.evaluate()
    except TypeError as error:
        return False, f"TypeError: {_line(error)}"
    return True, f"trained {trainer.state.global_step} steps, eval_loss {metrics['eval_loss']:.4f}"


@probe(
    "num_items_in_batch_reaches_compute_loss",
    "`compute_loss` receives `num_items_in_batch`, the number of labels in the whole accumulated batch.",
    "Subclassing article",
    "07 §1",
)
def num_items_in_batch_reaches_compute_loss():
    from transformers import Trainer

    seen = []

    class Recording(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, **keywords):
            seen.append(keywords.get("num_items_in_batch", "absent"))
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss

    make_trainer("num_items", trainer_class=Recording, max_steps=1, gradient_accumulation_steps=2).train()
    value = seen[0]
    if value == "absent":
        return False, "compute_loss was called without num_items_in_batch"
    value = int(value) if value is not None else None
    return value == 8, f"num_items_in_batch = {value} for 2 micro-batches of 4 labels"


@probe(
    "compute_loss_func_argument",
    "`Trainer(compute_loss_func=...)` is accepted and the function computes the training loss.",
    "Subclassing article",
    "07 §3 (compute_loss_func); 01 §7",
)
def compute_loss_func_argument():
    import torch

    if not trainer_accepts("compute_loss_func"):
        raise CannotRun("Trainer.__init__ has no compute_loss_func parameter")
    calls = []

    def doubled(outputs, labels, num_items_in_batch=None):
        calls.append(num_items_in_batch)
        return 2 * torch.nn.functional.cross_entropy(outputs.logits, labels)

    plain = make_trainer("loss_func_plain", max_steps=1)
    plain.train()
    custom = make_trainer("loss_func", max_steps=1, compute_loss_func=doubled)
    custom.train()
    ratio = losses(custom)[0] / losses(plain)[0]
    holds = len(calls) == 1 and abs(ratio - 2) < 2e-3  # 4.x logs the loss rounded to 4 decimals
    return holds, f"called {len(calls)} time(s); logged loss / plain loss = {ratio:.4f}"


@probe(
    "processing_class_argument",
    "`Trainer(processing_class=tokenizer)` is accepted.",
    "course",
    "01 §4",
)
def processing_class_argument():
    if not trainer_accepts("processing_class"):
        raise CannotRun("Trainer.__init__ has no processing_class parameter")
    trainer = make_trainer("processing_class", processing_class=tiny_tokenizer())
    return True, f"accepted; data collator {type(trainer.data_collator).__name__}"


@probe(
    "tokenizer_argument",
    "`Trainer(tokenizer=tokenizer)` is accepted (the 4.x way).",
    "Convenient-Trainer guide",
    "01 §4",
)
def tokenizer_argument():
    heard = _Heard()
    try:
        with heard:
            trainer = make_trainer("tokenizer_argument", tokenizer=tiny_tokenizer())
    except TypeError as error:
        return False, f"TypeError: {_line(error)}"
    said = heard.summary()
    return True, f"accepted, collator {type(trainer.data_collator).__name__}" + (f"; it warns: {said}" if said else "")


@probe(
    "callback_kwarg_tokenizer",
    "Every callback event receives the tokenizer as the keyword `tokenizer`.",
    "Callbacks notes",
    "05 §3 (tokenizer among the event kwargs)",
)
def callback_kwarg_tokenizer():
    seen: dict[str, set] = {}

    class Keys(callback_base()):
        def on_train_begin(self, args, state, control, **kwargs):
            seen["on_train_begin"] = set(kwargs)

    keyword = "processing_class" if trainer_accepts("processing_class") else "tokenizer"
    make_trainer("callback_tokenizer", callbacks=[Keys()], **{keyword: tiny_tokenizer()}).train()
    keys = seen["on_train_begin"]
    names = sorted(keys & {"tokenizer", "processing_class"})
    return "tokenizer" in keys, f"on_train_begin kwargs include {names or 'neither tokenizer nor processing_class'}"


@probe(
    "default_collator_choice",
    "With a tokenizer the default collator is `DataCollatorWithPadding`; without, `default_data_collator`.",
    "Convenient-Trainer guide",
    "01 §2",
)
def default_collator_choice():
    from transformers import DataCollatorWithPadding, default_data_collator

    keyword = "processing_class" if trainer_accepts("processing_class") else "tokenizer"
    with_tokenizer = make_trainer("collator_with", **{keyword: tiny_tokenizer()}).data_collator
    without = make_trainer("collator_without").data_collator
    holds = isinstance(with_tokenizer, DataCollatorWithPadding) and without is default_data_collator
    return holds, f"with {keyword}: {type(with_tokenizer).__name__}; without: {getattr(without, '__name__', without)}"


@probe(
    "collator_pads_to_max_length",
    "With a tokenizer, batches are padded to the maximum length, read literally: one width for every batch, wider "
    "than its longest review. (Read as each batch padded to its own longest review, it holds; the evidence shows "
    "both.)",
    "Convenient-Trainer guide",
    "01 §2",
)
def collator_pads_to_max_length():
    keyword = "processing_class" if trainer_accepts("processing_class") else "tokenizer"
    data = examples(8, length=12, variable=True, seed=3)
    trainer = make_trainer("padding", train_dataset=data, **{keyword: tiny_tokenizer()})
    batch = next(iter(trainer.get_train_dataloader()))
    width = int(batch["input_ids"].shape[1])
    longest_in_batch = int(batch["attention_mask"].sum(dim=1).max())
    return (
        width > longest_in_batch,
        f"batch width {width}; the longest review in that batch has {longest_in_batch} tokens",
    )


@probe(
    "plain_function_collator_refused",
    "A plain function is not accepted as `data_collator`.",
    "Convenient-Trainer guide",
    "01 §3",
)
def plain_function_collator_refused():
    import torch

    def stack(rows):
        return {key: torch.tensor([row[key] for row in rows]) for key in rows[0]}

    trainer = make_trainer("function_collator", data_collator=stack)
    trainer.train()
    return False, f"a plain function collated every batch: {trainer.state.global_step} steps trained"


@probe(
    "defaults_batch_lr_seed",
    "`per_device_train_batch_size` defaults to 8, `learning_rate` to 5e-05, and `seed` to 42.",
    "Convenient-Trainer guide",
    "00 §5",
)
def defaults_batch_lr_seed():
    from transformers import TrainingArguments

    args = TrainingArguments(output_dir=_folder("defaults"))
    values = (args.per_device_train_batch_size, args.learning_rate, args.seed)
    return values == (8, 5e-05, 42), f"batch {values[0]}, learning rate {values[1]}, seed {values[2]}"


# ---------------------------------------------------------------------------------------------------------------
# Removed and renamed TrainingArguments (lessons 02, 03, 11)
# ---------------------------------------------------------------------------------------------------------------
def _argument_probe(name: str, value, where: str, source: str = "Convenient-Trainer guide") -> None:
    @probe(f"argument_{name}", f"`TrainingArguments` accepts `{name}`.", source, where)
    def accepts():
        return accepts_argument(name, value)


_argument_probe("evaluation_strategy", "steps", "17 §1")
_argument_probe("warmup_ratio", 0.1, "03 §4; 17 §1")
_argument_probe("overwrite_output_dir", True, "17 §1")
_argument_probe("group_by_length", True, "02 §6; 09 §2")
_argument_probe("no_cuda", True, "17 §1")
_argument_probe("logging_dir", "logs", "17 §1")
_argument_probe("fp16_backend", "auto", "17 §3 (fp16_backend, fp16_opt_level)")
_argument_probe("fp16_opt_level", "O1", "17 §3 (fp16_backend, fp16_opt_level)")
_argument_probe("per_gpu_train_batch_size", 4, "17 §1; 10 §1")
_argument_probe("include_inputs_for_metrics", True, "17 §1", source="course")
# The names that replace them: from which release on can ported code use them?
_argument_probe("eval_strategy", "steps", "17 §1", source="course")
_argument_probe("use_cpu", True, "17 §1", source="course")
_argument_probe("train_sampling_strategy", "group_by_length", "02 §6; 09 §2", source="course")
_argument_probe("include_for_metrics", ["inputs"], "17 §1; 04 §1", source="course")


def _value_probe(name: str, value: str, where: str) -> None:
    """A value of an enum-valued field that the ladder's inventory saw go (``argument_choices``)."""

    @probe(f"value_{name}_{value}", f"`TrainingArguments` accepts `{name}={value!r}`.", "course", where)
    def accepts():
        try:
            return accepts_argument(name, value)
        except ValueError as error:
            return False, f"ValueError: {_line(error)}"


_value_probe("optim", "adamw_hf", "17 §1")
_value_probe("optim", "adamw_apex_fused", "17 §1")


@probe(
    "warmup_steps_overrides_warmup_ratio",
    "`warmup_steps` overrides any effect of `warmup_ratio`.",
    "Convenient-Trainer guide",
    "03 §4",
)
def warmup_steps_overrides_warmup_ratio():
    if "warmup_ratio" not in field_names():
        raise CannotRun("TrainingArguments has no warmup_ratio")
    args = arguments("warmup_both", warmup_ratio=0.5, warmup_steps=3)
    steps = args.get_warmup_steps(100)
    return steps == 3, f"warmup_ratio=0.5 and warmup_steps=3 -> {steps} warmup steps of 100"


@probe(
    "warmup_steps_takes_a_fraction",
    "`warmup_steps` below 1 is read as a fraction of the training steps.",
    "course",
    "03 §4",
)
def warmup_steps_takes_a_fraction():
    try:
        args = arguments("warmup_fraction", warmup_steps=0.1)
    except (TypeError, ValueError) as error:
        return False, f"{type(error).__name__}: {_line(error)}"
    steps = args.get_warmup_steps(100)
    return steps == 10, f"warmup_steps=0.1 -> {steps} warmup steps of 100"


# ---------------------------------------------------------------------------------------------------------------
# Defaults (lessons 01, 02, 05, 07)
# ---------------------------------------------------------------------------------------------------------------
@probe(
    "report_to_defaults_to_all",
    "`report_to` defaults to all installed integrations (so TensorBoardCallback is added when tensorboard is there).",
    "Convenient-Trainer guide; Callbacks notes",
    "17 §3 (defaults); 05 §5 (default callbacks)",
)
def report_to_defaults_to_all():
    import transformers.integrations as integrations

    original = getattr(integrations, "get_available_reporting_integrations", None)
    integrations.get_available_reporting_integrations = lambda: ["tensorboard"]
    try:
        from transformers import TrainingArguments

        args = TrainingArguments(output_dir=_folder("report_to"))
    finally:
        if original is not None:
            integrations.get_available_reporting_integrations = original
    resolved = list(args.report_to) if isinstance(args.report_to, list | tuple) else [args.report_to]
    return resolved == ["tensorboard"], f"with tensorboard installed, report_to resolves to {resolved}"


@probe(
    "skip_memory_metrics_defaults_to_false",
    "`skip_memory_metrics` defaults to False.",
    "Convenient-Trainer guide",
    "17 §3 (defaults)",
)
def skip_memory_metrics_defaults_to_false():
    from transformers import TrainingArguments

    value = TrainingArguments(output_dir=_folder("memory")).skip_memory_metrics
    return value is False, f"skip_memory_metrics = {value}"


@probe(
    "default_optimizer_is_adamw",
    "The default optimizer is AdamW.",
    "Convenient-Trainer guide",
    "17 §3 (defaults); 02 §2",
)
def default_optimizer_is_adamw():
    from transformers import TrainingArguments

    optim = TrainingArguments(output_dir=_folder("optim")).optim
    built = make_trainer("optim").create_optimizer()
    name = type(built).__name__
    module = type(built).__module__.split(".")[0]
    value = getattr(optim, "value", optim)
    return "adamw" in name.lower(), f"optim = {value!r} -> {module}.{name}"


@probe(
    "average_tokens_across_devices_defaults_to_true",
    "`average_tokens_across_devices` defaults to True.",
    "course",
    "07 §5; 10 §3",
)
def average_tokens_across_devices_defaults_to_true():
    if "average_tokens_across_devices" not in field_names():
        raise CannotRun("TrainingArguments has no average_tokens_across_devices")
    from transformers import TrainingArguments

    value = TrainingArguments(output_dir=_folder("average")).average_tokens_across_devices
    return value is True, f"average_tokens_across_devices = {value}"


@probe(
    "disable_tqdm_true_at_warning",
    "At the default log level (WARNING), `disable_tqdm` defaults to True (printed dicts, no progress bar).",
    "Convenient-Trainer guide",
    "01 §8",
)
def disable_tqdm_true_at_warning():
    from transformers import TrainingArguments
    from transformers.utils import logging as hf_logging

    before = hf_logging.get_verbosity()
    try:
        hf_logging.set_verbosity_warning()
        at_warning = TrainingArguments(output_dir=_folder("tqdm")).disable_tqdm
        hf_logging.set_verbosity_error()
        at_error = TrainingArguments(output_dir=_folder("tqdm")).disable_tqdm
    finally:
        hf_logging.set_verbosity(before)
    return at_warning is True, f"disable_tqdm = {at_warning} at WARNING, {at_error} at ERROR"


@probe(
    "logging_first_step_evaluates",
    "`logging_first_step=True` logs and evaluates the first global step.",
    "Convenient-Trainer guide",
    "02 §3",
)
def logging_first_step_evaluates():
    steps = []

    class Evaluations(callback_base()):
        def on_evaluate(self, args, state, control, **kwargs):
            steps.append(state.global_step)

    trainer = make_trainer(
        "first_step",
        callbacks=[Evaluations()],
        eval_dataset=examples(4, seed=1),
        max_steps=3,
        logging_steps=10,
        logging_first_step=True,
        **{eval_key(): "steps"},
        eval_steps=10,
    )
    trainer.train()
    logged = [entry["step"] for entry in trainer.state.log_history if "loss" in entry]
    return 1 in steps and 1 in logged, f"loss logged at steps {logged}; evaluated at steps {steps}"


@probe(
    "logging_steps_count_optimizer_steps",
    "With gradient accumulation, step-based intervals count optimizer updates: `logging_steps=1` at accumulation 4 "
    "logs once every 4 batches.",
    "Convenient-Trainer guide",
    "02 §1",
)
def logging_steps_count_optimizer_steps():
    batches, logged_after = [0], []

    class Count(callback_base()):
        def on_substep_end(self, args, state, control, **kwargs):
            batches[0] += 1

        def on_step_end(self, args, state, control, **kwargs):
            batches[0] += 1

        def on_log(self, args, state, control, logs=None, **kwargs):
            if logs and "loss" in logs:
                logged_after.append(batches[0])

    make_trainer(
        "intervals",
        callbacks=[Count()],
        per_device_train_batch_size=2,
        gradient_accumulation_steps=4,
        logging_steps=1,
        max_steps=2,
    ).train()
    return logged_after == [4, 8], f"training loss logged after batches {logged_after}"


@probe(
    "eval_steps_defaults_to_logging_steps",
    "`eval_steps` defaults to `logging_steps`.",
    "Convenient-Trainer guide",
    "02 §3",
)
def eval_steps_defaults_to_logging_steps():
    args = arguments("eval_steps", logging_steps=7, **{eval_key(): "steps"})
    return args.eval_steps == 7, f"logging_steps=7 -> eval_steps = {args.eval_steps}"


@probe(
    "load_best_model_ignores_save_strategy",
    "With `load_best_model_at_end=True`, `save_strategy` is ignored (a save strategy that differs from the "
    "evaluation strategy is accepted).",
    "Convenient-Trainer guide",
    "02 §4; 11 §5",
)
def load_best_model_ignores_save_strategy():
    try:
        arguments("best", load_best_model_at_end=True, save_strategy="epoch", eval_steps=2, **{eval_key(): "steps"})
    except ValueError as error:
        return False, f"ValueError: {_line(error)}"
    return True, "eval every 2 steps with save_strategy='epoch' was accepted"


@probe(
    "prediction_loss_only_skips_metrics",
    "With `prediction_loss_only=True`, `compute_metrics` is not called.",
    "Convenient-Trainer guide",
    "02 §4; 04 §4",
)
def prediction_loss_only_skips_metrics():
    calls = []

    def metrics(prediction):
        calls.append(1)
        return {"seen": 1.0}

    result = make_trainer(
        "loss_only", prediction_loss_only=True, compute_metrics=metrics, eval_dataset=examples(8, seed=1)
    ).evaluate()
    return not calls, f"compute_metrics called {len(calls)} time(s); keys {sorted(result)[:3]}"


@probe(
    "max_steps_conflicts_with_epochs",
    "`max_steps` conflicts with `num_train_epochs`: set only one.",
    "Convenient-Trainer guide",
    "02 §1",
)
def max_steps_conflicts_with_epochs():
    try:
        trainer = make_trainer("duration", max_steps=2, num_train_epochs=10)
        trainer.train()
    except ValueError as error:
        return True, f"ValueError: {_line(error)}"
    return False, f"both accepted; max_steps won: {trainer.state.global_step} steps"


@probe(
    "fractional_epochs",
    "A fractional `num_train_epochs` runs that fraction of the last epoch.",
    "Convenient-Trainer guide",
    "02 §1",
)
def fractional_epochs():
    trainer = make_trainer("fraction", train_dataset=examples(8), max_steps=-1, num_train_epochs=1.5)
    trainer.train()
    return trainer.state.global_step == 3, f"1.5 epochs of 2 batches -> {trainer.state.global_step} steps"


@probe(
    "weight_decay_skips_bias_and_layernorm",
    "Weight decay applies to every parameter except biases and LayerNorm weights.",
    "Convenient-Trainer guide",
    "02 §2",
)
def weight_decay_skips_bias_and_layernorm():
    trainer = make_trainer("decay", weight_decay=0.01)
    optimizer = trainer.create_optimizer()
    names = {id(parameter): name for name, parameter in trainer.model.named_parameters()}
    no_decay = {names[id(p)] for group in optimizer.param_groups if group["weight_decay"] == 0 for p in group["params"]}
    expected = {name for name in names.values() if name.endswith("bias") or "LayerNorm" in name}
    return no_decay == expected, f"{len(no_decay)} tensors without decay, {len(expected)} biases and LayerNorm tensors"


@probe(
    "model_init_reproducible",
    "With `model_init`, two runs with the same seed are identical.",
    "Convenient-Trainer guide",
    "02 §5",
)
def model_init_reproducible():
    def model_init(*_):
        return _unseeded_model()  # its weights come from torch's generator, which the Trainer seeds

    runs = []
    for seed in (5, 5, 6):
        trainer = make_trainer("model_init", model=None, model_init=model_init, seed=seed)
        trainer.train()
        runs.append(losses(trainer))
    evidence = f"losses seed 5: {_rounded(runs[0])}, again: {_rounded(runs[1])}, seed 6: {_rounded(runs[2])}"
    return runs[0] == runs[1] != runs[2], evidence


def _unseeded_model():
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=len(VOCAB),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return BertForSequenceClassification(config)


def _rounded(values) -> list[float]:
    return [round(value, 5) for value in values]


@probe(
    "label_smoothing_changes_labels",
    "With `label_smoothing_factor`, `compute_metrics` receives smoothed labels (0 and 1 become ε/2 and 1 − ε/2).",
    "Convenient-Trainer guide",
    "02 §7; 04 §4",
)
def label_smoothing_changes_labels():
    received = {}

    def record(factor):
        def metrics(prediction):
            received[factor] = prediction.label_ids
            return {}

        return metrics

    import numpy as np

    for factor in (0.0, 0.1):
        make_trainer(
            "smoothing", label_smoothing_factor=factor, compute_metrics=record(factor), eval_dataset=examples(8, seed=1)
        ).evaluate()
    same = np.array_equal(received[0.0], received[0.1])
    return not same, f"labels with ε=0.1: {received[0.1][:4].tolist()} ({received[0.1].dtype}); unchanged: {same}"


@probe(
    "linear_schedule_keeps_a_floor",
    "The linear schedule never reaches 0: a very small rate is used as the final learning rate, read as the "
    "scheduler's rate after the last step. (Read as the rate the last update uses, it holds; the evidence shows "
    "both.)",
    "Convenient-Trainer guide",
    "03 §5",
)
def linear_schedule_keeps_a_floor():
    import torch
    from transformers import get_linear_schedule_with_warmup

    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    scheduler = get_linear_schedule_with_warmup(optimizer, 0, 10)
    applied = []
    for _ in range(10):
        applied.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    final = scheduler.get_last_lr()[0]
    return final > 0, f"last applied rate {applied[-1]:.3g} (peak/10), rate after the last step {final}"


@probe(
    "overwrite_output_dir_false_resumes",
    "With `overwrite_output_dir=False` (or True), a Trainer whose `output_dir` holds a checkpoint resumes from it.",
    "Convenient-Trainer guide",
    "17 §3",
)
def overwrite_output_dir_false_resumes():
    folder = "resume"
    first = make_trainer(folder, max_steps=2, save_strategy="steps", save_steps=2)
    first.train()
    starts = []

    class Start(callback_base()):
        def on_train_begin(self, args, state, control, **kwargs):
            starts.append(state.global_step)

        def on_step_end(self, args, state, control, **kwargs):
            starts.append(state.global_step)

    extra = {"overwrite_output_dir": False} if "overwrite_output_dir" in field_names() else {}
    second = make_trainer(folder, max_steps=4, callbacks=[Start()], **extra)
    second.train()
    steps_run = len(starts) - 1
    resumed = steps_run < 4
    how = "overwrite_output_dir=False" if extra else "no overwrite_output_dir (removed)"
    return resumed, f"{how}: checkpoint-2 in output_dir, train() ran {steps_run} steps from step {starts[0]}"


@probe(
    "ignore_data_skip_resumes_at_the_interrupted_batch",
    "With `ignore_data_skip=True`, a resumed run continues from the batch where the first run was interrupted.",
    "Convenient-Trainer guide",
    "11 §3; 17 §3",
)
def ignore_data_skip_resumes_at_the_interrupted_batch():
    from transformers import Trainer

    class Batches(Trainer):
        def training_step(self, model, inputs, *args, **kwargs):
            self.seen.append(tuple(inputs["input_ids"][:, 1].tolist()))
            return super().training_step(model, inputs, *args, **kwargs)

    def run(**keywords):
        trainer = make_trainer(
            "skip", trainer_class=Batches, train_dataset=examples(16, seed=7), per_device_train_batch_size=2, **keywords
        )
        trainer.seen = []
        return trainer

    reference = run(max_steps=6, save_strategy="steps", save_steps=3)
    reference.train()
    resumed = run(max_steps=6, ignore_data_skip=True)
    try:
        resumed.train(resume_from_checkpoint=str(Path(reference.args.output_dir) / "checkpoint-3"))
    except Exception as error:
        if "Weights only load failed" in str(error):
            raise CannotRun(
                "this release resumes by loading the checkpoint's RNG state with torch.load, which torch 2.13 "
                "refuses (weights_only=True by default)"
            ) from error
        raise
    first = resumed.seen[0]
    where = (
        "the interrupted run's batch 4"
        if first == reference.seen[3]
        else "the epoch's first batch again"
        if first == reference.seen[0]
        else "another batch"
    )
    return first == reference.seen[3], f"the resumed step 4 trained on {where}"


@probe(
    "get_resumed_dataloader_decides_the_resumed_batches",
    "A run resumed mid-epoch asks `Trainer.get_resumed_dataloader(dataloader, num_batches)` for its data, once, "
    "with the batches to skip; a subclass that overrides it decides which batches the resumed steps train on.",
    "course",
    "11 §3",
)
def get_resumed_dataloader_decides_the_resumed_batches():
    from transformers import Trainer

    if not hasattr(Trainer, "get_resumed_dataloader"):
        raise CannotRun("Trainer has no get_resumed_dataloader (a resume skips batches inside train())")

    class Rewinding(Trainer):
        """Asks the default for nothing: restarts the epoch, so the override visibly decides."""

        def get_resumed_dataloader(self, dataloader, num_batches):
            self.asked.append(num_batches)
            return dataloader

        def training_step(self, model, inputs, *args, **kwargs):
            self.seen.append(tuple(inputs["input_ids"][:, 1].tolist()))
            return super().training_step(model, inputs, *args, **kwargs)

    def run(**keywords):
        trainer = make_trainer(
            "resumed_dataloader",
            trainer_class=Rewinding,
            train_dataset=examples(16, seed=7),
            per_device_train_batch_size=2,
            **keywords,
        )
        trainer.seen, trainer.asked = [], []
        return trainer

    reference = run(max_steps=6, save_strategy="steps", save_steps=3)
    reference.train()
    resumed = run(max_steps=6)
    resumed.train(resume_from_checkpoint=str(Path(reference.args.output_dir) / "checkpoint-3"))
    holds = resumed.asked == [3] and resumed.seen[0] == reference.seen[0]
    return holds, f"called with num_batches={resumed.asked}; resumed step 4 trained on reference batch " + (
        "1 (the override's choice)" if resumed.seen[0] == reference.seen[0] else "another batch"
    )


@probe(
    "from_pretrained_turns_kernels_on",
    "A model loaded with `from_pretrained` and no `use_kernels` argument has `use_kernels` switched on.",
    "course",
    "09 §7",
)
def from_pretrained_turns_kernels_on():
    import importlib.util

    model = tiny_model()
    with tempfile.TemporaryDirectory() as folder:
        model.save_pretrained(folder)
        loaded = type(model).from_pretrained(folder)
    value = getattr(loaded, "use_kernels", "no such attribute")
    installed = importlib.util.find_spec("kernels") is not None
    return value is True, f"use_kernels after from_pretrained: {value}; the kernels package installed: {installed}"


# ---------------------------------------------------------------------------------------------------------------
# Callbacks (lessons 05, 06, 08)
# ---------------------------------------------------------------------------------------------------------------
@probe(
    "misspelled_event_is_silent",
    "A callback method with a misspelled event name is never called and nothing reports it.",
    "Long customisation post",
    "05 §6",
)
def misspelled_event_is_silent():
    calls = {"on_epoch_end": 0, "on_epoch_ended": 0}

    class Misspelled(callback_base()):
        def on_epoch_end(self, args, state, control, **kwargs):
            calls["on_epoch_end"] += 1

        def on_epoch_ended(self, args, state, control, **kwargs):
            calls["on_epoch_ended"] += 1

    heard = _Heard()
    with heard:
        make_trainer("misspelled", callbacks=[Misspelled()], max_steps=-1, num_train_epochs=1).train()
    mentions = [line for line in heard.lines if "on_epoch_ended" in line]
    return calls["on_epoch_ended"] == 0 and not mentions, f"calls {calls}; messages naming it: {len(mentions)}"


@probe(
    "metrics_only_at_on_evaluate",
    "`metrics` is passed only to `on_evaluate`.",
    "Callbacks notes",
    "05 §3",
)
def metrics_only_at_on_evaluate():
    receivers = set()

    class Any(callback_base()):
        pass

    for name in event_names():

        def record(self, args, state, control, _name=name, **kwargs):
            if "metrics" in kwargs:
                receivers.add(_name)

        setattr(Any, name, record)
    trainer = make_trainer("metrics_events", callbacks=[Any()], eval_dataset=examples(4, seed=1))
    trainer.train()
    trainer.evaluate()
    trainer.predict(examples(4, seed=2))
    return receivers == {"on_evaluate"}, f"events that received metrics: {sorted(receivers)}"


@probe(
    "step_begin_flags_switch_off_actions",
    "Setting `should_log`, `should_evaluate` and `should_save` to False in `on_step_begin` switches those actions off.",
    "Short customisation post",
    "06 §1 (MyCallback)",
)
def step_begin_flags_switch_off_actions():
    class MyCallback(callback_base()):
        def on_step_begin(self, args, state, control, **kwargs):
            control.should_log = False
            control.should_evaluate = False
            control.should_save = False

    trainer = make_trainer("step_begin", callbacks=[MyCallback()], max_steps=3, logging_steps=1)
    trainer.train()
    logged = [entry["step"] for entry in trainer.state.log_history if "loss" in entry]
    return not logged, f"training loss still logged at steps {logged}"


@probe(
    "callback_learning_rate_is_applied_and_logged",
    "A learning rate that a callback writes into `optimizer.param_groups` in `on_step_begin` is the one the step "
    "applies and the one the Trainer logs, both halves. (The applied half alone, the post's sentence, holds; the "
    "evidence shows each.)",
    "Long customisation post",
    "06 §5 (DynamicLRCallback)",
)
def callback_learning_rate_is_applied_and_logged():
    written = 0.0123

    class Dynamic(callback_base()):
        def on_step_begin(self, args, state, control, optimizer=None, **kwargs):
            for group in optimizer.param_groups:
                group["lr"] = written

    model = tiny_model()
    optimizer = _sgd_recording_norms()(model.parameters(), lr=0.1)
    trainer = make_trainer("dynamic_lr", model=model, callbacks=[Dynamic()], optimizers=(optimizer, None), max_steps=2)
    trainer.train()
    logged = [entry["learning_rate"] for entry in trainer.state.log_history if "learning_rate" in entry]
    applied = optimizer.rates
    holds = all(abs(rate - written) < 1e-12 for rate in applied + logged)
    return holds, f"written {written}: applied {_rounded(applied)}, logged {_rounded(logged)}"


@probe(
    "callbacks_are_read_only",
    "Callbacks cannot change the training (only the `TrainerControl` flags).",
    "Callbacks notes; Short customisation post",
    "06 §8; 08 §6",
)
def callbacks_are_read_only():
    import torch

    class Freeze(callback_base()):
        def on_train_begin(self, args, state, control, model=None, **kwargs):
            model.bert.embeddings.word_embeddings.weight.requires_grad_(False)

    trainer = make_trainer("read_only", callbacks=[Freeze()])
    before = trainer.model.bert.embeddings.word_embeddings.weight.detach().clone()
    trainer.train()
    unchanged = torch.equal(before, trainer.model.bert.embeddings.word_embeddings.weight.detach())
    return not unchanged, f"embeddings frozen from on_train_begin stayed unchanged over 2 steps: {unchanged}"


@probe(
    "gradients_none_at_step_end",
    "In `on_step_end` the gradients are already cleared (None or zero); read them earlier.",
    "course",
    "06 §6; 08 §2",
)
def gradients_none_at_step_end():
    seen = []

    class Look(callback_base()):
        def on_step_end(self, args, state, control, model=None, **kwargs):
            grads = [p.grad for p in model.parameters() if p.requires_grad]
            seen.append(sum(g is None or not g.abs().sum().item() for g in grads) / len(grads))

    make_trainer("grads", callbacks=[Look()]).train()
    return all(share == 1.0 for share in seen), f"share of parameters with no (or zero) gradient at on_step_end: {seen}"


@probe(
    "early_stopping_requires_load_best_model",
    "`EarlyStoppingCallback` requires `load_best_model_at_end=True`.",
    "course",
    "06 §4",
)
def early_stopping_requires_load_best_model():
    from transformers import EarlyStoppingCallback

    try:
        make_trainer(
            "early",
            callbacks=[EarlyStoppingCallback(early_stopping_patience=1)],
            eval_dataset=examples(4, seed=1),
            max_steps=3,
            metric_for_best_model="eval_loss",
            eval_steps=1,
            **{eval_key(): "steps"},
        ).train()
    except (AssertionError, ValueError) as error:
        if "load_best_model_at_end" not in str(error):
            raise CannotRun(f"stops first on another requirement: {_line(error)}") from error
        return True, f"{type(error).__name__}: {_line(error)}"
    return False, "trained with load_best_model_at_end=False (metric_for_best_model set)"


@probe(
    "early_stopping_requires_metric",
    "`EarlyStoppingCallback` requires `metric_for_best_model`.",
    "course",
    "06 §4",
)
def early_stopping_requires_metric():
    from transformers import EarlyStoppingCallback

    try:
        make_trainer(
            "early_metric",
            callbacks=[EarlyStoppingCallback(early_stopping_patience=1)],
            eval_dataset=examples(4, seed=1),
            max_steps=3,
            eval_steps=1,
            **{eval_key(): "steps"},
        ).train()
    except (AssertionError, ValueError) as error:
        if "metric_for_best_model" not in str(error):
            raise CannotRun(f"stops first on another requirement: {_line(error)}") from error
        return True, f"{type(error).__name__}: {_line(error)}"
    return False, "trained without metric_for_best_model"


# ---------------------------------------------------------------------------------------------------------------
# Losses under gradient accumulation (lesson 07), other methods (lesson 08)
# ---------------------------------------------------------------------------------------------------------------
def _sgd_recording_norms():
    import torch

    class RecordingSGD(torch.optim.SGD):
        """Plain SGD that notes the global gradient norm and the learning rate of each step."""

        def __init__(self, params, lr):
            super().__init__(params, lr=lr)
            self.norms, self.rates = [], []

        def step(self, closure=None):
            grads = [p.grad.norm() for group in self.param_groups for p in group["params"] if p.grad is not None]
            self.norms.append(float(torch.linalg.vector_norm(torch.stack(grads))))
            self.rates.append(self.param_groups[0]["lr"])
            return super().step(closure)

    return RecordingSGD


def _accumulation_step(trainer_class, batch: int, accumulation: int) -> tuple[float, float, object]:
    """Loss logged and gradient norm received by the optimizer at the first step, 32 fixed reviews, no shuffling."""
    model = tiny_model(seed=0)
    optimizer = _sgd_recording_norms()(model.parameters(), lr=0.1)
    trainer = make_trainer(
        f"accumulation_{batch}x{accumulation}",
        trainer_class=trainer_class,
        model=model,
        train_dataset=examples(32, seed=4),
        optimizers=(optimizer, None),
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        max_steps=1,
        max_grad_norm=1e9,
    )
    trainer.get_train_dataloader = _unshuffled(trainer)
    trainer.train()
    return losses(trainer)[0], optimizer.norms[0], trainer


def _unshuffled(trainer):
    import torch

    def loader():
        return torch.utils.data.DataLoader(
            trainer.train_dataset, batch_size=trainer.args.train_batch_size, collate_fn=trainer.data_collator
        )

    return loader


@probe(
    "stock_classifier_accumulation_matches",
    "The stock sequence classifier (no subclass) takes the same step at batch 2 × accumulation 4 as at batch 8: "
    "same logged loss and same gradient.",
    "course",
    "07 §5; 02 §1",
)
def stock_classifier_accumulation_matches():
    from transformers import Trainer

    loss_big, norm_big, _ = _accumulation_step(Trainer, 8, 1)
    loss_small, norm_small, trainer = _accumulation_step(Trainer, 2, 4)
    flag = getattr(trainer, "model_accepts_loss_kwargs", "absent")
    loss_ratio, norm_ratio = loss_small / loss_big, norm_small / norm_big
    holds = abs(loss_ratio - 1) < 1e-3 and abs(norm_ratio - 1) < 1e-3
    return (
        holds,
        f"2x4 / 8x1: logged loss x{loss_ratio:.3f}, gradient norm x{norm_ratio:.3f}; model_accepts_loss_kwargs={flag}",
    )


@probe(
    "model_accepts_loss_kwargs_false_fixes_mean_loss",
    "A `compute_loss` that returns the micro-batch mean takes the right step under accumulation once "
    "`self.model_accepts_loss_kwargs = False` is set.",
    "Subclassing article",
    "07 §5 (claim box)",
)
def model_accepts_loss_kwargs_false_fixes_mean_loss():
    from transformers import Trainer

    class MeanLoss(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss

    class WithAdvice(MeanLoss):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.model_accepts_loss_kwargs = False

    try:
        loss_big, norm_big, _ = _accumulation_step(Trainer, 8, 1)
        loss_naive, norm_naive, naive = _accumulation_step(MeanLoss, 2, 4)
        loss_fixed, norm_fixed, _ = _accumulation_step(WithAdvice, 2, 4)
    except TypeError as error:
        return False, f"TypeError: {_line(error)}"
    has_flag = hasattr(naive, "model_accepts_loss_kwargs")
    holds = abs(loss_fixed / loss_big - 1) < 1e-3 and abs(norm_fixed / norm_big - 1) < 1e-3
    return holds, (
        f"with the flag: loss x{loss_fixed / loss_big:.3f}, gradient x{norm_fixed / norm_big:.3f}; without: loss "
        f"x{loss_naive / loss_big:.3f}, gradient x{norm_naive / norm_big:.3f}"
        + ("" if has_flag else "; this Trainer has no such attribute")
    )


@probe(
    "label_smoothing_before_compute_loss_func",
    "With both `label_smoothing_factor` and `compute_loss_func`, label smoothing is applied.",
    "Subclassing article",
    "07 §3 (claim box)",
)
def label_smoothing_before_compute_loss_func():
    import torch

    if not trainer_accepts("compute_loss_func"):
        raise CannotRun("Trainer.__init__ has no compute_loss_func parameter")

    def plain(outputs, labels, num_items_in_batch=None):
        return torch.nn.functional.cross_entropy(outputs.logits, labels)

    runs = {}
    for name, extra in [
        ("plain", {}),
        ("smoothing", {"label_smoothing_factor": 0.3}),
        ("both", {"label_smoothing_factor": 0.3, "compute_loss_func": plain}),
    ]:
        model = tiny_model()
        with torch.no_grad():
            model.classifier.bias += torch.tensor([0.0, 3.0])  # a margin, so that smoothing changes the loss
        positive = ListDataset([{**row, "labels": 1} for row in examples().rows])  # a margin towards every label
        trainer = make_trainer("smoothing_order", model=model, train_dataset=positive, max_steps=1, **extra)
        trainer.train()
        runs[name] = losses(trainer)[0]
    applied = abs(runs["both"] - runs["smoothing"]) < 1e-6 and abs(runs["smoothing"] - runs["plain"]) > 1e-4
    return applied, (
        f"first logged loss: plain {runs['plain']:.5f}, smoothing alone {runs['smoothing']:.5f}, "
        f"both {runs['both']:.5f}"
    )


@probe(
    "evaluation_step_is_called",
    "`evaluation_step` is a Trainer method that evaluation calls, so overriding it changes evaluation.",
    "Long customisation post",
    "08 §5 (evaluation_step)",
)
def evaluation_step_is_called():
    from transformers import Trainer

    calls = []

    class Override(Trainer):
        def evaluation_step(self, *args, **kwargs):
            calls.append(1)
            raise RuntimeError("evaluation_step was called")

    make_trainer("evaluation_step", trainer_class=Override, eval_dataset=examples(4, seed=1)).evaluate()
    return bool(calls), f"Trainer has evaluation_step: {hasattr(Trainer, 'evaluation_step')}; calls: {len(calls)}"


@probe(
    "get_train_dataloader_delegates_to_get_dataloader",
    "`get_train_dataloader` delegates to the internal `_get_dataloader`, and training calls it once.",
    "Subclassing article",
    "08 §5",
)
def get_train_dataloader_delegates_to_get_dataloader():
    from transformers import Trainer

    if not hasattr(Trainer, "_get_dataloader"):
        raise CannotRun("Trainer has no _get_dataloader")
    calls = {"get_train_dataloader": 0, "_get_dataloader": 0}

    class Counting(Trainer):
        def get_train_dataloader(self, *args, **kwargs):
            calls["get_train_dataloader"] += 1
            return super().get_train_dataloader(*args, **kwargs)

        def _get_dataloader(self, *args, **kwargs):
            calls["_get_dataloader"] += 1
            return super()._get_dataloader(*args, **kwargs)

    make_trainer("dataloader", trainer_class=Counting, max_steps=-1, num_train_epochs=2).train()
    return calls == {"get_train_dataloader": 1, "_get_dataloader": 1}, f"calls over 2 epochs: {calls}"


# ---------------------------------------------------------------------------------------------------------------
# Inventory for check_old_code and the page
# ---------------------------------------------------------------------------------------------------------------
def inventory() -> dict:
    """What the release offers: TrainingArguments fields, Trainer methods and their parameters, callback events."""
    from transformers import Trainer

    methods = {}
    for name in sorted(dir(Trainer)):
        attribute = inspect.getattr_static(Trainer, name)
        if name.startswith("__") or not callable(getattr(Trainer, name, None)):
            continue
        if isinstance(attribute, property):
            continue
        with contextlib.suppress(TypeError, ValueError):
            parameters = inspect.signature(getattr(Trainer, name)).parameters.values()
            methods[name] = [RELEASE_FACTS.describe(parameter) for parameter in parameters]
    init_parameters = inspect.signature(Trainer.__init__).parameters.values()
    return {
        "training_arguments": sorted(field_names()),
        "argument_choices": argument_choices(),
        "enum_members": enum_members(),
        "trainer_init": [RELEASE_FACTS.describe(p) for p in init_parameters][1:],
        "trainer_methods": methods,
        "trainer_calls": trainer_calls(),
        "trainer_call_sites": trainer_call_sites(),
        "trainer_attributes": trainer_attributes(),
        "callback_events": event_names(),
    }


def trainer_calls() -> dict[str, list]:
    """How the release's own Trainer code calls its methods: ``{name: [[positional count, [keywords]], ...]}``.

    Read from the source of the modules that define Trainer's methods (``self.training_step(model, inputs,
    num_items_in_batch)`` is ``[3, []]``); calls that unpack ``*args`` or ``**kwargs`` are left out."""
    import ast

    from transformers import Trainer

    modules = set()
    for name in dir(Trainer):
        value = getattr(Trainer, name, None)
        module = getattr(value, "__module__", None) or ""
        if callable(value) and module.startswith("transformers"):
            modules.add(sys.modules[module])
    shapes: dict[str, list] = {}
    for module in sorted(modules, key=lambda item: item.__name__):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "self"):
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                continue
            shape = [len(node.args), sorted(k.arg for k in node.keywords)]
            known = shapes.setdefault(node.func.attr, [])
            if shape not in known:
                known.append(shape)
    return {name: sorted(shapes[name]) for name in sorted(shapes) if callable(getattr(Trainer, name, None))}


def _trainer_modules() -> list:
    """The modules that define the release's Trainer methods (trainer.py and its helpers)."""
    from transformers import Trainer

    modules = set()
    for name in dir(Trainer):
        value = getattr(Trainer, name, None)
        module = getattr(value, "__module__", None) or ""
        if callable(value) and module.startswith("transformers"):
            modules.add(sys.modules[module])
    return sorted(modules, key=lambda item: item.__name__)


def trainer_attributes() -> dict[str, list[str]]:
    """The attributes the release's Trainer and Seq2SeqTrainer set on ``self`` (``self.fsdp = ...``,
    ``self._max_length = ...``), read from their modules' source: ``{"Trainer": [...], "Seq2SeqTrainer": [...]}``."""
    import ast

    from transformers import Seq2SeqTrainer

    trainer = set()
    for module in _trainer_modules():
        trainer |= set(RELEASE_FACTS.self_attributes(ast.parse(inspect.getsource(module))))
    seq2seq = set(RELEASE_FACTS.self_attributes(ast.parse(inspect.getsource(sys.modules[Seq2SeqTrainer.__module__]))))
    return {"Trainer": sorted(trainer), "Seq2SeqTrainer": sorted(trainer | seq2seq)}


def trainer_call_sites() -> dict[str, dict[str, list]]:
    """:func:`trainer_calls` by caller: ``{name: {calling method: [[positional count, [keywords]], ...]}}``, read
    by ``check_old_code/release_facts.py`` (the same reading as the checker makes of the installed release)."""
    import ast

    from transformers import Trainer

    sites: dict[str, dict[str, list]] = {}
    for module in _trainer_modules():
        for name, callers in RELEASE_FACTS.self_call_sites(ast.parse(inspect.getsource(module))).items():
            for caller, shapes in callers.items():
                known = sites.setdefault(name, {}).setdefault(caller, [])
                known += [shape for shape in shapes if shape not in known]
    return {
        name: {caller: sorted(shapes) for caller, shapes in sorted(sites[name].items())}
        for name in sorted(sites)
        if callable(getattr(Trainer, name, None))
    }


def run_all(selected: list[str] | None = None) -> dict:
    """Run every probe (or the ``selected`` ids) and return the release's results."""
    import torch
    import transformers
    import transformers.trainer  # noqa: F401 (loaded now, so that the freeze below covers it)

    transformers.logging.set_verbosity_error()
    # Every train() starts with a full gc.collect() (accelerate frees memory before it): with the libraries' objects
    # moved out of the collector's reach, each probe that trains skips walking them (about 0.3 s a run).
    gc.collect()
    gc.freeze()
    results = {}
    for item in PROBES:
        if selected and item.id not in selected:
            continue
        start = time.perf_counter()
        output = io.StringIO()
        try:
            with contextlib.redirect_stdout(output), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                holds, evidence = item.function()
            verdict = HOLDS if holds else DOES_NOT_HOLD
        except CannotRun as reason:
            verdict, evidence = CANNOT_RUN, str(reason)
        except Exception as error:  # a probe that breaks is a result, with its reason, not a crash of the ladder
            frame = traceback.extract_tb(error.__traceback__)[-1]
            verdict = CANNOT_RUN
            evidence = f"{type(error).__name__}: {_line(error)} (at {Path(frame.filename).name}:{frame.lineno})"
        results[item.id] = {"verdict": verdict, "evidence": evidence, "seconds": round(time.perf_counter() - start, 2)}
    versions = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    for package in ("tokenizers", "accelerate", "numpy", "huggingface_hub", "safetensors"):
        with contextlib.suppress(ImportError):
            versions[package] = __import__(package).__version__
    return {"versions": versions, "probes": results, "inventory": inventory()}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python tools/ladder/probes.py OUT.json [PROBE_ID...]")
        return 2
    start = time.perf_counter()
    report = run_all(argv[1:] or None)
    report["probe_seconds"] = round(time.perf_counter() - start, 1)
    Path(argv[0]).write_text(json.dumps(report, indent=1, sort_keys=True), encoding="utf-8")
    counts = {verdict: sum(r["verdict"] == verdict for r in report["probes"].values()) for verdict in VERDICTS}
    print(f"transformers {report['versions']['transformers']}: {counts} in {report['probe_seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
