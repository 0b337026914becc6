"""Lesson 10's rules, tried where a learner uses them: accumulation above 1, 2 processes, CPU without --use_cpu.

The processes are lesson 10's launches (tests/lesson_10/launches.py, started once a session for this file and
test_processes.py): a one-layer BERT built from a config (dropout off, so 1 and 2 processes compute the same
numbers) trained with each loss fix at accumulation 1 and 2, the global batch fixed at 8, by 2 processes under
``torchrun`` and by 1, each writing what it logged to ``fixes/rank<N>.json``; and the lesson's own ``train.py``
(read from the notebook's ``%%writefile`` cells) on 1 process, on 2 with accumulation 2, and on 2 without
``--use_cpu`` (run last in the processes of that ``torchrun`` launch, as ``python train.py`` runs it).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
import torch

from lesson_10.launches import LAUNCHER_ENV

TOLERANCE = 1e-4  # relative: float32 sums taken in another order by 1 and 2 processes


@pytest.fixture(scope="module")
def runs(launched: dict[str, Any]) -> dict[str, Any]:
    """train.py's folder (``one``, ``two``, ``no_use_cpu``), what it printed, the fixes' reports, every launch."""
    work = launched["work"]
    fixes = {
        f"fixes_{run}": [json.loads(path.read_text()) for path in sorted((work / run / "fixes").glob("rank*.json"))]
        for run in ("one", "two")
    }
    printed = {name: launched["printed"][name][0] for name in ("script_one", "script_two", "script_no_use_cpu")}
    return {"work": work / "scripts", "printed": printed, "fixes": fixes, "launches": work}


def _ratios(runs: dict[str, Any], run: str, recipe: str) -> dict[str, list[float]]:
    """Each logged value of ``recipe`` over the one-process, accumulation-1 run's, step by step."""
    truth, got = runs["fixes"]["fixes_one"][0]["default_1"], runs["fixes"][run][0][recipe]
    return {key: [a / b for a, b in zip(got[key], truth[key], strict=True)] for key in ("loss", "grad_norm")}


def _all_near(values: list[float], factor: float) -> bool:
    return all(abs(value / factor - 1) < TOLERANCE for value in values)


@pytest.mark.rule(
    lesson="10",
    section="1. The global batch, and the steps",
    text="To keep a recipe, divide `per_device_train_batch_size` by the number of processes",
    covers=["2 processes x 4 against 1 process x 8, accumulation 1: the same loss and gradient norm at every step",
            "2 processes x 2 x accumulation 2 against 1 x 8 (the pattern's model_accepts_loss_kwargs=False; the "
            "default logs P x k times: section 3)"],
)  # fmt: skip
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
    section="Recap",
    text="The stock classifier's loss, with the defaults, is scaled by processes × accumulation steps",
    covers=["2 processes, accumulation 1: 2 x", "2 processes, accumulation 2: 4 x (loss and grad_norm, every step)"],
)
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
    section="1. The global batch, and the steps",
    text="Change the number of processes and you change the global batch and the number of steps.",
    covers=["20 rows at 4 a device, accumulation 2: 3 steps on 1 process, 2 on 2 (an uneven last batch)"],
)
@pytest.mark.rule(
    lesson="10",
    section="Recap",
    text="more processes, fewer steps an epoch.",
    covers=["20 rows at 4 a device, accumulation 2: 3 steps on 1 process, 2 on 2 (an uneven last batch)"],
)
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
    section="The pattern",
    text="| CPU processes (as here) | `torchrun --nproc_per_node=2 train.py ... --use_cpu True` |",
    covers=["train.py under torchrun --nproc_per_node=2 --use_cpu True, accumulation 2: the loss of 1 process"],
)
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
    covers=["torchrun --nproc_per_node 2 on CPU without --use_cpu (train.py as __main__ in the 2 processes)"],
)
def test_without_use_cpu_two_processes_train_apart_both_world_process_zero(runs: dict[str, Any]) -> None:
    printed = runs["printed"]["script_no_use_cpu"]
    starts = [line for line in printed.splitlines() if line.startswith("world size")]
    zeros = [line for line in printed.splitlines() if "world zero True" in line]
    assert starts == ["world size 1, global batch 4 (4 x 1 x 1), 4 optimizer steps"] * 2, starts
    assert len(zeros) == 2 and {line.split(":")[0] for line in zeros} == {"rank 0"}, zeros


def _launched_processes(runs: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """What each process of each launch found (rank order): the launcher's variables, the Trainer's view of them,
    and the class of the model it trained."""
    work = runs["launches"]

    def read(files: Any) -> list[dict[str, Any]]:
        return sorted((json.loads(path.read_text()) for path in files), key=lambda report: report["rank"])

    return {
        "torchrun": read((work / "two" / "stock_no_kwargs").glob("rank*.json")),
        "accelerate launch": [report["trainer"] for report in read((work / "shard").glob("rank*.json"))],
        "2 nodes": read((work / "nodes").glob("node*/defaults/rank*.json")),
        "no launcher": read((work / "one" / "stock").glob("rank*.json")),
    }


@pytest.mark.rule(
    lesson="10",
    section="Recap",
    text="`torchrun` or `accelerate launch` sets the environment, and the Trainer wraps the model in DDP",
    covers=[
        "torchrun --nproc_per_node=2",
        "accelerate launch with an FSDP configuration, on CPU",
        "2 nodes, of 2 processes and 1 (torchrun --nnodes=2)",
        "no launcher: no variables, no DDP",
    ],
)
@pytest.mark.rule(
    lesson="10",
    section="The pattern: one script, any number of processes",
    text="The Trainer does all of this by itself when it finds the variables a launcher sets (`RANK`, `WORLD_SIZE`, "
    "`LOCAL_RANK`): the script does not change.",
    covers=[
        "the same training code under torchrun, accelerate launch, 2 nodes and no launcher",
        "ranks and world size read from RANK, WORLD_SIZE, LOCAL_RANK",
        "the processes' logged grad_norm equal (gradients averaged)",
    ],
)
def test_the_launcher_sets_the_variables_and_the_trainer_wraps_the_model_in_ddp(runs: dict[str, Any]) -> None:
    found = _launched_processes(runs)
    layouts = {"torchrun": [2], "accelerate launch": [2], "2 nodes": [2, 1]}  # processes on each node
    for launch, layout in layouts.items():
        reports, world = found[launch], sum(layout)
        places = [(local, per_node) for per_node in layout for local in range(per_node)]  # rank order
        assert [r["rank"] for r in reports] == list(range(world)), (launch, reports)
        for report, (local, per_node) in zip(reports, places, strict=True):
            want = [str(report["rank"]), str(world), str(local), str(per_node)]
            assert [report["env"][name] for name in LAUNCHER_ENV] == want, (launch, report)
            assert report["local_rank"] == local and report["world_size"] == world, (launch, report)
            assert report["wrapped"] == "DistributedDataParallel", (launch, report)
    [alone] = found["no launcher"]
    assert set(alone["env"].values()) == {None}, alone["env"]
    assert (alone["rank"], alone["world_size"], alone["wrapped"]) == (0, 1, "BertForSequenceClassification")
    norms = [[e["grad_norm"] for e in r["log_history"] if "grad_norm" in e] for r in found["torchrun"]]
    assert norms[0] and norms[0] == norms[1], norms  # one model on both: its gradients averaged before each step
