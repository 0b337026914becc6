"""`python -m helpers.check_old_code` flags every 4.x pattern of the example script, and nothing in our own code."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import check_old_code as migrate
from helpers.check_old_code import KIND_LESSONS, MigrateError, check_paths, check_source, lesson_for
from helpers.registry import ROOT, lessons

EXAMPLE = ROOT / "docs" / "examples" / "old_trainer_code.py"

# A piece of each flagged line of the example, the kind of finding it must get, and a piece of the fix.
EXPECTED = {
    "return_outputs=False):  # 4.x": ("compute-loss-signature", "num_items_in_batch=None"),
    "def training_step(self, model, inputs):": ("training-step-signature", "num_items_in_batch=None"),
    "def evaluation_step(self, model, inputs):": ("missing-method", "prediction_step"),
    "def log(self, logs):": ("method-signature", "start_time"),
    "def _maybe_log_save_evaluate(": ("method-signature", "grad_norm"),
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
# the lessons mark them `# migrate: expected`; until then they are the only findings the notebooks may have.
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
        "renamed-argument": "02",
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
    report = check_paths([ROOT / "helpers" / "solutions"])
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

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys, extra):
        return None

    def compute_losses(self, model, inputs):
        return 0.0

class Child(Broken):
    def on_step_end(self):
        pass
"""
    found = {finding.line: finding for finding in check_source(source)}
    assert found[5].kind == "training-step-signature" and "2 positional" in found[5].message
    assert found[8].kind == "method-signature" and "`extra`" in found[8].message
    assert found[11].kind == "missing-method" and "`compute_loss` is" in found[11].message
    assert 15 not in found  # Child is a Trainer, not a callback: on_step_end is just a method there
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
from transformers import TrainingArguments
try:
    TrainingArguments(output_dir="x", evaluation_strategy="steps")
except TypeError as error:
    print(error)

class Demo(TrainerCallback):  # migrate: expected (the post's code)
    def on_epoch_ended(self, args, state, control, **kwargs):
        pass
"""
    report = migrate._check_units([migrate._Unit("demo.py", source)])
    assert report.findings == []
    assert {f.kind for f in report.expected} == {"renamed-argument", "not-an-event"}


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
    command = [sys.executable, "-m", "helpers.check_old_code"]
    flagged = subprocess.run([*command, str(EXAMPLE)], capture_output=True, text=True, cwd=ROOT)
    assert flagged.returncode == 1
    assert f"{EXAMPLE}:{_line_of('warmup_ratio=0.1,')}: TrainingArguments has no `warmup_ratio`" in flagged.stdout
    assert "fix: warmup_steps=0.1" in flagged.stdout and "taught in: lesson 02" in flagged.stdout
    clean = tmp_path / "clean.py"
    clean.write_text("from transformers import TrainingArguments\nTrainingArguments(eval_strategy='steps')\n")
    assert migrate.main([str(clean)]) == 0
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
    with pytest.raises(MigrateError, match=message):
        check_paths([path])
    assert migrate.main([str(path)]) == 2
    assert message in capsys.readouterr().err


def test_unreadable_file_is_a_clear_error(tmp_path, monkeypatch) -> None:
    path = tmp_path / "locked.py"
    path.write_text("x = 1\n")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(Path, "read_text", refuse)
    with pytest.raises(MigrateError, match="cannot be read \\(Permission denied\\)"):
        check_paths([path])
