"""The ladder probes' kit: the registry (:func:`probe`, :data:`PROBES`, :class:`CannotRun`) and the small,
version-agnostic building blocks every probe shares (a one-layer BERT from a config, a word-level tokenizer, a quiet
Trainer, the release's argument names).

Like ``probes.py``, it runs inside a ladder environment: the standard library, torch and that release of
transformers only, nothing of the course. ``probes.py`` loads it by path under the name ``probe_kit``; the probe
modules beside it (``probes_signatures``, ``probes_defaults``, ``probes_callbacks``) import it by that name.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import logging
import re
import tempfile
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


def _rounded(values) -> list[float]:
    return [round(value, 5) for value in values]
