"""Lesson 10's rules, tried where a learner uses them: accumulation above 1, 2 processes, CPU without --use_cpu.

This file is also the worker its processes run: ``python -m torch.distributed.run --nproc_per_node=2
tests/lesson_10/test_rules.py fixes OUT_DIR`` trains a one-layer BERT built from a config (dropout off, so 1 and 2
processes compute the same numbers) with each loss fix at accumulation 1 and 2, the global batch fixed at 8, and
writes what each process logged to ``OUT_DIR/rank<N>.json``. The lesson's own ``train.py`` (read from the notebook's
``%%writefile`` cells) runs too: on 1 process, on 2 with accumulation 2, and on 2 without ``--use_cpu``.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "10_scaling_out.ipynb"
GLOBAL_BATCH = 8
TOLERANCE = 1e-4  # relative: float32 sums taken in another order by 1 and 2 processes
FIXES: dict[str, dict[str, Any]] = {
    "default": {},
    "no_average": {"average_tokens_across_devices": False},
    "no_kwargs": {},  # trainer.model_accepts_loss_kwargs = False after building the Trainer
}


# ---- the worker: what each process runs ----


def tiny_bert(vocab_size: int) -> Any:
    """A one-layer BERT classifier from a config, dropout off: the same weights on every process."""
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    return BertForSequenceClassification(config)


def rows(count: int) -> list[dict[str, Any]]:
    """``count`` sequences of 8 random ids, labelled by their first id."""
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(5, 100, (count, 8), generator=generator)
    return [{"input_ids": row, "labels": int(row[0] > 50)} for row in ids]


def train_fixes(out_dir: str) -> None:
    """Every fix at accumulation 1 and 2 (16 rows, 2 steps), and the step count of 20 rows at accumulation 2."""
    from transformers import Trainer, TrainingArguments

    world = int(os.environ.get("WORLD_SIZE", "1"))
    report: dict[str, Any] = {}
    for accumulation in (1, 2):
        for fix, settings in FIXES.items():
            args = TrainingArguments(
                output_dir=str(Path(out_dir) / f"{fix}_{accumulation}"),
                per_device_train_batch_size=GLOBAL_BATCH // (world * accumulation),
                gradient_accumulation_steps=accumulation,
                per_device_eval_batch_size=4,
                num_train_epochs=1,
                learning_rate=1e-3,
                logging_steps=1,
                eval_strategy="steps",
                eval_steps=100,
                eval_on_start=True,
                save_strategy="no",
                use_cpu=True,
                report_to="none",
                disable_tqdm=True,
                seed=0,
                **settings,
            )
            trainer = Trainer(tiny_bert(100), args, train_dataset=rows(16), eval_dataset=rows(8))
            if fix == "no_kwargs":
                trainer.model_accepts_loss_kwargs = False
            trainer.train()
            history = trainer.state.log_history
            report[f"{fix}_{accumulation}"] = {
                "loss": [e["loss"] for e in history if "loss" in e],
                "grad_norm": [e["grad_norm"] for e in history if "grad_norm" in e],
                "eval_loss": [e["eval_loss"] for e in history if "eval_loss" in e],
            }
    args = TrainingArguments(
        output_dir=str(Path(out_dir) / "steps"),
        per_device_train_batch_size=4,
        gradient_accumulation_steps=2,
        use_cpu=True,
        report_to="none",
        max_steps=-1,
        num_train_epochs=1,
        save_strategy="no",
        disable_tqdm=True,
    )
    trainer = Trainer(tiny_bert(100), args, train_dataset=rows(20))
    trainer.train()
    report["steps_20_rows"] = trainer.state.global_step
    rank = int(os.environ.get("RANK", "0"))
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(report))


# ---- the lesson's train.py, from the notebook ----


def script_text() -> str:
    """train.py as the notebook's ``%%writefile`` cells write it."""
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    parts = []
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] == "code" and source.startswith("%%writefile") and "$script_path" in source:
            parts.append(source.split("\n", 1)[1] + "\n")
    assert parts, "the notebook no longer writes train.py with %%writefile $script_path"
    return "".join(parts)


def model_and_data(folder: Path) -> tuple[Path, Path]:
    """A tiny BERT classifier (from a config, with the course's tokenizer) and 16 reviews, saved for train.py."""
    from datasets import Dataset, DatasetDict

    from helpers.data import load_reviews, select_examples
    from helpers.models import load_tokenizer

    tokenizer = load_tokenizer()
    model = tiny_bert(tokenizer.vocab_size)
    model_dir, data_dir = folder / "model", folder / "reviews"
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    reviews = load_reviews()
    DatasetDict(
        train=Dataset.from_dict(select_examples(reviews["train"], 16).to_dict()),
        validation=Dataset.from_dict(select_examples(reviews["validation"], 8).to_dict()),
    ).save_to_disk(data_dir)
    return model_dir, data_dir


# ---- the tests ----


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def _start(command: list[str], cwd: Path = ROOT) -> subprocess.Popen[str]:
    return subprocess.Popen(command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)


def _finish(started: subprocess.Popen[str]) -> str:
    printed, errors = started.communicate(timeout=600)
    assert started.returncode == 0, f"exit code {started.returncode}:\n{errors[-3000:]}"
    return printed


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every launch at once: the fixes on 1 and 2 processes; train.py on 1, on 2 (accumulation 2), on 2 without
    --use_cpu."""
    work = tmp_path_factory.mktemp("rules_10")
    me = str(Path(__file__).resolve())
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2"]
    script = work / "train.py"
    script.write_text(script_text())
    model_dir, data_dir = model_and_data(work)
    common = ["--model", str(model_dir), "--data", str(data_dir), "--layers", "1", "--learning_rate", "1e-3"]
    common += ["--logging_steps", "1", "--save_strategy", "no", "--report_to", "none", "--disable_tqdm", "True"]
    common += ["--num_train_epochs", "1", "--seed", "0", "--ddp_find_unused_parameters", "False"]
    started = {
        "fixes_two": _start([*torchrun, me, "fixes", str(work / "fixes_two")]),
        "script_two": _start(
            [*torchrun, str(script), *common, "--output_dir", str(work / "two"), "--use_cpu", "True"]
            + ["--per_device_train_batch_size", "2", "--gradient_accumulation_steps", "2"],
            cwd=work,
        ),
        "script_no_use_cpu": _start(
            [*torchrun, str(script), *common, "--output_dir", str(work / "no_use_cpu")]
            + ["--per_device_train_batch_size", "4"],
            cwd=work,
        ),
    }
    # the one-process runs here, in this process, while the launches run
    train_fixes(str(work / "fixes_one"))
    one = [*common, "--output_dir", str(work / "one"), "--use_cpu", "True", "--per_device_train_batch_size", "8"]
    printed_here = io.StringIO()
    with contextlib.redirect_stdout(printed_here):
        runpy.run_path(str(script))["main"](one)
    printed = {name: _finish(process) for name, process in started.items()}
    printed["script_one"] = printed_here.getvalue()
    fixes = {
        run: [json.loads(path.read_text()) for path in sorted((work / run).glob("rank*.json"))]
        for run in ("fixes_one", "fixes_two")
    }
    return {"work": work, "printed": printed, "fixes": fixes}


def _ratios(runs: dict[str, Any], run: str, recipe: str) -> dict[str, list[float]]:
    """Each logged value of ``recipe`` over the one-process, accumulation-1 run's, step by step."""
    truth, got = runs["fixes"]["fixes_one"][0]["default_1"], runs["fixes"][run][0][recipe]
    return {key: [a / b for a, b in zip(got[key], truth[key], strict=True)] for key in ("loss", "grad_norm")}


def _all_near(values: list[float], factor: float) -> bool:
    return all(abs(value / factor - 1) < TOLERANCE for value in values)


@pytest.mark.rule(
    lesson="10",
    section="3. The stock model's loss on 2 processes",
    text="Setting `trainer.model_accepts_loss_kwargs = False` after building the Trainer",
    covers=["2 processes, accumulation 1", "2 processes, accumulation 2", "1 process, accumulation 2"],
)
def test_model_accepts_loss_kwargs_false_matches_one_process_at_any_accumulation(runs: dict[str, Any]) -> None:
    for run, accumulation in (("fixes_two", 1), ("fixes_two", 2), ("fixes_one", 2)):
        ratios = _ratios(runs, run, f"no_kwargs_{accumulation}")
        assert _all_near(ratios["loss"], 1) and _all_near(ratios["grad_norm"], 1), (run, accumulation, ratios)


@pytest.mark.rule(
    lesson="10",
    section="3. The stock model's loss on 2 processes",
    text="`average_tokens_across_devices=False` is right at accumulation 1 only",
    covers=["2 processes, accumulation 1", "2 processes, accumulation 2", "the default, accumulation 1 and 2"],
)
def test_average_tokens_false_fixes_accumulation_1_only_and_the_default_doubles_per_factor(
    runs: dict[str, Any],
) -> None:
    expected = {  # the logged loss and grad_norm over the truth: processes x accumulation for the default
        ("no_average", 1): 1.0,
        ("no_average", 2): 2.0,
        ("default", 1): 2.0,
        ("default", 2): 4.0,
    }
    for (fix, accumulation), factor in expected.items():
        ratios = _ratios(runs, "fixes_two", f"{fix}_{accumulation}")
        assert _all_near(ratios["loss"], factor), (fix, accumulation, ratios)
        assert _all_near(ratios["grad_norm"], factor), (fix, accumulation, ratios)


@pytest.mark.rule(
    lesson="10",
    section="Recap",
    text="The global batch is `per_device_train_batch_size × processes × gradient_accumulation_steps`",
    covers=["2 processes, accumulation 2", "an uneven last batch (20 rows, global batch 16)", "train.py's first line"],
)
def test_the_global_batch_and_the_steps(runs: dict[str, Any]) -> None:
    for run, processes in (("fixes_one", 1), ("fixes_two", 2)):
        for report in runs["fixes"][run]:
            assert report["steps_20_rows"] == math.ceil(20 / (4 * processes * 2)), (run, report["steps_20_rows"])
    one = [line for line in runs["printed"]["script_one"].splitlines() if line.startswith("world size")]
    two = [line for line in runs["printed"]["script_two"].splitlines() if line.startswith("world size")]
    assert one == ["world size 1, global batch 8 (8 x 1 x 1), 2 optimizer steps"], one
    assert two == ["world size 2, global batch 8 (2 x 2 x 2), 2 optimizer steps"], two


@pytest.mark.rule(
    lesson="10",
    section="The pattern: one script, any number of processes",
    text="The same file runs everywhere; only the launch changes",
    covers=["train.py on 2 processes at accumulation 2 against 1 process", "the stock model's loss"],
)
@pytest.mark.rule(
    lesson="10",
    section="Recap",
    text="One Trainer script (`HfArgumentParser` for the flags) runs on 1 or N processes",
    covers=["1 process", "2 processes with torchrun, accumulation 2"],
)
def test_train_py_logs_the_same_loss_on_two_processes_with_accumulation(runs: dict[str, Any]) -> None:
    def history(run: str) -> list[dict[str, Any]]:
        return json.loads((runs["work"] / run / "summary.json").read_text())["history"]

    one, two = history("one"), history("two")
    for key in ("loss", "grad_norm"):
        ones, twos = [e[key] for e in one if key in e], [e[key] for e in two if key in e]
        assert len(ones) == len(twos) == 2, (key, ones, twos)
        assert all(abs(b / a - 1) < TOLERANCE for a, b in zip(ones, twos)), (key, ones, twos)


@pytest.mark.skipif(torch.cuda.is_available(), reason="what torchrun does without --use_cpu on a machine with no GPU")
@pytest.mark.rule(
    lesson="10",
    section="The pattern: one script, any number of processes",
    text="Without `--use_cpu True`, on a machine with no GPU",
    covers=["torchrun --nproc_per_node 2 on CPU without --use_cpu"],
)
def test_without_use_cpu_two_processes_train_apart_both_world_process_zero(runs: dict[str, Any]) -> None:
    printed = runs["printed"]["script_no_use_cpu"]
    starts = [line for line in printed.splitlines() if line.startswith("world size")]
    zeros = [line for line in printed.splitlines() if "world zero True" in line]
    assert starts == ["world size 1, global batch 4 (4 x 1 x 1), 4 optimizer steps"] * 2, starts
    assert len(zeros) == 2 and {line.split(":")[0] for line in zeros} == {"rank 0"}, zeros


if __name__ == "__main__":
    if sys.argv[1] != "fixes":
        sys.exit(f"unknown part {sys.argv[1]!r}: fixes")
    train_fixes(sys.argv[2])
    if torch.distributed.is_initialized():
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # as tests/lesson_10/test_processes.py: no gloo thread outlives the interpreter
