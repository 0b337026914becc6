"""`python -m check_old_code` flags every 4.x pattern of the example script, and nothing in our own code."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import check_old_code
from check_old_code import KIND_LESSONS, CheckOldCodeError, check_paths, check_source, lesson_for
from check_old_code.trl_history import TRL_REMOVED_FIELDS
from course_facts.registry import ROOT, lessons

EXAMPLE = ROOT / "docs" / "examples" / "old_trainer_code.py"

# A piece of each flagged line of the example, the kind of finding it must get, and a piece of the fix.
EXPECTED = {
    "return_outputs=False):  # 4.x": ("compute-loss-signature", "num_items_in_batch=None"),
    "def training_step(self, model, inputs):": ("training-step-signature", "num_items_in_batch=None"),
    "def evaluation_step(self, model, inputs):": ("missing-method", "prediction_step"),
    "def log(self, logs):": ("method-signature", "start_time"),
    "def _maybe_log_save_evaluate(": ("method-signature", "grad_norm"),
    "ignore_keys_for_eval)  # 4.x: 5 of 7": ("call-signature", "grad_norm"),
    "def on_epoch_ended(": ("not-an-event", "on_epoch_end"),
    "def on_evaluation(": ("not-an-event", "on_evaluate"),
    "overwrite_output_dir=True,": ("removed-argument", "resume_from_checkpoint"),
    'evaluation_strategy="epoch",': ("renamed-argument", 'eval_strategy="epoch"'),
    "per_gpu_train_batch_size=16,": ("removed-argument", "per_device_train_batch_size=16"),
    "warmup_ratio=0.1,": ("removed-argument", "warmup_steps=0.1"),
    'logging_dir="./logs",': ("removed-argument", "TENSORBOARD_LOGGING_DIR"),
    "group_by_length=True,": ("removed-argument", "train_sampling_strategy='group_by_length'"),
    'fp16_opt_level="O1",': ("removed-argument", "delete it"),
    "no_cuda=False,": ("renamed-argument", "use_cpu=False"),
    "include_inputs_for_metrics=True,": ("removed-argument", "include_for_metrics=['inputs']"),
    "tokenizer=tokenizer,": ("trainer-tokenizer", "processing_class=tokenizer"),
}

# Cells of the lessons that reproduce a 4.x error on purpose (the post's code, as written). They get no finding once
# the lessons mark them `# check-old-code: expected`; until then they are the only findings the notebooks may have.
DEMONSTRATIONS = {
    ("05_callback_events.ipynb", "EpochCounter"),
    ("07_custom_loss.ipynb", "PostMultiTaskTrainer"),
    ("08_training_step_and_gradients.ipynb", "PrintGradientTrainer"),
    ("08_training_step_and_gradients.ipynb", "GradientMonitorTrainer"),
    ("08_training_step_and_gradients.ipynb", "EvaluationStepTrainer"),
}


def _line_of(fragment: str) -> int:
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines()
    found = [number for number, line in enumerate(lines, start=1) if fragment in line]
    assert len(found) == 1, f"{fragment!r} should be on exactly one line of the example, found {found}"
    return found[0]


@pytest.fixture(scope="module")
def example_findings():
    return check_paths([EXAMPLE]).findings


def test_example_flags_every_pattern_at_its_line(example_findings) -> None:
    by_line = {finding.line: finding for finding in example_findings}
    for fragment, (kind, fix) in EXPECTED.items():
        line = _line_of(fragment)
        assert line in by_line, f"line {line} ({fragment}) was not flagged"
        finding = by_line[line]
        assert finding.kind == kind, (fragment, finding)
        assert fix in finding.fix, (fragment, finding.fix)
        assert re.match(r"lesson \d\d", finding.lesson), finding.lesson
    assert len(example_findings) == len(EXPECTED), [f.location for f in example_findings]


def test_every_marked_line_of_the_example_is_flagged(example_findings) -> None:
    marked = [n for n, line in enumerate(EXAMPLE.read_text().splitlines(), start=1) if "# 4.x" in line]
    assert len(marked) == len(EXPECTED) == len({f.line for f in example_findings})
    assert sorted(marked) == sorted(f.line for f in example_findings)


def test_messages_name_what_the_installed_trainer_does(example_findings) -> None:
    texts = {f.line: f.message for f in example_findings}
    assert "self.training_step(model, inputs, num_items_in_batch)" in texts[_line_of("def training_step(self")]
    assert "num_items_in_batch" in texts[_line_of("def compute_loss(self")]
    assert "renamed `eval_strategy`" in texts[_line_of("evaluation_strategy=")]


def test_each_kind_points_to_its_lesson_in_the_registry() -> None:
    numbers = {entry.number for entry in lessons()}
    expected = {
        "renamed-argument": "17",
        "trainer-tokenizer": "01",
        "compute-loss-signature": "07",
        "training-step-signature": "08",
        "not-an-event": "05",
        "missing-method": "08",
    }
    for kind in KIND_LESSONS:
        number = lesson_for(kind).split()[1].rstrip(",")
        assert number in numbers
        if kind in expected:
            assert number == expected[kind], kind
    sections = {pitfall.section for entry in lessons() for pitfall in entry.pitfalls}
    assert lesson_for("compute-loss-signature").split("section ", 1)[1] in sections


def test_course_solutions_have_no_findings() -> None:
    report = check_paths([ROOT / "exercises" / "solutions"])
    assert len(report.files) >= 10
    assert report.findings == [], [f.format() for f in report.findings]


def test_course_notebooks_have_no_findings_but_their_demonstrations() -> None:
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    report = check_paths(notebooks)
    unexpected = [
        f.format()
        for f in report.findings
        if (Path(f.path).name, re.search(r"`(\w+)\.", f.message).group(1)) not in DEMONSTRATIONS
    ]
    assert unexpected == []
    assert report.skipped_cells == []


def test_overrides_that_fit_the_installed_calls_pass() -> None:
    source = """
from transformers import Trainer, TrainerCallback

class Fine(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False, **kwargs):
        return super().compute_loss(model, inputs, return_outputs, **kwargs)

    def training_step(self, *args, **kwargs):
        return super().training_step(*args, **kwargs)

    def my_helper(self):
        return 1

class Watch(TrainerCallback):
    def on_step_end(self, args, state, control, **kwargs):
        pass

    def not_an_event_name(self):
        pass
"""
    assert check_source(source) == []


def test_overrides_that_do_not_fit_are_flagged() -> None:
    source = """
import transformers

class Broken(transformers.Trainer):
    def training_step(self, model, inputs, **kwargs):
        return 0.0

    def get_batch_samples(self, epoch_iterator, num_batches):
        return [], None

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys, extra):
        return None  # no release ever called it in a way this takes: not something 5.x broke, left out

    def compute_losses(self, model, inputs):
        return 0.0

class Child(Broken):
    def on_step_end(self):
        pass
"""
    found = {finding.line: finding for finding in check_source(source)}
    assert found[5].kind == "training-step-signature" and "2 positional" in found[5].message
    assert found[8].kind == "method-signature" and "2 positional" in found[8].message
    assert 11 not in found
    assert found[14].kind == "missing-method" and "calls `compute_loss`" in found[14].message
    assert 18 not in found  # Child is a Trainer, not a callback: on_step_end is just a method there
    assert len(found) == 3


def test_only_transformers_callbacks_are_checked_for_events() -> None:
    source = """
from keras.callbacks import Callback
from transformers import EarlyStoppingCallback

class KerasLogger(Callback):
    def on_train_batch_end(self, batch, logs=None):
        pass

class Patient(EarlyStoppingCallback):
    def on_evaluation(self, args, state, control, **kwargs):
        pass
"""
    found = check_source(source)
    assert [(f.line, f.kind) for f in found] == [(10, "not-an-event")]


def test_arguments_typos_and_unknown_trainer_keywords() -> None:
    source = """
from transformers import Trainer, TrainingArguments
args = TrainingArguments(output_dir="x", learnig_rate=1e-4, eval_strategy="steps")
trainer = Trainer(model=None, args=args, compute_metric=None)
"""
    found = {finding.line: finding for finding in check_source(source)}
    assert found[3].kind == "unknown-argument" and "learning_rate" in found[3].fix
    assert found[4].kind == "trainer-argument" and "compute_metrics" in found[4].fix
    assert len(found) == 2


def test_expected_errors_are_not_counted() -> None:
    source = """
from transformers import TrainerCallback, TrainingArguments
try:
    TrainingArguments(output_dir="x", evaluation_strategy="steps")
except TypeError as error:
    print(error)

class Demo(TrainerCallback):  # check-old-code: expected (the post's code)
    def on_epoch_ended(self, args, state, control, **kwargs):
        pass
"""
    report = check_old_code._check_units([check_old_code._Unit("demo.py", source)])
    assert report.findings == []
    assert {f.kind for f in report.expected} == {"renamed-argument", "not-an-event"}


def test_only_the_checkers_own_marker_counts() -> None:
    source = "from transformers import TrainingArguments\nTrainingArguments(output_dir='x', no_cuda=True)  # {}\n"
    assert check_source(source.format("check-old-code: expected")) == []
    assert [f.kind for f in check_source(source.format("migrate: expected"))] == ["renamed-argument"]


def test_notebook_cells_lines_and_magics(tmp_path) -> None:
    notebook = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# title"]},
            {"cell_type": "code", "metadata": {}, "source": ["%pip install transformers\n", "x = 1 != 2"]},
            {"cell_type": "code", "metadata": {}, "source": "%%bash\necho hi"},
            {
                "cell_type": "code",
                "metadata": {},
                "source": "from transformers import TrainingArguments\n\nargs = TrainingArguments(no_cuda=True)",
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "old.ipynb"
    path.write_text(json.dumps(notebook))
    report = check_paths([path])
    assert [(f.cell, f.line, f.kind) for f in report.findings] == [(4, 3, "renamed-argument")]
    assert report.findings[0].location == f"{path} cell 4:3"
    assert report.skipped_cells == []


def test_cli_exit_codes_and_output(tmp_path, capsys) -> None:
    command = [sys.executable, "-m", "check_old_code"]
    flagged = subprocess.run([*command, str(EXAMPLE)], capture_output=True, text=True, cwd=ROOT)
    assert flagged.returncode == 1
    assert f"{EXAMPLE}:{_line_of('warmup_ratio=0.1,')}: TrainingArguments has no `warmup_ratio`" in flagged.stdout
    assert "fix: warmup_steps=0.1" in flagged.stdout and "taught in: lesson 17" in flagged.stdout
    clean = tmp_path / "clean.py"
    clean.write_text("from transformers import TrainingArguments\nTrainingArguments(eval_strategy='steps')\n")
    assert check_old_code.main([str(clean)]) == 0
    assert "0 finding(s)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("missing.py", None, "no such file or folder"),
        ("binary.py", b"\xff\xfe\x00bad", "not UTF-8"),
        ("broken.ipynb", b"{not json", "not a valid notebook"),
        ("notes.txt", b"text", "not a Python file"),
        ("syntax.py", b"def broken(:\n", "cannot parse it as Python"),
    ],
)
def test_clear_errors_for_bad_paths(tmp_path, capsys, name, content, message) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    report = check_paths([path])
    assert len(report.errors) == 1 and message in report.errors[0] and str(path) in report.errors[0]
    assert report.exit_status == 2
    assert check_old_code.main([str(path)]) == 2
    assert message in capsys.readouterr().err
    with pytest.raises(CheckOldCodeError, match="at least one"):
        check_paths([])


def test_unreadable_file_is_a_clear_error(tmp_path, monkeypatch) -> None:
    path = tmp_path / "locked.py"
    path.write_text("x = 1\n")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_text", refuse)
    assert "cannot be read (Permission denied)" in check_paths([path]).errors[0]


# ---------------------------------------------------------------------------------------------------------------
# Judging overrides by how the installed Trainer calls them
# ---------------------------------------------------------------------------------------------------------------
def _kinds(source: str) -> list[tuple[int, str]]:
    return sorted((finding.line, finding.kind) for finding in check_source(source))


def test_overrides_the_trainer_calls_by_keyword_or_not_at_all_pass() -> None:
    source = """
from transformers import Trainer

class QA(Trainer):
    def evaluate(self, eval_dataset=None, eval_examples=None, ignore_keys=None, metric_key_prefix="eval"):
        return {}

    def predict(self, test_dataset, test_examples, ignore_keys=None):
        return None

class OldQA(Trainer):
    def evaluate(self, eval_dataset=None, eval_examples=None, ignore_keys=None):
        return {}
"""
    # QA: keywords only, and the Trainer never calls self.predict. OldQA lacks metric_key_prefix, which every
    # release on the ladder passes for a dict of eval sets: not something 5.x changed.
    assert _kinds(source) == []


def test_a_method_handed_on_as_a_function_is_judged_by_how_it_is_called() -> None:
    source = """
from transformers import Trainer

class Sampled(Trainer):
    def _get_train_sampler(self):
        return None

class Fine(Trainer):
    def _get_train_sampler(self, train_dataset=None):
        return None
"""
    found = check_source(source)
    assert [(f.line, f.kind) for f in found] == [(5, "method-signature")]
    assert "self._get_train_sampler(train_dataset)" in found[0].message
    assert [1, []] in check_old_code.installed_calls()["_get_train_sampler"]  # sampler_fn(dataset)


def test_a_new_helper_is_only_suspicious_when_nothing_calls_it() -> None:
    source = """
from transformers import Trainer

class Helpful(Trainer):
    def mc_evaluate(self):
        return self.evaluation_loop

    def evaluation_step(self, model, inputs):
        return 0

    def run(self):
        return self.mc_evaluate(), self.evaluation_step(None, None)

class Typo(Trainer):
    def compute_los(self, model, inputs):
        return 0
"""
    assert _kinds(source) == [(15, "missing-method")]


def test_a_subclass_named_trainer_is_a_trainer() -> None:
    source = """
import transformers

class Trainer(transformers.Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return 0
"""
    assert _kinds(source) == [(5, "compute-loss-signature")]


def test_super_calls_and_super_init_are_checked() -> None:
    source = """
from transformers import Trainer

class Saver(Trainer):
    def __init__(self, *args, tokenizer=None, **kwargs):
        super().__init__(*args, tokenizer=tokenizer, **kwargs)

    def _save_checkpoint(self, model, trial, metrics=None):
        super()._save_checkpoint(model, trial, metrics)

class Fine(Trainer):
    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)
"""
    found = {finding.line: finding for finding in check_source(source)}
    assert sorted((line, f.kind) for line, f in found.items()) == [(6, "trainer-tokenizer"), (9, "call-signature")]
    assert "_save_checkpoint(model, trial)" in found[9].fix


def test_positional_trainer_arguments_that_moved() -> None:
    source = """
from transformers import Trainer

ok = Trainer(model, args, collator, train_set, eval_set, tokenizer)
moved = Trainer(model, args, collator, train_set, eval_set, tokenizer, None, compute_metrics)
"""
    found = check_source(source)
    assert [(f.line, f.kind) for f in found] == [(5, "trainer-positional")]
    assert "`compute_metrics` on the 4.x Trainer" in found[0].message and "`compute_loss_func`" in found[0].message


# ---------------------------------------------------------------------------------------------------------------
# Arguments classes, read attributes, callbacks, imports, patches
# ---------------------------------------------------------------------------------------------------------------
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


# ---------------------------------------------------------------------------------------------------------------
# Kinds found on published packages' files (tests/check_old_code_corpus): each trap, and the correct code left alone
# ---------------------------------------------------------------------------------------------------------------
PARSE_DICT = """
from transformers import HfArgumentParser, TrainingArguments


def train(output_dir, device):
    parser = HfArgumentParser((TrainingArguments))
    settings = {{"output_dir": output_dir, "do_train": True}}
    settings["{cpu}"] = device == "cpu"
    settings["{strategy}"] = "steps"
    return parser.parse_dict(settings, allow_extra_keys={extra})[0]
"""


def test_parse_dict_with_extra_keys_allowed_drops_old_keys_without_a_word() -> None:
    source = PARSE_DICT.format(cpu="no_cuda", strategy="evaluation_strategy", extra=True)
    found = check_source(source)
    assert [(f.line, f.kind) for f in found] == [(8, "renamed-argument"), (9, "renamed-argument")]
    assert all("allow_extra_keys=True" in f.message and "silently" in f.message for f in found)
    assert "write the key 'use_cpu' in `settings`" in found[0].fix
    assert "write the key 'eval_strategy' in `settings`" in found[1].fix


def test_parse_dict_without_extra_keys_refuses_old_keys_and_new_keys_pass() -> None:
    refused = check_source(PARSE_DICT.format(cpu="no_cuda", strategy="evaluation_strategy", extra=False))
    assert [(f.line, f.kind) for f in refused] == [(8, "renamed-argument"), (9, "renamed-argument")]
    assert not any("silently" in f.message for f in refused)
    assert check_source(PARSE_DICT.format(cpu="use_cpu", strategy="eval_strategy", extra=True)) == []


BRANCHES = """
from transformers import TrainingArguments
from trl import RewardConfig


def build(reward, block_size):
    settings = dict(output_dir="out", eval_strategy="steps")
{before}    if reward:
{inside}        args = RewardConfig(**settings)
    else:
        args = TrainingArguments(**settings)
    return args
"""


def test_a_key_set_on_one_branch_is_judged_by_the_class_of_that_branch() -> None:
    inside = BRANCHES.format(before="", inside='        settings["max_length"] = block_size\n')
    assert check_source(inside) == []
    before = BRANCHES.format(before='    settings["max_length"] = block_size\n', inside="")
    found = check_source(before)
    assert [(f.line, f.kind) for f in found] == [(8, "unknown-argument")]
    assert "TrainingArguments has no `max_length`" in found[0].message


TRL_CONFIG = """
from trl import DPOConfig

config = DPOConfig(output_dir="out", beta=0.1, {keyword}=128)
"""


def test_a_field_removed_from_a_trl_config_is_not_called_a_typo() -> None:
    (found,) = check_source(TRL_CONFIG.format(keyword="max_prompt_length"))
    assert (found.line, found.kind) == (4, "removed-argument")
    assert "DPOConfig" in found.message and "removed from trl" in found.message and "typo" not in found.message
    (typo,) = check_source(TRL_CONFIG.format(keyword="max_promt_length"))
    assert typo.kind == "unknown-argument" and "typo" in typo.message
    assert check_source(TRL_CONFIG.format(keyword="max_length")) == []
    (renamed,) = check_source('from trl import SFTConfig\nSFTConfig(output_dir="o", max_seq_length=512)\n')
    assert (renamed.kind, renamed.fix) == ("renamed-argument", "max_length=512") and "trl renamed" in renamed.message


def test_the_trl_fields_recorded_as_removed_are_gone_from_the_installed_trl() -> None:
    import dataclasses

    import trl

    for name, removed in TRL_REMOVED_FIELDS.items():
        assert removed and not removed & {f.name for f in dataclasses.fields(getattr(trl, name))}, name


CALLBACK_TOKENIZER = """
from transformers import Trainer, TrainerCallback


class SaveAtEnd(TrainerCallback):
    def on_train_end(self, args, state, control, **kwargs):
        trainer = Trainer(args=args, model=kwargs.get("model"), {keyword}=kwargs.get("{key}"))
        trainer.save_model(args.output_dir)
"""


def test_the_fixes_for_a_tokenizer_read_from_callback_kwargs_read_processing_class() -> None:
    found = {f.kind: f for f in check_source(CALLBACK_TOKENIZER.format(keyword="tokenizer", key="tokenizer"))}
    assert sorted(found) == ["callback-tokenizer", "trainer-tokenizer"]
    assert found["trainer-tokenizer"].fix == 'processing_class=kwargs.get("processing_class")'
    assert found["callback-tokenizer"].fix == 'kwargs.get("processing_class")'
    fixed = CALLBACK_TOKENIZER.format(keyword="processing_class", key="processing_class")
    assert check_source(fixed) == []


def test_a_name_bound_to_one_arguments_class_or_another() -> None:
    source = """
from transformers import Seq2SeqTrainingArguments, TrainingArguments


def make(seq2seq):
    if seq2seq:
        arg_class = Seq2SeqTrainingArguments
    else:
        arg_class = TrainingArguments
    return arg_class(output_dir="out", {keyword}="steps")
"""
    found = check_source(source.format(keyword="evaluation_strategy"))
    assert [(f.line, f.kind) for f in found] == [(10, "renamed-argument")]
    assert check_source(source.format(keyword="eval_strategy")) == []


def test_keys_a_class_writes_into_a_dict_on_self() -> None:
    source = """
from transformers import Trainer, TrainingArguments


class Wrapper:
    def init_training_args(self):
        self.trainer_kwargs = {{}}
        self.trainer_kwargs["{strategy}"] = "epoch"
        self.trainer_kwargs["reward_model"] = None

    def train(self, output_dir):
        self.trainer_kwargs["output_dir"] = output_dir
        return Trainer(args=TrainingArguments(**self.trainer_kwargs))
"""
    found = check_source(source.format(strategy="evaluation_strategy"))
    assert [(f.line, f.kind) for f in found] == [(8, "renamed-argument")]
    assert "self.trainer_kwargs" in found[0].message
    assert check_source(source.format(strategy="eval_strategy")) == []


def test_dataclasses_replace_on_an_arguments_object() -> None:
    source = """
import dataclasses

from transformers import TrainingArguments


def prepare(args: TrainingArguments) -> TrainingArguments:
    return dataclasses.replace(args, {keyword}=True, remove_unused_columns=False)
"""
    found = check_source(source.format(keyword="include_inputs_for_metrics"))
    assert [(f.line, f.kind) for f in found] == [(8, "removed-argument")]
    assert "include_for_metrics" in found[0].fix
    assert check_source(source.format(keyword="eval_on_start")) == []


def test_an_attribute_read_after_a_hasattr_guard() -> None:
    source = """
from transformers import Trainer


class AmpTrainer(Trainer):
    def training_step(self, model, inputs, num_items_in_batch=None):
        if {test}:
            return 0
        return super().training_step(model, inputs, num_items_in_batch)
"""
    assert check_source(source.format(test="hasattr(self, 'use_amp') and self.use_amp")) == []
    found = check_source(source.format(test="self.use_amp"))
    assert [(f.line, f.kind) for f in found] == [(7, "removed-attribute")]


def test_a_trl_trainer_given_args_through_a_dict_and_a_name_bound_on_branches() -> None:
    source = """
from transformers import TrainingArguments
from trl import DPOTrainer, RewardConfig, RewardTrainer


def build(reward, model, data):
    if reward:
        args = RewardConfig(output_dir="out")
    else:
        args = TrainingArguments(output_dir="out")
    common = dict(args=args, model=model)
    if reward:
        return RewardTrainer(**common, train_dataset=data)
    return DPOTrainer(**common, train_dataset=data)
"""
    (found,) = check_source(source)
    assert (found.line, found.kind) == (11, "trl-argument") and "`DPOTrainer(args=args)`" in found.message


def test_a_trainer_class_looked_up_by_type_and_called_under_isinstance() -> None:
    source = """
from transformers import TrainingArguments


class Task: ...
class ForSFT(Task): ...
class ForPPO(Task): ...


class Wrapper:
    def __init__(self, task):
        from trl import DPOTrainer, SFTTrainer

        self.task = task
        self.trainer_mapping = {{ForSFT: SFTTrainer, ForPPO: DPOTrainer}}
        self.trainer_cls = self.trainer_mapping[type(self.task)]
        self.trainer_kwargs = {{}}
        if isinstance(task, ForPPO):
            self.trainer_kwargs["config"] = None

    def train(self, model, tokenizer, data):
        if isinstance(self.task, ForSFT):
            return self.trainer_cls(model, args=TrainingArguments(output_dir="o"), train_dataset=data,
                                    {keyword}=tokenizer, **self.trainer_kwargs)
"""
    found = check_source(source.format(keyword="tokenizer"))
    assert [(f.line, f.kind) for f in found] == [(24, "trainer-tokenizer")]
    assert "SFTTrainer" in found[0].message
    assert check_source(source.format(keyword="processing_class")) == []


def test_code_under_type_checking_never_runs_and_is_not_judged() -> None:
    source = """
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trl import AutoModelForCausalLMWithValueHead
else:
    from trl import PPOConfig
{outside}
"""
    found = check_source(source.format(outside=""))
    assert [(f.line, f.kind) for f in found] == [(7, "removed-import")]
    outside = check_source(source.format(outside="from trl import AutoModelForCausalLMWithValueHead"))
    assert [(f.line, f.kind) for f in outside] == [(7, "removed-import"), (8, "removed-import")]


def _copies(target: Path, count: int) -> list[Path]:
    """``count`` copies of the example script under ``target``, each in its own folder."""
    written = []
    for index in range(count):
        path = target / f"copy_{index:02d}" / "train.py"
        path.parent.mkdir(parents=True)
        path.write_bytes(EXAMPLE.read_bytes())
        written.append(path)
    return written


def test_an_unreadable_file_does_not_hide_the_others(tmp_path, capsys) -> None:
    tree = tmp_path / "tree"
    files = _copies(tree, 3)
    broken = tmp_path / "broken.py"
    broken.write_text("def broken(:\n")
    alone = check_paths([tree])
    mixed = check_paths([broken, tree, tmp_path / "missing.py"])
    assert len(mixed.errors) == 2 and any(str(broken) in e for e in mixed.errors)
    assert any("missing.py: no such file" in e for e in mixed.errors)
    assert alone.findings and mixed.findings == alone.findings and mixed.exit_status == 2
    assert check_old_code.main([str(broken), str(files[0])]) == 2
    output = capsys.readouterr()
    assert "cannot parse it as Python" in output.err and str(files[0]) in output.out


def test_a_run_over_many_files_takes_about_one_transformers_import(tmp_path) -> None:
    """40 files, in a fresh process, take no longer than importing the Trainer plus 2 seconds."""
    _copies(tmp_path, 40)
    script = (
        "import time, json, sys\n"
        "start = time.perf_counter()\nfrom transformers import Trainer\nimported = time.perf_counter()\n"
        "from check_old_code import check_paths\nreport = check_paths([sys.argv[1]])\n"
        "print(json.dumps([imported - start, time.perf_counter() - imported, len(report.files)]))\n"
    )
    run = subprocess.run([sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    import_seconds, check_seconds, count = json.loads(run.stdout.strip().splitlines()[-1])
    assert count == 40 and check_seconds < import_seconds + 2.0, (import_seconds, check_seconds)


# ---------------------------------------------------------------------------------------------------------------
# The package: one concern a module, small modules, imports that only go down, one reader of the ladder
# ---------------------------------------------------------------------------------------------------------------
PACKAGE = ROOT / "check_old_code"


def _package_imports() -> dict[str, set[str]]:
    """``{module: the package's modules it imports}``, read from each module's ``from .x import ...`` lines."""
    graph = {}
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[path.stem] = {
            node.module or "__init__" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1
        }
        assert not any(isinstance(node, ast.ImportFrom) and node.level > 1 for node in ast.walk(tree)), path
    return graph


def test_package_modules_are_small_typed_and_documented() -> None:
    paths = sorted(PACKAGE.glob("*.py"))
    assert len(paths) >= 10
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 800, path.name
        tree = ast.parse(text)
        assert ast.get_docstring(tree), f"{path.name} has no module docstring"
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                assert ast.get_docstring(node), f"{path.name}: {node.name} has no docstring"
            if isinstance(node, ast.FunctionDef):
                assert node.returns is not None or node.name == "__init__", f"{path.name}: {node.name} return type"


def test_package_imports_have_no_cycle() -> None:
    graph = _package_imports()
    assert set().union(*graph.values()) <= set(graph), "a module imports one that is not in the package"
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"import cycle: {' -> '.join((*path, name))}"
        if name not in done:
            for imported in sorted(graph[name]):
                visit(imported, (*path, name))
            done.add(name)

    for name in sorted(graph):
        visit(name, ())
    assert all(
        "__init__" not in imported and "cli" not in imported
        for name, imported in graph.items()
        if name not in ("__init__", "__main__")
    )


def test_only_ladder_results_reads_the_ladder() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        if path.stem in ("ladder_results", "__init__"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        assert not imported & {"ladder", "LADDER_RESULTS", "ROOT"}, path.name
        reads_json = any(
            isinstance(node, ast.Import) and "json" in {a.name for a in node.names} for node in ast.walk(tree)
        )
        assert not reads_json or path.stem == "sources", f"{path.name} reads JSON: only sources (notebooks) may"
