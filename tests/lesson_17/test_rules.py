"""Lesson 17's rules (old Trainer code), tried beyond the lesson's run: the renamed arguments on real runs with
accumulation 2, a compute_loss override without num_items_in_batch at accumulation 1 and 2, resuming by the
argument and by train(), the checker's exit code on a script, a notebook and a folder."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rule_training import trainer
from transformers import Trainer, TrainingArguments

from check_old_code.cli import main as check_old_code_main

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.rule(
    lesson="17",
    section="Recap",
    text="`evaluation_strategy` is `eval_strategy`, `warmup_ratio` is a fractional `warmup_steps`, "
    '`group_by_length=True` is `train_sampling_strategy="group_by_length"`',
    covers=["the old names refused", "warmup share against the old ceil(ratio x N) for N = 1..300", "accumulation 2"],
)
def test_renamed_arguments(tmp_path: Any) -> None:
    for old in ({"evaluation_strategy": "steps"}, {"warmup_ratio": 0.1}, {"group_by_length": True}):
        with pytest.raises(TypeError):
            TrainingArguments(output_dir=str(tmp_path), **old)
    share = TrainingArguments(output_dir=str(tmp_path), warmup_steps=0.1)
    assert all(share.get_warmup_steps(total) == math.ceil(0.1 * total) for total in range(1, 301))
    from tiny_training import toy_dataset

    run = trainer(
        tmp_path,
        rows=13,
        gradient_accumulation_steps=2,
        warmup_steps=0.3,
        eval_strategy="steps",
        eval_steps=2,
        eval_dataset=toy_dataset(4),
    )
    run.train()
    assert run.args.eval_strategy == "steps" and run.args.get_warmup_steps(run.state.max_steps) == math.ceil(0.3 * 4)


@pytest.mark.rule(
    lesson="17",
    section="Recap",
    text="Overrides need the 5.x signatures (`num_items_in_batch`)",
    covers=["compute_loss without num_items_in_batch", "accumulation 1 and 2", "TinyModel"],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_an_old_compute_loss_signature_fails(tmp_path: Any, accumulation: int) -> None:
    class Old(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False):  # type: ignore[override]
            outputs = model(**inputs)
            return (outputs["loss"], outputs) if return_outputs else outputs["loss"]

    with pytest.raises(TypeError, match="num_items_in_batch"):
        trainer(tmp_path, rows=8, trainer_class=Old, gradient_accumulation_steps=accumulation).train()


@pytest.mark.rule(
    lesson="17",
    section="Recap",
    text="nothing is reported anywhere unless `report_to` says so",
    covers=["the default arguments", "a Trainer built on them (no integration callback)"],
)
def test_nothing_is_reported_by_default(tmp_path: Any) -> None:
    args = TrainingArguments(output_dir=str(tmp_path))
    assert args.report_to in ([], "none", ["none"])
    from tiny_training import TinyModel

    names = {type(callback).__name__ for callback in Trainer(model=TinyModel(), args=args).callback_handler.callbacks}
    assert names <= {"DefaultFlowCallback", "PrinterCallback", "ProgressCallback", "NotebookProgressCallback"}


@pytest.mark.rule(
    lesson="17",
    section="Recap",
    text="resuming is always `trainer.train(resume_from_checkpoint=...)`.",
    covers=[
        "TrainingArguments(resume_from_checkpoint=...) alone (starts over)",
        "accumulation 2",
        "a step-4 checkpoint",
    ],
)
def test_resuming_needs_train_resume_from_checkpoint(tmp_path: Any) -> None:
    trainer(tmp_path / "first", rows=16, gradient_accumulation_steps=2, save_strategy="steps", save_steps=2).train()
    checkpoint = str(tmp_path / "first" / "checkpoint-2")

    class FirstStep(Trainer):
        first: int | None = None

        def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> Any:
            if type(self).first is None:
                type(self).first = self.state.global_step
            return super().training_step(model, inputs, num_items_in_batch)

    trainer(
        tmp_path / "arg",
        rows=16,
        gradient_accumulation_steps=2,
        resume_from_checkpoint=checkpoint,
        trainer_class=FirstStep,
    ).train()
    assert FirstStep.first == 0  # the argument alone starts over
    FirstStep.first = None
    trainer(tmp_path / "call", rows=16, gradient_accumulation_steps=2, trainer_class=FirstStep).train(
        resume_from_checkpoint=checkpoint
    )
    assert FirstStep.first == 2


@pytest.mark.rule(
    lesson="17",
    section="Recap",
    text="exit code 1 means it found something.",
    covers=["a script", "a notebook", "a folder", "clean code (exit 0)"],
)
def test_the_checker_exit_code(old_code_folder: Any, tmp_path: Any) -> None:
    old = 'from transformers import TrainingArguments\nTrainingArguments("out", evaluation_strategy="steps")\n'
    clean = 'from transformers import TrainingArguments\nTrainingArguments("out", eval_strategy="steps")\n'
    (tmp_path / "old.py").write_text(old)
    (tmp_path / "clean.py").write_text(clean)
    (tmp_path / "nb").mkdir()
    (tmp_path / "nb" / "old.ipynb").write_text(_notebook([_code_cell(old)]))
    # Real processes for a folder (a script and a notebook in it: exit 1) and for clean code (exit 0): the
    # status is what main() returns (check_old_code/__main__.py: sys.exit(main())), so the script and the
    # notebook alone are asked of main() here, without starting the 6-s import of transformers twice more.
    assert old_code_folder["run"].returncode == 1, old_code_folder["run"].stderr
    assert _check_old_code(tmp_path / "clean.py").returncode == 0
    assert check_old_code_main([str(tmp_path / "old.py")]) == 1
    assert check_old_code_main([str(tmp_path / "nb" / "old.ipynb")]) == 1


@pytest.mark.rule(
    lesson="17",
    section="Recap",
    text="callback methods must be real event names.",
    covers=[
        "an old name (on_prediction_step is real; on_batch_end is not)",
        "a misspelling",
        "an instance and a class",
    ],
)
def test_callback_methods_must_be_event_names(tmp_path: Any) -> None:
    from transformers import TrainerCallback

    from helpers.callback_events import unknown_event_methods

    class Old(TrainerCallback):
        calls = 0

        def on_batch_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            type(self).calls += 1

        def on_step_ends(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            type(self).calls += 1

        def on_prediction_step(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            pass

    trainer(tmp_path, [Old()], rows=8).train()
    assert Old.calls == 0
    assert set(unknown_event_methods(Old)) == {"on_batch_end", "on_step_ends"} == set(unknown_event_methods(Old()))


OLD_SCRIPT = """from transformers import Trainer, TrainingArguments, TrainerCallback

args = TrainingArguments("out", evaluation_strategy="steps")


class MyTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        return super().compute_loss(model, inputs, return_outputs)


class Cb(TrainerCallback):
    def on_batch_end(self, args, state, control, **kwargs):
        pass
"""


def _code_cell(source: str) -> dict[str, Any]:
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}


def _notebook(cells: list[dict[str, Any]]) -> str:
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def _check_old_code(target: Path) -> subprocess.CompletedProcess[str]:
    """``python -m check_old_code TARGET`` as a learner runs it: a fresh process (about 6 s, importing
    transformers to read the installed Trainer)."""
    command = [sys.executable, "-m", "check_old_code", str(target)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True)


@pytest.fixture(scope="module")
def old_code_folder(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A folder holding OLD_SCRIPT as a script and as a notebook's second cell, and the one command-line run on
    it that the exit-code and the findings tests both read."""
    folder = tmp_path_factory.mktemp("old_code")
    (folder / "old.py").write_text(OLD_SCRIPT)
    (folder / "old.ipynb").write_text(
        _notebook([{"cell_type": "markdown", "metadata": {}, "source": "# notes"}, _code_cell(OLD_SCRIPT)])
    )
    return {"folder": folder, "run": _check_old_code(folder)}


@pytest.mark.rule(
    lesson="17",
    section="Recap",
    text="each finding gives the line, what 5.x does, the fix and the lesson",
    covers=[
        "a folder holding a script and a notebook (cell and line)",
        "three kinds of finding: a renamed argument, an old compute_loss signature, a callback name that is no event",
    ],
)
@pytest.mark.rule(
    lesson="17",
    section="The pattern",
    text="Read a finding from its three lines: `file:line:` and what the installed Trainer does with that line; "
    "`fix:`, what to write instead; `taught in:`, the lesson and section that show it on a run.",
    covers=[
        "every finding of a script and a notebook in a folder: three lines, the right line number, the installed "
        "release named, a fix, and a lesson whose notebook has that section heading",
    ],
)
def test_each_finding_gives_line_fix_and_lesson(old_code_folder: Any) -> None:
    import re

    from tools.rules import main_text_sections, notebook_for

    folder, done = old_code_folder["folder"], old_code_folder["run"]  # one run on the folder: script and notebook
    expected_lines = [3, 7, 12]
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.strip()][:-1]  # the last line is the summary
    assert len(lines) % 3 == 0, done.stdout
    found = [lines[index : index + 3] for index in range(0, len(lines), 3)]

    import transformers

    assert len(found) == 6
    for place in (f"{folder / 'old.py'}:", f"{folder / 'old.ipynb'} cell 2:"):
        mine = [where for where, _, _ in found if where.startswith(place)]
        assert sorted(int(re.match(r"(\d+): ", where[len(place) :]).group(1)) for where in mine) == expected_lines
    for where, fix, taught in found:
        assert transformers.__version__ in where and fix.startswith("    fix: ") and len(fix) > 12
        lesson, section = re.fullmatch(r"    taught in: lesson (\d\d), section (.+)", taught).groups()
        headings = [heading for heading, _ in main_text_sections(notebook_for(lesson))]
        assert any(heading.startswith(section) for heading in headings), (lesson, section)


@pytest.mark.rule(
    lesson="17",
    section="1. What an old argument became",
    text="An argument that 5.x no longer has is a `TypeError` when `TrainingArguments` is built.",
    covers=["every renamed and removed argument of 4.8.2 in check_old_code.old_arguments, one at a time"],
)
@pytest.mark.rule(
    lesson="17",
    section="1. What an old argument became",
    text="`port_kwargs` applies the map: renamed arguments move, removed ones with a replacement are rewritten, the "
    "rest are dropped with a note that says what to do instead.",
    covers=[
        "every renamed argument (moves, value kept)",
        "every removed one with a replacement (rewritten: its new field, with the chosen value where there is one)",
        "every removed one without (dropped, the note names its fate's advice)",
    ],
)
def test_old_arguments_fail_and_port_kwargs_follows_the_map(tmp_path: Any) -> None:
    from check_old_code.old_arguments import REMOVED, RENAMED, fates_with_status, port_kwargs

    gone = {**fates_with_status(RENAMED), **fates_with_status(REMOVED)}
    fields = {name for name in TrainingArguments.__dataclass_fields__}
    assert len([name for name in gone if name not in fields]) >= 10
    for name, fate in gone.items():
        if name in fields:
            continue  # a removed name that 5.x reuses is not refused
        with pytest.raises(TypeError, match=name):
            TrainingArguments(output_dir=str(tmp_path), **{name: True})
        value = True if fate.new_value is not None else object()
        ported, notes = port_kwargs({name: value})
        if fate.new_name is None:
            assert ported == {} and any(fate.note in note for note in notes), name
        else:
            expected = fate.new_value if fate.new_value is not None else value
            assert ported == {fate.new_name: expected}, name
