"""`python -m check_old_code` flags every 4.x pattern of the example script, and nothing in our own code; its
command line, its errors for bad or unreadable paths, and a run over many files.

The other kinds of finding: test_check_old_code_overrides.py, _arguments.py, _published.py; the package's own
structure: test_check_old_code_package.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import check_old_code
from check_old_code import KIND_LESSONS, CheckOldCodeError, check_paths, check_source, lesson_for
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


def test_cli_exit_codes_and_output(fresh_process, tmp_path, capsys) -> None:
    flagged = fresh_process  # `python -m check_old_code EXAMPLE`, run as -m runs it, after the timed check
    assert flagged.returncode == 1, flagged.stderr[-3000:]
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


# One fresh process serves two tests (each start imports transformers: about 6 s of CPU): it times a check of 40
# files against the import of the Trainer, prints the figures, then runs the command line on the example script as
# `python -m check_old_code EXAMPLE` does (runpy runs the package's __main__, whose exit status ends the process).
FRESH_PROCESS = """
import json, runpy, sys, time
start = time.perf_counter()
from transformers import Trainer
imported = time.perf_counter()
from check_old_code import check_paths
report = check_paths([sys.argv[1]])
print("TIMED", json.dumps([imported - start, time.perf_counter() - imported, len(report.files)]), flush=True)
sys.argv = ["check_old_code", sys.argv[2]]
runpy.run_module("check_old_code", run_name="__main__", alter_sys=True)
"""


@pytest.fixture(scope="module")
def fresh_process(tmp_path_factory) -> subprocess.CompletedProcess[str]:
    folder = tmp_path_factory.mktemp("many")
    _copies(folder, 40)
    command = [sys.executable, "-c", FRESH_PROCESS, str(folder), str(EXAMPLE)]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT)


def test_a_run_over_many_files_takes_about_one_transformers_import(fresh_process) -> None:
    """40 files, in a fresh process, take no longer than importing the Trainer plus 2 seconds."""
    timed = [line for line in fresh_process.stdout.splitlines() if line.startswith("TIMED ")]
    assert len(timed) == 1, fresh_process.stderr[-3000:]
    import_seconds, check_seconds, count = json.loads(timed[0].removeprefix("TIMED "))
    assert count == 40 and check_seconds < import_seconds + 2.0, (import_seconds, check_seconds)
