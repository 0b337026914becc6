"""Lesson 10's real launches, shared by tests/lesson_10/test_processes.py and tests/lesson_10/test_rules.py.

Starting a process that imports torch and transformers costs about 5 s of CPU, more than the tiny trainings the
tests ask of it. So every launch both test files read is started once a test session (:func:`launch_all`, through
the ``launched`` fixture of tests/lesson_10/conftest.py), each process doing all its share:

- ``torchrun --nproc_per_node=2 launches.py train OUT_DIR IDS ARGV_FILE`` (3 processes: torchrun and its 2):
  each process trains every recipe of :func:`recipes` (the stock model and its two fixes, ``evaluate()`` before
  ``train()``, lesson 07's eight loss recipes at accumulation 2, ``LossPartsTrainer``, ``fsdp=True``) on its share
  of the same global batch of 8, then every loss fix of :data:`FIXES` at accumulation 1 and 2
  (:func:`train_fixes`), each writing what it saw to ``OUT_DIR/<recipe>/rank<N>.json`` and
  ``OUT_DIR/fixes/rank<N>.json``; then what the Trainer makes of the processes without ``use_cpu``
  (:func:`without_use_cpu`), and last the lesson's ``train.py`` without ``--use_cpu`` (:func:`run_script`: as
  ``python train.py`` runs it, as ``__main__`` with the launcher's variables; it ends the process group, and a
  process group started again under torchrun finds the old one's addresses, so nothing can follow it). Proves:
  DDP over gloo on CPU processes, the loss scaling of every recipe and fix on 2 processes, the steps of an epoch,
  callbacks and saving on 2 processes of one machine, ``fsdp=True`` on CPU, and what 2 processes do without
  ``--use_cpu``.
- ``torchrun --nproc_per_node=2 train.py ... --use_cpu True`` at accumulation 2 (3 processes): the lesson's own
  script (read from the notebook's ``%%writefile`` cells) by the pattern's very command, its loss held to 1
  process's and its printed global batch.
- the same recipes and fixes, and ``train.py``, on one process, in the test process itself while the launches run
  (the truth the 2 processes are held to, and what no launcher sets);
- ``accelerate launch`` with an FSDP configuration (:func:`shard`, 3 processes): Accelerate's FSDP against torch's
  ``fully_shard`` on CPU processes, and the variables and DDP a Trainer finds under that launch;
- two ``torchrun --nnodes=2`` commands (:func:`nodes`, 3 + 2 processes): two nodes of this host, node 0 with 2
  processes and node 1 with 1 (:data:`NODES`), so that node 0 has a process that is neither world nor local zero
  and node 1 a local zero that is not world zero: the flags, ``save_on_each_node``, ``log_on_each_node``, which
  process saves what, and the ranks a multi-node launch sets.

A one-layer BERT from a config (dropout off) makes 1 and 2 processes compute the same numbers.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import runpy
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "10_scaling_out.ipynb"
GLOBAL_BATCH = 8  # reviews per optimizer step, however many processes share them
LAUNCHER_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE")  # what a launcher sets, read by each process
FSDP_CONFIG = """compute_environment: LOCAL_MACHINE
distributed_type: FSDP
num_machines: 1
num_processes: 2
machine_rank: 0
mixed_precision: 'no'
use_cpu: false
fsdp_config:
  fsdp_version: 2
  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP
  fsdp_state_dict_type: FULL_STATE_DICT
  fsdp_reshard_after_forward: true
"""
FIXES: dict[str, dict[str, Any]] = {
    "default": {},
    "no_average": {"average_tokens_across_devices": False},
    "no_kwargs": {},  # trainer.model_accepts_loss_kwargs = False after building the Trainer
}
NODES = (2, 1)  # processes on each node of the two-node launch: node 1 runs one, node 0 a second beside rank 0
ONE_PROCESS_RECIPES = ["stock", *[f"row{row}" for row in range(1, 9)], "loss_parts"]


def launcher_env() -> dict[str, str | None]:
    """The variables a launcher set for this process (None where it set none)."""
    return {name: os.environ.get(name) for name in LAUNCHER_ENV}


# ---- the workers: what each process runs ----


def _process_report() -> Any:
    from transformers import TrainerCallback

    class ProcessReport(TrainerCallback):
        """Counts the events this process fires; ``report`` adds what it knows of itself."""

        def __init__(self) -> None:
            self.seen = {"on_log": 0, "on_save": 0}

        def on_log(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.seen["on_log"] += 1

        def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.seen["on_save"] += 1

        def report(self, trainer: Any) -> dict[str, Any]:
            args, state = trainer.args, trainer.state
            return {
                "rank": args.process_index,
                "local_rank": args.local_process_index,
                "env": launcher_env(),
                "world_size": args.world_size,
                "device": str(args.device),
                "backend": torch.distributed.get_backend() if torch.distributed.is_initialized() else None,
                "world_zero": state.is_world_process_zero,
                "local_zero": state.is_local_process_zero,
                "per_device_batch": args.per_device_train_batch_size,
                "max_steps": state.max_steps,
                "seen": self.seen,
                "log_history": state.log_history,
            }

    return ProcessReport()


def _parts_by_hand(batches: Any) -> Any:
    import torch.nn.functional as F
    from transformers import TrainerCallback

    from helpers.lessons.lesson_07 import MultiTaskTrainer

    class PartsByHand(TrainerCallback):
        """Before each optimizer step: the loss parts of this process's micro-batches, computed apart from the
        Trainer (plain cross-entropy and MSE)."""

        def __init__(self) -> None:
            self.batches, self.per_step = iter(batches), []

        @torch.no_grad()
        def on_step_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
            values = []
            for _ in range(args.gradient_accumulation_steps):
                batch = next(self.batches)
                target, labels = batch.pop("length_target"), batch.pop("labels")
                outputs = model.base(**batch, output_hidden_states=True)
                length = model.length_head(outputs.hidden_states[-1][:, 0]).squeeze(-1)
                main = F.cross_entropy(outputs.logits, labels)
                aux = MultiTaskTrainer.aux_weight * F.mse_loss(length, target.float())
                values.append([float(main), float(aux)])
            self.per_step.append(torch.tensor(values).mean(0).tolist())

    return PartsByHand()


def tiny_bert(vocab_size: int) -> Any:
    """A one-layer BERT classifier from a config (no weights to load), dropout off, the same on every process."""
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


def held_here(model: Any) -> int:
    """Parameters this process holds: of a sharded one (a DTensor), its own part."""
    return sum((p.to_local() if hasattr(p, "to_local") else p).numel() for p in model.parameters())


def recipes() -> dict[str, tuple[str, int, dict[str, Any]]]:
    """id -> (label, accumulation steps, make_trainer keywords)."""
    from helpers.lessons.lesson_07 import LOSS_SCALING_RECIPES, LossPartsTrainer, StockNoKwargsTrainer

    start = {"eval_strategy": "steps", "eval_steps": 100, "eval_on_start": True}
    no_kwargs = {"trainer_class": StockNoKwargsTrainer}
    table = {
        "stock": ("stock model, defaults", 1, start),
        "stock_no_average": (
            "average_tokens_across_devices=False",
            1,
            {**start, "average_tokens_across_devices": False},
        ),
        "stock_no_kwargs": ("model_accepts_loss_kwargs=False", 1, {**start, **no_kwargs, "save_strategy": "epoch"}),
        "evaluate_first": ("trainer.evaluate(), then train()", 1, no_kwargs),
    }
    for row, (label, (trainer_class, extra, _)) in enumerate(LOSS_SCALING_RECIPES.items(), start=1):
        table[f"row{row}"] = (label, 2, {"trainer_class": trainer_class, **extra})
    table["loss_parts"] = ("LossPartsTrainer", 2, {"trainer_class": LossPartsTrainer, "remove_unused_columns": False})
    table["fsdp"] = ("fsdp=True", 1, {"fsdp": True, "fsdp_config": {"version": 2}, "max_steps": 1})
    return table


def train_recipes(out_dir: str, ids: list[str]) -> None:
    """Train each recipe on this process's share of the same global batch; write what this process saw."""
    from transformers import DataCollatorWithPadding, PrinterCallback

    import helpers
    from helpers.data import add_length_target, load_reviews, select_examples
    from helpers.models import load_tokenizer
    from helpers.trainers import WithLengthHead, make_trainer

    tokenizer = load_tokenizer()
    world = int(os.environ.get("WORLD_SIZE", "1"))

    def reviews(split: str, count: int) -> Any:
        rows = select_examples(load_reviews()[split], count)
        return helpers.tokenize_reviews(add_length_target(rows, rows["text"]), tokenizer, max_length=64)

    settings = {
        "num_train_epochs": 1,
        "learning_rate": 1e-3,
        "logging_steps": 1,
        "per_device_eval_batch_size": 4,
        "seed": 0,
        "ddp_find_unused_parameters": False,
        "use_cpu": True,
        "bf16": False,
        "fp16": False,
    }
    trainer_for = functools.partial(
        make_trainer,
        settings=settings,
        train_dataset=reviews("train", 16),
        eval_dataset=reviews("validation", 8),
        data_collator=DataCollatorWithPadding(tokenizer),
    )
    table = recipes()
    for recipe in ids:
        folder = Path(out_dir) / recipe
        folder.mkdir(parents=True, exist_ok=True)
        label, accumulation, keywords = table[recipe]

        def build(recipe: str = recipe) -> Any:
            model = tiny_bert(tokenizer.vocab_size)
            return WithLengthHead(model) if recipe == "loss_parts" else model

        process = _process_report()
        trainer = trainer_for(
            recipe,
            model=build,
            output_dir=str(folder),
            callbacks=[process],
            per_device_train_batch_size=GLOBAL_BATCH // (world * accumulation),
            gradient_accumulation_steps=accumulation,
            **keywords,
        )
        by_hand = None
        if recipe == "evaluate_first":
            trainer.evaluate()
        if recipe == "stock_no_kwargs":
            trainer.add_callback(PrinterCallback)  # the one recipe that prints
        if recipe == "loss_parts":
            by_hand = _parts_by_hand(trainer.get_train_dataloader())
            trainer.add_callback(by_hand)
        trainer.train()
        report = process.report(trainer)
        report.update(label=label, wrapped=type(trainer.model_wrapped).__name__)
        report.update(held_here=held_here(trainer.model_wrapped), parts_by_hand=by_hand and by_hand.per_step)
        (folder / f"rank{trainer.args.process_index}.json").write_text(json.dumps(report))


def without_use_cpu(out_dir: str) -> None:
    """What the Trainer makes of the processes when use_cpu is left out (no GPU)."""
    from transformers import Trainer, TrainingArguments

    report = {}
    for name, extra in {"plain": {}, "fsdp": {"fsdp": True}}.items():
        try:
            args = TrainingArguments(output_dir=out_dir, report_to="none", **extra)
            Trainer(model=tiny_bert(100), args=args)
            report[name] = f"{args.parallel_mode.value}, world size {args.world_size}"
        except ValueError as error:
            report[name] = f"ValueError: {error}"
    folder = Path(out_dir) / "without_use_cpu"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"rank{os.environ.get('RANK', '0')}.json").write_text(json.dumps(report))


def shard(out_dir: str) -> None:
    """Under ``accelerate launch`` with FSDP_CONFIG: what Accelerate prepares, what torch's fully_shard holds, and
    what a Trainer (``use_cpu=True``, one step) makes of the launch."""
    from accelerate import Accelerator
    from torch.distributed.fsdp import fully_shard
    from transformers import Trainer, TrainingArguments

    def layers() -> Any:
        torch.manual_seed(0)
        return torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(4)])

    accelerator = Accelerator(cpu=True)
    prepared = accelerator.prepare(layers())
    sharded = layers()
    for layer in sharded:
        fully_shard(layer)
    fully_shard(sharded)
    sharded(torch.randn(8, 256)).pow(2).mean().backward()  # it computes, on shards
    report = {
        "rank": accelerator.process_index,
        "fsdp_asked": os.environ.get("ACCELERATE_USE_FSDP"),
        "distributed_type": accelerator.distributed_type.value,
        "prepared_here": held_here(prepared),
        "fully_shard_here": held_here(sharded),
        "parameters": held_here(layers()),
    }
    args = TrainingArguments(
        output_dir=str(Path(out_dir) / "trainer"),
        use_cpu=True,
        report_to="none",
        max_steps=1,
        per_device_train_batch_size=4,
        save_strategy="no",
    )
    trainer = Trainer(tiny_bert(100), args, train_dataset=rows(16))
    trainer.train()
    report["trainer"] = {
        "rank": args.process_index,
        "local_rank": args.local_process_index,
        "world_size": args.world_size,
        "env": launcher_env(),
        "wrapped": type(trainer.model_wrapped).__name__,
    }
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"rank{report['rank']}.json").write_text(json.dumps(report))


def nodes(node_dir: str) -> None:
    """One of two nodes: train twice for 2 steps, with the defaults and with save_on_each_node=True,
    log_on_each_node=False; write what this process is."""
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainerCallback, TrainingArguments

    class WhoAmI(TrainerCallback):
        def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            self.seen = {
                "rank": args.process_index,
                "local_rank": args.local_process_index,
                "world_zero": state.is_world_process_zero,
                "local_zero": state.is_local_process_zero,
                "should_save": args.should_save,
                "should_log": args.should_log,
                "world_size": args.world_size,
                "env": launcher_env(),
            }

    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 100, (32, 8), generator=generator)
    data = [{"input_ids": row, "labels": int(row[0] > 50)} for row in ids]
    variants = {"defaults": {}, "flipped": {"save_on_each_node": True, "log_on_each_node": False}}
    for name, settings in variants.items():
        if os.environ["LOCAL_RANK"] == "0":  # marks where the variant starts
            print(f"== {name}", flush=True)
            print(f"== {name}", file=sys.stderr, flush=True)
        folder = Path(node_dir) / name
        torch.manual_seed(0)
        config = BertConfig(
            vocab_size=100, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32
        )
        args = TrainingArguments(
            output_dir=str(folder),
            use_cpu=True,
            report_to="none",
            max_steps=2,
            per_device_train_batch_size=4,
            logging_steps=1,
            save_strategy="steps",
            save_steps=2,
            log_level="info",
            disable_tqdm=True,
            **settings,
        )
        who = WhoAmI()
        trainer = Trainer(BertForSequenceClassification(config), args, train_dataset=data, callbacks=[who])
        trainer.train()
        who.seen["wrapped"] = type(trainer.model_wrapped).__name__
        (folder / f"rank{args.process_index}.json").write_text(json.dumps(who.seen))


def rows(count: int) -> list[dict[str, Any]]:
    """``count`` sequences of 8 random ids, labelled by their first id."""
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(5, 100, (count, 8), generator=generator)
    return [{"input_ids": row, "labels": int(row[0] > 50)} for row in ids]


def train_fixes(out_dir: str) -> None:
    """Every fix at accumulation 1 and 2 (16 rows, 2 steps), and the step count of 20 rows at accumulation 2."""
    from transformers import PrinterCallback, Trainer, TrainingArguments

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
            trainer.remove_callback(PrinterCallback)  # quiet: the recipes' printed lines are counted
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
    trainer.remove_callback(PrinterCallback)
    trainer.train()
    report["steps_20_rows"] = trainer.state.global_step
    rank = int(os.environ.get("RANK", "0"))
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    Path(out_dir, f"rank{rank}.json").write_text(json.dumps(report))


def run_script(script: str, argv: list[str], printed: Path) -> None:
    """Run ``script`` in this process as ``python script ARGV`` runs it (as ``__main__``, ``sys.argv`` its own);
    what it printed goes to ``printed/rank<N>.txt``."""
    printed.mkdir(parents=True, exist_ok=True)
    saved, sys.argv = sys.argv, [script, *argv]
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            runpy.run_path(script, run_name="__main__")
    finally:
        sys.argv = saved
        (printed / f"rank{os.environ.get('RANK', '0')}.txt").write_text(buffer.getvalue())


def printed_by_ranks(printed: Path) -> str:
    """What :func:`run_script` wrote for each rank, in rank order."""
    files = sorted(printed.glob("rank*.txt"), key=lambda path: int(path.stem.removeprefix("rank")))
    return "".join(path.read_text() for path in files)


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


# ---- the launches ----


def _env() -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), str(ROOT / "tests"), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}


def _start(command: list[str], cwd: Path = ROOT) -> subprocess.Popen[str]:
    return subprocess.Popen(command, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd)


def _finish(name: str, started: subprocess.Popen[str]) -> tuple[str, str]:
    printed, errors = started.communicate(timeout=600)
    if started.returncode != 0:
        raise RuntimeError(f"the launch {name!r} ended with exit code {started.returncode}:\n{errors[-3000:]}")
    return printed, errors


def launch_all(work: Path) -> dict[str, tuple[str, str]]:
    """Every launch at once, the one-process runs in this process meanwhile; what each launch printed
    (stdout, stderr), also written to ``work/printed.json``. The layout under ``work``: ``two/`` and ``one/`` (the
    recipes, ``fixes/``), ``shard/``, ``nodes/node0`` and ``nodes/node1``, ``scripts/`` (train.py's runs: ``one``,
    ``two``, ``no_use_cpu``; ``printed_no_use_cpu``: what each rank of the last printed)."""
    me = str(Path(__file__).resolve())
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2"]
    all_ids = ",".join([*recipes(), "fixes", "without_use_cpu"])
    (work / "fsdp_cpu.yaml").write_text(FSDP_CONFIG)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    node_common = ["--nnodes=2", "--master_addr=127.0.0.1", f"--master_port={port}"]
    scripts = work / "scripts"
    scripts.mkdir()
    script = scripts / "train.py"
    script.write_text(script_text())
    model_dir, data_dir = model_and_data(scripts)
    common = ["--model", str(model_dir), "--data", str(data_dir), "--layers", "1", "--learning_rate", "1e-3"]
    common += ["--logging_steps", "1", "--save_strategy", "no", "--report_to", "none", "--disable_tqdm", "True"]
    common += ["--num_train_epochs", "1", "--seed", "0", "--ddp_find_unused_parameters", "False"]
    no_use_cpu = [*common, "--output_dir", str(scripts / "no_use_cpu"), "--per_device_train_batch_size", "4"]
    (scripts / "no_use_cpu.json").write_text(json.dumps([str(script), *no_use_cpu]))  # for the launch "two"
    started = {
        "two": _start([*torchrun, me, "train", str(work / "two"), all_ids, str(scripts / "no_use_cpu.json")]),
        "shard": _start(
            [sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(work / "fsdp_cpu.yaml")]
            + [me, "shard", str(work / "shard")]
        ),
        **{
            f"node{node}": _start(
                [sys.executable, "-m", "torch.distributed.run", f"--node_rank={node}", *node_common]
                + [f"--nproc_per_node={processes}", me, "nodes", str(work / "nodes" / f"node{node}")]
            )
            for node, processes in enumerate(NODES)
        },
        "script_two": _start(
            [*torchrun, str(script), *common, "--output_dir", str(scripts / "two"), "--use_cpu", "True"]
            + ["--per_device_train_batch_size", "2", "--gradient_accumulation_steps", "2"],
            cwd=scripts,
        ),
    }
    try:  # the one-process runs here, in this process (torch and transformers imported already), meanwhile
        printed_here = io.StringIO()
        with contextlib.redirect_stdout(printed_here):
            train_recipes(str(work / "one"), ONE_PROCESS_RECIPES)
            train_fixes(str(work / "one" / "fixes"))
        one = [*common, "--output_dir", str(scripts / "one"), "--use_cpu", "True", "--per_device_train_batch_size", "8"]
        printed_script = io.StringIO()
        with contextlib.redirect_stdout(printed_script):
            runpy.run_path(str(script))["main"](one)
    finally:
        output = {name: _finish(name, process) for name, process in started.items()}
    output["script_one"] = (printed_script.getvalue(), "")
    output["script_no_use_cpu"] = (printed_by_ranks(scripts / "printed_no_use_cpu"), "")  # by the launch "two"
    (work / "printed.json").write_text(json.dumps(output))
    return output


if __name__ == "__main__":
    if sys.argv[1] == "train":
        import helpers

        helpers.setup_notebook(announce=False)
        ids = sys.argv[3].split(",")
        train_recipes(sys.argv[2], [name for name in ids if name in recipes()])
        if "fixes" in ids:
            train_fixes(str(Path(sys.argv[2]) / "fixes"))
        if "without_use_cpu" in ids and not torch.cuda.is_available():
            without_use_cpu(sys.argv[2])  # no DDP after it
            if len(sys.argv) > 4:  # train.py without --use_cpu, last: it ends the process group
                script, *argv = json.loads(Path(sys.argv[4]).read_text())
                run_script(script, argv, Path(script).parent / "printed_no_use_cpu")
    elif sys.argv[1] == "shard":
        shard(sys.argv[2])
    elif sys.argv[1] == "nodes":
        nodes(sys.argv[2])
    else:
        sys.exit(f"unknown part {sys.argv[1]!r}: train, shard or nodes")
    if torch.distributed.is_initialized():
        # No interpreter exit, as exercises/checks/processes.py ends its pair: every result is written, and left to
        # the interpreter's exit a gloo thread can outlive it and abort the process (SIGABRT, "terminate called
        # without an active exception"); seen once in CI, on the two-node launch.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
