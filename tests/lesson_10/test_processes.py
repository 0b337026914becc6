"""Lesson 10's many-case proofs on real processes (moved out of the notebook, which shows the pattern's runs).

The processes are lesson 10's launches (tests/lesson_10/launches.py, started once a session for this file and
test_rules.py): the recipes (the stock model and its two fixes, ``evaluate()`` before ``train()``, lesson 07's
eight loss recipes at accumulation 2, ``LossPartsTrainer``, ``fsdp=True``) trained on 2 processes by ``torchrun``
and on 1, each process writing what it saw to ``<recipe>/rank<N>.json``; ``shard`` (under ``accelerate launch``
with an FSDP configuration) compares Accelerate's FSDP with torch's ``fully_shard`` on CPU processes; ``nodes``
(two ``torchrun`` commands with ``--nnodes=2``, of 2 processes and 1) trains on two nodes of this host. The tests
check the claims the lesson makes in its text and claim boxes.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

TOLERANCE = 1e-4  # relative: float32 sums taken in another order by 1 and 2 processes


@pytest.fixture(scope="module")
def runs(launched: dict[str, Any]) -> dict[str, Any]:
    """The launches' folder, and what each printed (stdout, stderr)."""
    return {"work": launched["work"], "output": launched["printed"]}


def _reports(runs: dict[str, Any], run: str, recipe: str) -> list[dict[str, Any]]:
    files = sorted((runs["work"] / run / recipe).glob("rank*.json"))
    return [json.loads(path.read_text()) for path in files]


def _logged(runs: dict[str, Any], run: str, recipe: str, key: str) -> list[float]:
    history = _reports(runs, run, recipe)[0]["log_history"]
    return [entry[key] for entry in history if key in entry and "loss" in entry]


def _near(value: float, expected: float) -> bool:
    return abs(value / expected - 1) < TOLERANCE


@pytest.mark.rule(
    lesson="10",
    section="Recap",
    text="Only process zero saves the model.",
    covers=["2 processes: one model.safetensors, rng_state_0 and rng_state_1", "2 nodes (test_two_nodes_...)"],
)
@pytest.mark.rule(
    lesson="10",
    section="Recap",
    text="Every process runs every callback: guard files and prints with `state.is_world_process_zero`",
    covers=["2 processes", "2 nodes, of 2 processes and 1 (test_two_nodes_...)", "only process zero saves the model"],
)
def test_every_process_fires_every_callback_and_one_process_saves_the_model(runs: dict[str, Any]) -> None:
    ranks = _reports(runs, "two", "stock_no_kwargs")
    assert [r["rank"] for r in ranks] == [0, 1] and ranks[0]["seen"] == ranks[1]["seen"]
    assert ranks[0]["per_device_batch"] * 2 == _reports(runs, "one", "stock")[0]["per_device_batch"] == 8
    assert ranks[0]["max_steps"] == _reports(runs, "one", "stock")[0]["max_steps"] == 16 // 8
    assert [r["rank"] for r in ranks if r["world_zero"]] == [r["rank"] for r in ranks if r["local_zero"]] == [0]
    printed = [line for line in runs["output"]["two"][0].splitlines() if line.startswith("{'loss'")]
    assert len(printed) == len(_logged(runs, "two", "stock_no_kwargs", "loss"))  # local zero alone prints
    checkpoint = next((runs["work"] / "two" / "stock_no_kwargs").glob("checkpoint-*"))
    saved = sorted(path.name for path in checkpoint.iterdir())
    assert saved.count("model.safetensors") == 1 and {"rng_state_0.pth", "rng_state_1.pth"} <= set(saved)


@pytest.mark.rule(
    lesson="10",
    section="2. What every process does",
    text="The fix is in the pattern: `eval_on_start=True` evaluates at step 0 inside `train()`, after the wrapping.",
    covers=["2 processes, the stock model: wrapped in DDP, equal gradient norms on both processes"],
)
@pytest.mark.rule(
    lesson="10",
    section="Recap",
    text="`trainer.evaluate()` before `trainer.train()` leaves the processes training apart",
    covers=["2 processes, the stock model", "eval_on_start=True instead (the pattern's run)"],
)
def test_evaluate_before_train_leaves_the_model_without_ddp(runs: dict[str, Any]) -> None:
    def norms(report: dict[str, Any]) -> list[float]:
        return [round(e["grad_norm"], 4) for e in report["log_history"] if "grad_norm" in e]

    early, right = _reports(runs, "two", "evaluate_first"), _reports(runs, "two", "stock_no_kwargs")
    assert early[0]["wrapped"] == "BertForSequenceClassification" and right[0]["wrapped"] == "DistributedDataParallel"
    assert norms(early[0]) != norms(early[1]) and norms(right[0]) == norms(right[1])


def test_the_stock_model_doubles_loss_grad_norm_and_eval_loss_and_both_fixes_work(runs: dict[str, Any]) -> None:
    def step_one(run: str, recipe: str) -> list[float]:
        start = _reports(runs, run, recipe)[0]["log_history"][0]  # eval_on_start
        return [_logged(runs, run, recipe, "loss")[0], _logged(runs, run, recipe, "grad_norm")[0], start["eval_loss"]]

    truth = step_one("one", "stock")
    for recipe, factor in (("stock", 2.0), ("stock_no_average", 1.0), ("stock_no_kwargs", 1.0)):
        got = step_one("two", recipe)
        assert all(_near(value / true, factor) for value, true in zip(got, truth)), (recipe, got, truth)


@pytest.mark.rule(
    lesson="10",
    section="3. The stock model's loss on 2 processes",
    text="A `compute_loss` that divides by `num_items_in_batch` has the opposite trap: on `P` processes it must be "
    "multiplied by `P` (a `compute_loss_func` must not).",
    covers=["accumulation 2, 1 and 2 processes: own sum / num_items_in_batch logs 1/P, x processes logs 1",
            "compute_loss_func: sum / num_items_in_batch logs 1 with no factor (x P would log 2)"],
)  # fmt: skip
@pytest.mark.rule(
    lesson="10",
    section="3. The stock model's loss on 2 processes",
    text="It suits a loss that is a mean of its batch, as the stock classifiers'",
    covers=["accumulation 2, 1 and 2 processes: the stock model and an own mean, both with "
            "model_accepts_loss_kwargs=False, log the truth at every step"],
)  # fmt: skip
def test_lesson_07s_eight_rows_hold_on_one_and_two_processes(runs: dict[str, Any]) -> None:
    from helpers.lessons.lesson_07 import LOSS_SCALING_RECIPES

    truth = {key: _logged(runs, "one", "stock", key) for key in ("loss", "grad_norm")}
    for row, (label, (_, _, expected)) in enumerate(LOSS_SCALING_RECIPES.items(), start=1):
        for run, processes in (("one", 1), ("two", 2)):
            loss, norm = _logged(runs, run, f"row{row}", "loss"), _logged(runs, run, f"row{row}", "grad_norm")
            want = expected(2, processes)
            assert _near(loss[0] / truth["loss"][0], want), (label, processes)
            assert _near(norm[0] / truth["grad_norm"][0], want), (label, processes)
            if want == 1:  # a right row equals the truth at every step
                pairs = zip(loss + norm, truth["loss"] + truth["grad_norm"])
                assert max(abs(a / b - 1) for a, b in pairs) < TOLERANCE, (label, processes)


def test_loss_parts_trainer_logs_the_mean_of_every_process(runs: dict[str, Any]) -> None:
    import numpy as np

    for run in ("one", "two"):
        reports = _reports(runs, run, "loss_parts")
        by_hand = np.mean([r["parts_by_hand"] for r in reports], axis=0)
        history = reports[0]["log_history"]
        columns = np.array([[e["loss_main"], e["loss_aux"]] for e in history if "loss_main" in e])
        losses = np.array([e["loss"] for e in history if "loss_main" in e])
        assert np.abs(columns / by_hand - 1).max() < 1e-5, run
        assert np.abs(columns.sum(axis=1) / losses - 1).max() < 1e-5, run


@pytest.mark.rule(
    lesson="10",
    section="4. FSDP and DeepSpeed",
    text="Both are for GPUs: on CPU processes the Trainer's FSDP does not shard.",
    covers=["fsdp=True on 2 CPU processes under torchrun: DistributedDataParallel",
            "accelerate launch with an FSDP configuration: Accelerate keeps MULTI_CPU, nothing sharded",
            "without --use_cpu: the Trainer refuses fsdp (only works in distributed training)"],
)  # fmt: skip
def test_fsdp_on_cpu_processes_is_plain_ddp_and_torch_alone_shards(runs: dict[str, Any]) -> None:
    from accelerate.state import AcceleratorState

    fsdp = _reports(runs, "two", "fsdp")
    assert {r["wrapped"] for r in fsdp} == {"DistributedDataParallel"}
    assert "only works in distributed training" in _reports(runs, "two", "without_use_cpu")[0]["fsdp"]
    sharding = [json.loads(path.read_text()) for path in sorted((runs["work"] / "shard").glob("rank*.json"))]
    assert len(sharding) == 2 and {r["distributed_type"] for r in sharding} == {"MULTI_CPU"}
    assert {r["fsdp_asked"] for r in sharding} == {"true"}
    assert all(r["prepared_here"] == r["parameters"] == 2 * r["fully_shard_here"] for r in sharding)
    source = inspect.getsource(AcceleratorState.__init__)
    block = source[: source.index("self.distributed_type = DistributedType.FSDP")]
    block = block[block.rindex("elif self.distributed_type in [") :]
    kinds = [line.strip().rstrip(",") for line in block.splitlines()[1:] if "MULTI_" in line]
    assert kinds and "DistributedType.MULTI_CPU" not in kinds


@pytest.mark.rule(
    lesson="10",
    section="2. What every process does",
    text="`state.is_world_process_zero` is True on one process of the job; `state.is_local_process_zero` on one "
    "process per machine.",
    covers=[
        "2 nodes, of 2 processes and 1 (torchrun --nnodes=2 on this host): world zero rank 0, local zero ranks 0 and 2"
    ],
)
@pytest.mark.rule(
    lesson="10",
    section="2. What every process does",
    text="The Trainer itself saves the model only where `args.should_save` is True (process zero), and every "
    "process saves its own random-number state",
    covers=["2 nodes, of 2 processes and 1: node 0's checkpoint holds the model, rng_state_0 and rng_state_1, "
            "node 1's rng_state_2 only",
            "save_on_each_node=True: should_save on both local zeros, still one model.safetensors (rank 0)"],
)  # fmt: skip
def test_two_nodes_flags_and_what_save_and_log_on_each_node_do(runs: dict[str, Any]) -> None:
    from transformers import PreTrainedModel

    node_root = runs["work"] / "nodes"

    def node_reports(variant: str) -> list[dict[str, Any]]:
        files = node_root.glob(f"node*/{variant}/rank*.json")
        return sorted((json.loads(path.read_text()) for path in files), key=lambda r: r["rank"])

    defaults, flipped = node_reports("defaults"), node_reports("flipped")  # ranks 0 and 1 on node 0, 2 on node 1
    assert len(defaults) == 3 and [r["local_rank"] for r in defaults] == [0, 1, 0]
    assert [r["rank"] for r in defaults if r["world_zero"]] == [0]
    assert [r["rank"] for r in defaults if r["local_zero"]] == [0, 2]
    assert [r["should_save"] for r in flipped] == [True, False, True]
    assert [r["should_log"] for r in flipped] == [True, False, False]

    def files(variant: str, node: int) -> list[str]:
        return sorted(path.name for path in (node_root / f"node{node}" / variant / "checkpoint-2").iterdir())

    assert {"model.safetensors", "rng_state_0.pth", "rng_state_1.pth"} <= set(files("defaults", 0))
    assert files("defaults", 1) == ["rng_state_2.pth"]
    assert "optimizer.pt" in files("flipped", 1) and "model.safetensors" not in files("flipped", 1)
    assert "_get_torch_distributed_rank() == 0" in inspect.getsource(PreTrainedModel.should_save_on_this_rank)
    for node in (0, 1):
        printed, logged = runs["output"][f"node{node}"]
        for variant in ("defaults", "flipped"):
            prints = printed.split(f"== {variant}")[1].split("== flipped")[0]
            logs = logged.split(f"== {variant}")[1].split("== flipped")[0]
            assert prints.count("{'loss'") == 2, (node, variant)  # once per node, either setting
            running = logs.count("Running training")
            assert running == (0 if (node, variant) == (1, "flipped") else 1), (node, variant, running)


@pytest.mark.rule(
    lesson="10",
    section="The pattern",
    text="`--use_cpu True` keeps both processes on the CPU (they talk over **gloo**",
    covers=["torchrun --nproc_per_node=2 with use_cpu=True on a machine without a GPU: device cpu, backend gloo, "
            "world size 2 on both ranks, for every recipe", "1 process: no process group"],
)  # fmt: skip
def test_use_cpu_keeps_both_processes_on_the_cpu_over_gloo(runs: dict[str, Any]) -> None:
    for recipe in ("stock", "stock_no_kwargs", "row1"):
        two = _reports(runs, "two", recipe)
        seen = [(r["device"].split(":")[0], r["backend"], r["world_size"]) for r in two]
        assert seen == [("cpu", "gloo", 2)] * 2, (recipe, seen)
    one = [(r["device"], r["backend"], r["world_size"]) for r in _reports(runs, "one", "stock")]
    assert one == [("cpu", None, 1)], one
