"""`python -m check_old_code` on arguments classes, attributes read from them and from the Trainer, callbacks, imports
and patches: each class checked against its own fields, values a 4.x release took, dict keys passed with **."""

from __future__ import annotations

import json

import pytest
from old_code_findings import kinds as _kinds

from check_old_code import check_paths, check_source


def test_each_arguments_class_is_checked_against_its_own_fields() -> None:
    source = """
from dataclasses import dataclass, field
from transformers import Seq2SeqTrainingArguments, TrainingArguments

@dataclass
class MyArguments(TrainingArguments):
    lora_rank: int = 8
    warmup_ratio: float = field(default=0.03)

Seq2SeqTrainingArguments(output_dir="x", predict_with_generate=True, generation_max_length=64)
MyArguments(output_dir="x", lora_rank=4)
TrainingArguments(output_dir="x", predict_with_generate=True)
"""
    assert _kinds(source) == [(8, "removed-field"), (12, "unknown-argument")]


def test_an_unknown_arguments_class_is_only_checked_for_old_names() -> None:
    source = """
from somewhere import DataTrainingArguments, ORTTrainingArguments

DataTrainingArguments(dataset_name="x", max_seq_length=128)
ORTTrainingArguments(output_dir="x", optim_backend="ort", evaluation_strategy="epoch")
"""
    assert _kinds(source) == [(5, "renamed-argument")]


def test_the_group_by_length_fix_keeps_the_condition() -> None:
    import dataclasses

    from transformers import TrainingArguments

    source = """
from transformers import TrainingArguments
TrainingArguments(output_dir="x", group_by_length=group_by_length)
"""
    (finding,) = check_source(source)
    expression = finding.fix.split(" in place of ")[0].split("=", 1)[1]
    default = {f.name: f.default for f in dataclasses.fields(TrainingArguments)}["train_sampling_strategy"]
    assert eval(expression, {"group_by_length": False}) == default  # off stays off
    assert eval(expression, {"group_by_length": True}) == "group_by_length"


def test_attributes_read_from_arguments_objects_and_the_trainer() -> None:
    source = """
import transformers
from transformers import HfArgumentParser, TrainerCallback, TrainingArguments

def main():
    parser = HfArgumentParser((ModelArguments, TrainingArguments))
    model_args, training_args = parser.parse_args_into_dataclasses()
    if not training_args.overwrite_output_dir and training_args.output_dir:
        pass
    model_args.overwrite_output_dir

class Old(transformers.Trainer):
    def save(self):
        self.tokenizer.save_pretrained(self.args.output_dir)
        self.tokenizer.save_pretrained("again")
        return self.args.save_safetensors

class Own(transformers.Trainer):
    def __init__(self, *args, tokenizer=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.tokenizer = tokenizer

    def save(self):
        self.tokenizer.save_pretrained(self.args.output_dir)

class Printer(TrainerCallback):
    def on_save(self, args, state, control, **kwargs):
        kwargs["tokenizer"].save_pretrained(args.logging_dir)
"""
    assert _kinds(source) == [
        (8, "removed-attribute"),
        (14, "tokenizer-attribute"),
        (16, "removed-attribute"),
        (28, "callback-tokenizer"),
        (28, "removed-attribute"),
    ]


def test_attributes_read_through_a_dataclass_that_holds_the_arguments() -> None:
    """``args.reward_config.evaluation_strategy`` (trl's scripts): the file's own dataclass declares a field whose
    annotation is an arguments class; tyro, HfArgumentParser (bound or inline, unpacked or indexed) and annotated
    parameters all bind it. A field of the holder that is not an arguments class is left alone."""
    source = """
from dataclasses import dataclass, field
from typing import Optional
import tyro
from transformers import HfArgumentParser, TrainingArguments
from trl import RewardConfig

@dataclass
class ScriptArguments:
    name: str = "x"
    reward_config: RewardConfig = field(default_factory=lambda: RewardConfig(output_dir="o"))
    other: Optional[TrainingArguments] = None

args = tyro.cli(ScriptArguments)
args.reward_config.evaluation_strategy = "no"
print(args.other.overwrite_output_dir, args.name.overwrite_output_dir, args.reward_config.eval_strategy)

def main(script: ScriptArguments):
    return script.reward_config.logging_dir

training_args = HfArgumentParser(TrainingArguments).parse_args_into_dataclasses()[0]
training_args.overwrite_output_dir
(held,) = HfArgumentParser((ScriptArguments,)).parse_args_into_dataclasses()
held.other.save_safetensors
"""
    assert _kinds(source) == [
        (15, "removed-attribute"),
        (16, "removed-attribute"),
        (19, "removed-attribute"),
        (22, "removed-attribute"),
        (24, "removed-attribute"),
    ]
    (stored,) = [f for f in check_source(source) if f.line == 15]
    assert stored.fix == "set `args.reward_config.eval_strategy`" and "changes nothing" in stored.message


def test_self_in_a_dataclass_that_holds_the_arguments() -> None:
    """ChatGLM3's ``FinetuningConfig.__post_init__`` sets ``self.training_args.evaluation_strategy``: ``self`` of a
    dataclass whose field holds the arguments is followed like any instance of it; other fields are left alone."""
    source = """
import dataclasses as dc
from transformers import Seq2SeqTrainingArguments

@dc.dataclass
class FinetuningConfig:
    max_input_length: int
    training_args: Seq2SeqTrainingArguments = dc.field(default_factory=lambda: Seq2SeqTrainingArguments("o"))

    def __post_init__(self):
        self.training_args.evaluation_strategy = "no"
        self.training_args.eval_strategy = "no"
        self.max_input_length = self.max_input_length or 512
"""
    findings = check_source(source)
    assert [(f.line, f.kind) for f in findings] == [(11, "removed-attribute")]
    assert "eval_strategy" in findings[0].fix and "changes nothing" in findings[0].message


def test_values_that_a_4x_release_took_and_the_installed_one_refuses() -> None:
    """``optim="adamw_hf"`` in a call, in a TrainingArguments subclass's default, and in a script dataclass's default
    that reaches TrainingArguments through ``optim=script_args.optim`` (reported where the value is written). A
    value no release took is a typo the installed ValueError names: not a finding."""
    source = """
from dataclasses import dataclass, field
from transformers import HfArgumentParser, TrainingArguments

@dataclass
class ScriptArguments:
    optim: str = field(default="adamw_hf")
    scheduler: str = "cosine"

@dataclass
class MyArguments(TrainingArguments):
    optim: str = field(default="adamw_apex_fused")

script_args = HfArgumentParser(ScriptArguments).parse_args_into_dataclasses()[0]
TrainingArguments(output_dir="o", optim=script_args.optim, lr_scheduler_type=script_args.scheduler)
TrainingArguments(output_dir="o", optim="adamw_hf")
TrainingArguments(output_dir="o", optim="adamw_torch", lr_scheduler_type="cosine")
TrainingArguments(output_dir="o", optim="adamw_typo")
"""
    findings = sorted(check_source(source), key=lambda finding: finding.line)
    assert [(f.line, f.kind) for f in findings] == [(7, "removed-value"), (12, "removed-value"), (16, "removed-value")]
    assert findings[0].fix.startswith("optim='adamw_torch'") and "script_args.optim" in findings[0].message
    assert findings[1].fix.startswith("optim='adamw_torch_fused'")
    assert all("ValueError" in f.message and "gone" in f.message for f in findings)


def test_keys_of_a_dict_passed_on_with_double_star() -> None:
    """A dict the file fills and passes on with ``**`` (axolotl's ``training_arguments_kwargs``): each old key is
    reported at its line, with a fix that names the key; a value inside ``a if c else b`` or ``a or b`` is read on
    both sides. Keys the installed release takes, dicts given as parameters and dicts rebuilt from something
    the file does not show are left alone."""
    source = """
from transformers import Trainer, TrainingArguments

def build(cfg, extra):
    kwargs = {"save_safetensors": True}
    if cfg.eval_steps:
        kwargs["evaluation_strategy"] = "steps"
    else:
        kwargs["eval_steps"] = 10
    kwargs.update(no_cuda=cfg.cpu)
    args = TrainingArguments(output_dir="o", **kwargs, **extra,
                             optim=cfg.optimizer if cfg.optimizer else "adamw_hf")
    TrainingArguments(output_dir="o", **kwargs)
    TrainingArguments(output_dir="o", **dict(per_gpu_train_batch_size=8), **{"report_to": "none"})
    trainer_kwargs = {}
    trainer_kwargs["tokenizer"] = cfg.tokenizer
    return Trainer(model=cfg.model, args=args, **trainer_kwargs)

def rebuilt(cfg):
    kwargs = {}
    kwargs["evaluation_strategy"] = "steps"
    kwargs = cfg.more_kwargs()
    return TrainingArguments(output_dir="o", **kwargs)

def lr_only(cfg):
    kwargs = {"learning_rate": 1e-4, "eval_strategy": "steps"}
    return TrainingArguments(output_dir="o", optim=cfg.optim or "adamw_torch", **kwargs)
"""
    findings = sorted(check_source(source), key=lambda finding: finding.line)
    assert [(f.line, f.kind) for f in findings] == [
        (5, "removed-argument"),
        (7, "renamed-argument"),
        (10, "renamed-argument"),
        (12, "removed-value"),
        (14, "removed-argument"),
        (16, "trainer-tokenizer"),
    ]
    assert "eval_strategy" in findings[1].fix and "'eval_strategy' in `kwargs`" in findings[1].fix
    assert "the key 'evaluation_strategy' of `kwargs`" in findings[1].message
    assert findings[3].fix.startswith("optim='adamw_torch'")
    assert "processing_class" in findings[5].fix and "trainer_kwargs" in findings[5].fix


def test_an_override_is_judged_by_the_calls_that_still_happen() -> None:
    """A class that replaces ``prediction_step`` (no ``super()``) takes that method's ``compute_loss`` call away:
    its ``compute_loss(self, model, inputs, return_logits=False)`` is judged by ``training_step``'s call alone, and
    the fix keeps its own parameter. With both callers replaced, the Trainer never calls it: no finding."""
    source = """
from transformers import Trainer

class RM(Trainer):
    def compute_loss(self, model, inputs, return_logits=False):
        return model(**inputs).loss

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        loss, logits = self.compute_loss(model, inputs, return_logits=True)
        return loss, logits, None

class Own(Trainer):
    def compute_loss(self, model, inputs):
        return model(**inputs).loss

    def training_step(self, model, inputs, num_items_in_batch=None):
        return self.compute_loss(model, inputs)

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        return self.compute_loss(model, inputs), None, None

class Handing(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return model(**inputs).loss

    def training_step(self, model, inputs, num_items_in_batch=None):
        return super().training_step(model, inputs, num_items_in_batch)

class NoOutputs(Trainer):
    def compute_loss(self, model, inputs):
        return model(**inputs)
"""
    findings = sorted(check_source(source), key=lambda finding: finding.line)
    assert [(f.line, f.kind) for f in findings] == [
        (5, "compute-loss-signature"),
        (23, "compute-loss-signature"),
        (30, "compute-loss-signature"),  # 4.x trained with it (only evaluation could not call it): 5.x breaks it
    ]
    assert "4.45.2 still called it" in findings[2].message
    assert "def compute_loss(self, model, inputs, return_logits=False, num_items_in_batch=None)" in findings[0].fix
    assert "num_items_in_batch" in findings[1].message  # training_step hands on to super(): its call happens


def test_enum_members_that_a_4x_release_had() -> None:
    """``OptimizerNames.ADAMW_HF`` raises AttributeError on 5.x: the same removal as ``optim="adamw_hf"``, with the
    member to use instead. Members the installed enum has, and names no release had, are not findings."""
    source = """
from transformers.training_args import OptimizerNames
from transformers import training_args

optimizer = OptimizerNames.ADAMW_BNB if quantization else OptimizerNames.ADAMW_HF
other = training_args.OptimizerNames.ADAMW_HF
fine = OptimizerNames.ADAMW_TORCH, OptimizerNames.ADAMW_TYPO
"""
    findings = sorted(check_source(source), key=lambda finding: finding.line)
    assert [(f.line, f.kind) for f in findings] == [(5, "removed-value"), (6, "removed-value")]
    assert findings[0].fix.startswith("OptimizerNames.ADAMW_TORCH")
    assert "AttributeError" in findings[0].message and "4.50.0" in findings[0].message


def test_an_import_for_older_releases_in_an_import_error_branch() -> None:
    """``except ImportError: from transformers.deepspeed import ...`` after an import the installed release has
    never runs: not a finding. When the ``try`` import fails too, the fallback is what runs, and it fails."""
    source = """
try:
    from transformers.integrations import is_deepspeed_zero3_enabled
except ImportError:
    from transformers.deepspeed import is_deepspeed_zero3_enabled

try:
    from transformers import is_torch_tpu_available
except ImportError:
    from transformers.deepspeed import is_deepspeed_zero3_enabled
"""
    findings = check_source(source)
    assert [(f.line, f.kind) for f in findings] == [(10, "removed-import")]


def test_classes_reached_through_a_star_import_a_shadowing_subclass_and_an_alias() -> None:
    """``from transformers.trainer import *`` gives ``Trainer`` (its subclass is checked, and the names the star no
    longer gives are one finding); ``class TrainingArguments(TrainingArguments)`` subclasses the imported class, not
    itself; a name assigned one Trainer class or another is called as either."""
    source = """
from transformers.trainer import *

class MyTrainer(Trainer):
    def save_model(self, output_dir: Optional[str] = None, _internal_call: bool = False):
        if self.fsdp is not None:
            self._save_tpu(output_dir)
"""
    findings = sorted(check_source(source), key=lambda finding: finding.line)
    assert [(f.line, f.kind) for f in findings] == [
        (2, "removed-import"),
        (6, "removed-attribute"),
        (7, "removed-method"),
    ]
    assert "`Optional`" in findings[0].message and "NameError" in findings[0].message
    assert "`self.fsdp`" in findings[1].message and "4.33.3 still had it" in findings[1].message
    fine = """
from transformers.trainer import *
from typing import Optional

class MyTrainer(Trainer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fsdp = None

    def save_model(self, output_dir: Optional[str] = None, _internal_call: bool = False):
        if self.fsdp is not None or self.is_fsdp_enabled:
            self._save(output_dir)
"""
    assert check_source(fine) == []
    shadowing = """
import transformers
from dataclasses import dataclass, field
from transformers import HfArgumentParser, Trainer, TrainingArguments

@dataclass
class TrainingArguments(TrainingArguments):
    model_max_length: int = field(default=512)

def main(lora):
    (training_args,) = HfArgumentParser((TrainingArguments,)).parse_args_into_dataclasses()
    if training_args.overwrite_output_dir or training_args.model_max_length:
        pass
    Cls = Trainer if lora else transformers.Trainer
    Cls(model=None, args=training_args, tokenizer=None)

def other(lora):
    Cls = Trainer if lora else make_trainer_class()  # not known to be a Trainer: left alone
    Cls(model=None, tokenizer=None)
"""
    findings = sorted(check_source(shadowing), key=lambda finding: finding.line)
    assert [(f.line, f.kind) for f in findings] == [(12, "removed-attribute"), (15, "trainer-tokenizer")]


def test_a_method_handed_on_belongs_to_the_method_that_hands_it() -> None:
    """The pinned release calls ``_get_train_sampler`` only through ``get_train_dataloader``
    (``sampler_fn=...``): a class that
    replaces ``get_train_dataloader`` and calls ``self._get_train_sampler()`` itself keeps its old override."""
    source = """
from transformers import Trainer
from torch.utils.data import DataLoader, SequentialSampler

class Own(Trainer):
    def _get_train_sampler(self):
        return SequentialSampler(self.train_dataset)

    def get_train_dataloader(self):
        return DataLoader(self.train_dataset, sampler=self._get_train_sampler())

class Old(Trainer):
    def _get_train_sampler(self):
        return SequentialSampler(self.train_dataset)
"""
    findings = check_source(source)
    assert [(f.line, f.kind) for f in findings] == [(13, "method-signature")]


def test_arguments_reached_through_self_and_library_calls_that_no_longer_fit() -> None:
    """``self.no_cuda`` in a TrainingArguments subclass's method and ``args.past_index`` after
    ``args = self.args`` in a Trainer are the arguments object's fields; ``self._n_gpu``, no longer a field but set
    by the installed class on the instance, is not a finding. A transformers function called in a way its
    installed signature refuses is one; a name nothing sets, read on self in a Trainer, is one (once a line)."""
    source = """
from dataclasses import dataclass
from transformers import Seq2SeqTrainer, TrainingArguments
from transformers.integrations.deepspeed import deepspeed_init

@dataclass
class OurArguments(TrainingArguments):
    def devices(self):
        self._n_gpu = 0
        return "cpu" if self.no_cuda else self._n_gpu

class NITrainer(Seq2SeqTrainer):
    def evaluation_loop(self, dataloader, description, prediction_loss_only=None, ignore_keys=None,
                        metric_key_prefix="eval"):
        args = self.args
        if args.past_index >= 0 and args.deepspeed:
            deepspeed_init(self, num_training_steps=0, resume_from_checkpoint=None, inference=True)
        length = self._max_length if self._max_length is not None else 20
        deepspeed_init(self, 0, inference=True)
        return self.evaluation_loop_helper(length)

    def evaluation_loop_helper(self, length):
        self.last_length = length
        return self.last_length
"""
    findings = sorted(check_source(source), key=lambda finding: finding.line)
    assert [(f.line, f.kind) for f in findings] == [
        (10, "removed-attribute"),
        (16, "removed-attribute"),
        (17, "call-signature"),
        (18, "removed-attribute"),
    ]
    assert "use_cpu" in findings[0].fix and "past_index" in findings[1].message
    assert "resume_from_checkpoint" in findings[2].message and "_max_length" in findings[3].message


def test_an_argparse_default_and_a_function_put_onto_a_callback() -> None:
    """``--optimizer`` defaulting to ``"adamw_hf"`` and given as ``optim=args.optimizer`` is reported where the
    default is written (an option given no default, or a value the installed release takes, is not); a function
    assigned as a callback's event (unsloth's ``DEFAULT_PROGRESS_CALLBACK.on_train_begin = f``) gets the
    TrainingArguments as its second parameter."""
    source = """
import argparse
from transformers import TrainingArguments
from transformers.trainer import DEFAULT_PROGRESS_CALLBACK

def parse():
    parser = argparse.ArgumentParser()
    parser.add_argument("--optimizer", type=str, default="adamw_hf")
    parser.add_argument("--scheduler", default="cosine")
    parser.add_argument("--other-optim", dest="second", default="adamw_torch")
    return parser.parse_known_args()

def train(args):
    return TrainingArguments("o", optim=args.optimizer, lr_scheduler_type=args.scheduler)

def on_train_begin(self, args, state, control, **kwargs):
    self.first_column = "Epoch" if args.evaluation_strategy == "epoch" else "Step"

def helper(self, args):
    return args.evaluation_strategy

DEFAULT_PROGRESS_CALLBACK.on_train_begin = on_train_begin
"""
    findings = sorted(check_source(source), key=lambda finding: finding.line)
    assert [(f.line, f.kind) for f in findings] == [(8, "removed-value"), (17, "removed-attribute")]
    assert "args.optimizer" in findings[0].message and findings[0].fix.startswith("optim='adamw_torch'")


def test_a_trl_trainer_given_a_plain_training_arguments() -> None:
    """trl 1.16's DPOTrainer takes a DPOConfig (by keyword or in its third position); SFTTrainer also takes a plain
    TrainingArguments, and a DPOConfig is right. A subclass whose own ``__init__`` goes straight to
    ``Trainer.__init__`` (LLaMA-Factory's CustomDPOTrainer) never runs DPOTrainer's: not judged."""
    source = """
from transformers import Trainer, TrainingArguments
from trl import DPOConfig, DPOTrainer, SFTTrainer

training_args = TrainingArguments(output_dir="o")
DPOTrainer(model, ref, args=training_args, train_dataset=d)
DPOTrainer(model, ref, training_args, train_dataset=d)
DPOTrainer(model, ref, args=DPOConfig(output_dir="o"), train_dataset=d)
SFTTrainer(model, args=training_args, train_dataset=d)

class Custom(DPOTrainer):
    def __init__(self, beta, model, **kwargs):
        Trainer.__init__(self, model=model, **kwargs)

Custom(beta=0.1, model=m, args=training_args)
"""
    findings = check_source(source)
    assert sorted((f.line, f.kind) for f in findings) == [(6, "trl-argument"), (7, "trl-argument")]
    assert all("DPOConfig(...)" in f.fix and "it reads `args." in f.message for f in findings)


def test_removed_methods_imports_and_patches() -> None:
    source = """
import transformers
from transformers import Trainer, is_torch_tpu_available, TrainingArguments

class Legacy(Trainer):
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        return self.prediction_loop(self.get_eval_dataloader(eval_dataset), "Evaluation")

def _get_train_sampler(self):
    return None

transformers.Trainer._get_train_sampler = _get_train_sampler
"""
    assert _kinds(source) == [(3, "removed-import"), (7, "removed-method"), (9, "method-signature")]


def test_trl_trainers_are_checked_against_the_installed_trl() -> None:
    trl = pytest.importorskip("trl")
    source = """
from trl import SFTTrainer

SFTTrainer(model=model, args=args, dataset_text_field="text", max_seq_length=512, tokenizer=tok, formatting_func=f)
"""
    found = {finding.kind: finding for finding in check_source(source)}
    assert sorted(f.kind for f in check_source(source)) == ["trainer-tokenizer", "trl-argument", "trl-argument"]
    assert f"trl {trl.__version__}" in found["trl-argument"].message and "SFTConfig" in found["trl-argument"].fix


def test_a_src_layout_package_and_a_typing_cast(tmp_path) -> None:
    """``from alpaca_farm.rl.dpo_trainer import Trainer`` in ``examples/dpo.py`` reads ``src/alpaca_farm/...``; the
    arguments unpacked from ``cast(tuple[...], parser.parse_args_into_dataclasses())`` are bound like any others."""
    package = tmp_path / "src" / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "trainer.py").write_text(
        "import transformers\n\nclass Trainer(transformers.Trainer):\n"
        "    def __init__(self, model, args, *argv, **kwargs):\n"
        "        super().__init__(model, args, *argv, **kwargs)\n"
    )
    examples = tmp_path / "examples"
    examples.mkdir()
    script = examples / "train.py"
    script.write_text(
        "from typing import cast\n"
        "from transformers import HfArgumentParser, TrainingArguments\n"
        "from pkg.trainer import Trainer\n\n"
        "parser = HfArgumentParser(TrainingArguments)\n"
        "(training_args,) = cast(tuple[TrainingArguments], parser.parse_args_into_dataclasses())\n"
        "if training_args.evaluation_strategy == 'no':\n"
        "    Trainer(None, training_args, tokenizer=None)\n"
    )
    report = check_paths([script])
    assert sorted((f.line, f.kind) for f in report.findings) == [(7, "removed-attribute"), (8, "trainer-tokenizer")]


def test_project_classes_are_read_from_their_files(tmp_path) -> None:
    package = tmp_path / "project" / "train"
    package.mkdir(parents=True)
    (package / "trainers.py").write_text(
        "from transformers import Trainer\n\n"
        "class Plain(Trainer):\n    pass\n\n"
        "class Own(Trainer):\n    def __init__(self, *args, tokenizer=None, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n        self.tokenizer = tokenizer\n"
    )
    (package / "callbacks.py").write_text("class TrainerCallback:\n    pass\n")
    script = tmp_path / "project" / "run.py"
    script.write_text(
        "from project.train.trainers import Own, Plain\n"
        "from project.train.callbacks import TrainerCallback\n\n"
        "Own(model=m, tokenizer=t)\nPlain(model=m, tokenizer=t)\n\n"
        "class Logger(TrainerCallback):\n    def on_epoch_ended(self):\n        pass\n"
    )
    report = check_paths([script])
    assert [(f.line, f.kind) for f in report.findings] == [(5, "trainer-tokenizer")]


def test_a_magic_goes_on_after_a_backslash(tmp_path) -> None:
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": "%pip install --upgrade \\\n    transformers \\\n    trl\nx = 1",
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "setup.ipynb"
    path.write_text(json.dumps(notebook))
    report = check_paths([path])
    assert report.skipped_cells == [] and report.findings == [] and report.errors == []
