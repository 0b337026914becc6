"""``check_old_code`` on what the fresh blind sample of the corpus (issue 61, second block of
``tests/check_old_code_corpus/manifest.toml``) showed it getting wrong: a base Trainer class reading attributes its
subclasses provide (vec2text's ``BaseTrainer``), and ``super().__init__`` in a Trainer subclass with a mixin base the
checker cannot read (trapper's ``TransformerTrainer(Trainer, Registrable)``). Each has a trap and correct code left
alone.
"""

from __future__ import annotations

from pathlib import Path

from check_old_code import check_paths, check_source


def _kinds_of(path: Path) -> list[tuple[int, str]]:
    return sorted((finding.line, finding.kind) for finding in check_paths([path]).findings)


def _package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


BASE = """import transformers


class BaseTrainer(transformers.Trainer):
    def sanity(self):
        ids = self.embedder_tokenizer("x")
        return self.generate(ids), self._max_length
"""


def test_a_base_class_reading_what_its_subclasses_beside_it_set_is_left_alone(tmp_path: Path) -> None:
    _package(
        tmp_path / "pkg",
        {
            "trainers/base.py": BASE,
            "trainers/inversion.py": "from pkg.trainers.base import BaseTrainer\n\n\n"
            "class InversionTrainer(BaseTrainer):\n"
            "    def __init__(self, *args, **kwargs):\n"
            "        super().__init__(*args, **kwargs)\n"
            "        self.embedder_tokenizer = self.model.embedder_tokenizer\n",
            # a subclass of the subclass, in the package beside it, defines generate
            "baselines/decode.py": "from pkg.trainers.inversion import InversionTrainer\n\n\n"
            "class Decode(InversionTrainer):\n"
            "    def generate(self, inputs):\n"
            "        return inputs\n",
        },
    )
    # what no subclass provides is still judged: _max_length, which 4.1x's Seq2SeqTrainer set, is read on line 7
    assert _kinds_of(tmp_path / "pkg" / "trainers" / "base.py") == [(7, "removed-attribute")]


def test_the_same_base_class_alone_is_still_reported(tmp_path: Path) -> None:
    _package(tmp_path / "pkg", {"trainers/base.py": BASE, "trainers/other.py": "class BaseTrainer:\n    x = 1\n"})
    found = _kinds_of(tmp_path / "pkg" / "trainers" / "base.py")
    assert found == [(6, "removed-attribute"), (7, "removed-attribute"), (7, "removed-attribute")]


def test_a_class_of_the_same_name_that_is_not_a_subclass_does_not_count(tmp_path: Path) -> None:
    # the sibling's class sets embedder_tokenizer but derives from nothing of this file: not a subclass
    _package(
        tmp_path / "pkg",
        {
            "trainers/base.py": BASE,
            "trainers/elsewhere.py": "class Unrelated:\n    def __init__(self):\n        self.embedder_tokenizer = 1\n",
        },
    )
    assert (6, "removed-attribute") in _kinds_of(tmp_path / "pkg" / "trainers" / "base.py")


MIXINS = """
from transformers import Trainer
from somewhere_else import Registrable, OtherTrainer


class TransformerTrainer(Trainer, Registrable):
    def __init__(self, model=None, args=None, tokenizer=None):
        super().__init__(model=model, args=args, tokenizer=tokenizer)


class MixinFirst(Registrable, Trainer):
    def __init__(self, model=None, tokenizer=None):
        super().__init__(model=model, tokenizer=tokenizer)


class TwoTrainers(Trainer, OtherTrainer):
    def __init__(self, model=None, tokenizer=None):
        super().__init__(model=model, tokenizer=tokenizer)


class Fixed(Trainer, Registrable):
    def __init__(self, model=None, args=None, processing_class=None):
        super().__init__(model=model, args=args, processing_class=processing_class)
"""


def test_super_init_past_a_mixin_listed_after_the_trainer_is_judged() -> None:
    """Only the first class: its mixin comes after Trainer in the method resolution order, so super().__init__ is
    Trainer.__init__. A mixin listed first may take the call itself, and an unread base named like a trainer may
    be a Trainer subclass placed before Trainer: neither is judged. Fixed passes processing_class: left alone."""
    findings = check_source(MIXINS)
    assert [(f.line, f.kind) for f in findings] == [(8, "trainer-tokenizer")]
    assert "processing_class" in findings[0].fix


HELD = """
import os

import transformers
from transformers import TrainingArguments


def save(trainer: transformers.Trainer, output_dir: str):
    if trainer.args.local_rank == 0:
        trainer.save_model(output_dir)
    args = trainer.args
    print(args.overwrite_output_dir)


class Experiment:
    def __init__(self, training_args: TrainingArguments, name: str):
        self.training_args = training_args
        self.name = name

    def train(self):
        training_args = self.training_args
        if training_args.local_rank <= 0:
            print(training_args.overwrite_output_dir, self.name.local_rank == 0)

    @property
    def main(self):
        return self.training_args.local_rank <= 0 and int(os.environ.get("LOCAL_RANK", 0)) <= 0


def plain(model, args):
    trainer = transformers.Trainer(model=model, args=args)
    return trainer.args.local_rank != -1, model.args.local_rank == 0
"""


def test_arguments_reached_through_a_trainer_or_an_attribute_set_in_init_are_judged() -> None:
    """``trainer.args`` of a parameter annotated as a Trainer or of a name bound to one (llava's
    safe_save_model_for_hf_trainer), and ``self.training_args`` stored from an annotated ``__init__`` parameter
    (vec2text's Experiment), hold the arguments. Left alone: ``self.name`` (a str parameter), ``model.args`` (not a
    Trainer), and a local_rank test joined to one that reads LOCAL_RANK itself, which still sees the launcher."""
    assert sorted((f.line, f.kind) for f in check_source(HELD)) == [
        (9, "changed-value"),
        (12, "removed-attribute"),
        (22, "changed-value"),
        (23, "removed-attribute"),
        (32, "changed-value"),
    ]


REPORT_TO = """
from dataclasses import dataclass

from transformers import TrainingArguments


@dataclass
class TransformerTrainingArguments(TrainingArguments):
    def __post_init__(self):
        if self.report_to is None:
            self.report_to = ["tensorboard"]
        if self.hub_model_id is None:
            self.hub_model_id = "x"
        super().__post_init__()


def check(args: TrainingArguments, other):
    return args.report_to == None, other.report_to is None, args.report_to == "none"  # noqa: E711
"""


def test_a_test_for_a_default_that_is_no_longer_none_is_reported() -> None:
    """trapper's ``if self.report_to is None:`` picked tensorboard when nothing was asked (4.x's default None); on
    5.x the default is "none", so the branch never runs. Left alone: hub_model_id (still None by default), an object
    that is not an arguments object, and a test against the installed default."""
    findings = check_source(REPORT_TO)
    assert sorted((f.line, f.kind) for f in findings) == [(10, "changed-value"), (18, "changed-value")]
    assert "'none'" in findings[0].message and "4.22.2" in findings[0].message


UNREAD_TRAINER = """
from trapper.training import TransformerTrainer
from lightning_like import Runner


def run(trainer: TransformerTrainer, runner: Runner):
    training_args = trainer.args
    level = "info" if training_args.local_rank in [-1, 0] else "warn"
    return level, runner.args.local_rank == 0
"""


def test_the_args_of_an_unread_class_named_like_a_trainer_are_the_arguments() -> None:
    """trapper's train.py annotates ``trainer: TransformerTrainer``, imported through a package the checker cannot
    read: its ``.args`` is still the arguments. ``runner`` (an unread class not named like a trainer) is left alone."""
    assert sorted((f.line, f.kind) for f in check_source(UNREAD_TRAINER)) == [(8, "changed-value")]


HELD_TRAINER = """
from transformers import Trainer, TrainingArguments


class Wrapper:
    def __init__(self):
        self.trainer = None
        self.other = None

    def train(self, model, name):
        self.trainer = Trainer(model=model, args=TrainingArguments(output_dir="o"))
        self.other = Trainer(model=model) if name else object()
        for n, v in {"learning_rate": 1e-5}.items():
            setattr(self.trainer.args, n, v)
        setattr(self.trainer.args, "evaluation_strategy", "no")
        setattr(self.trainer.args, "eval_strategy", "no")
        setattr(self.other.args, "evaluation_strategy", "no")
        if self.trainer.args.local_rank == 0:
            self.trainer.train()
"""


def test_setattr_on_the_args_of_a_trainer_held_in_an_attribute_is_judged() -> None:
    """tweetnlp sets ``setattr(self.trainer.args, "evaluation_strategy", "no")`` after its search: stored, never
    read. Left alone: a name that is not a literal, the new name, and ``self.other``, which may hold something else."""
    findings = check_source(HELD_TRAINER)
    assert sorted((f.line, f.kind) for f in findings) == [(15, "removed-attribute"), (18, "changed-value")]
    assert "eval_strategy" in findings[0].fix
