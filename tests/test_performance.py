"""helpers.performance: the measuring tools of lesson 09 and the bench, on tiny inputs (no timing asserted)."""

from __future__ import annotations

import pytest
import torch

from helpers.performance import (
    PerformanceError,
    compare_step_times,
    cuda_peak_mib,
    format_table,
    forward_calls,
    interleaved,
    medians,
    padding_report,
    padding_strategies,
    ratios,
    saved_tensor_bytes,
    timed_train,
)


def test_interleaved_rotates_the_order_and_keeps_every_figure() -> None:
    calls: list[str] = []
    variants = {name: (lambda n=name: calls.append(n) or len(calls)) for name in ("a", "b", "c")}
    results = interleaved(variants, rounds=3)
    assert calls == ["a", "b", "c", "b", "c", "a", "c", "a", "b"]
    assert {name: len(values) for name, values in results.items()} == {"a": 3, "b": 3, "c": 3}


def test_medians_and_ratios() -> None:
    figures = medians({"base": [1.0, 3.0, 2.0], "fast": [1.0, 1.0, 5.0]})
    assert figures == {"base": 2.0, "fast": 1.0}
    assert ratios(figures, "base") == {"base": 1.0, "fast": 0.5}


@pytest.mark.parametrize(
    "call",
    [
        lambda: interleaved({}, 1),
        lambda: interleaved({"a": lambda: 1.0}, 0),
        lambda: ratios({"a": 1.0}, "b"),
        lambda: ratios({"a": 0.0}, "a"),
        lambda: medians({"a": []}),
        lambda: padding_report({}),
    ],
)
def test_bad_input_is_a_clear_error(call) -> None:
    with pytest.raises(PerformanceError):
        call()


def test_padding_report_counts_padding_per_loader() -> None:
    loaders = {
        "half": [{"attention_mask": torch.tensor([[1, 1, 0, 0]])}],
        "none": [{"attention_mask": torch.ones(2, 3)}],
    }
    report = padding_report(loaders)
    assert report["half"]["padded_fraction"] == 0.5 and report["none"]["padded_fraction"] == 0.0


def test_saved_tensor_bytes_grows_with_the_batch_and_skips_weights() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 2))

    def forward(inputs: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor]:
        return (torch.nn.functional.cross_entropy(model(inputs), labels),)

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = model

        def forward(self, inputs: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor]:
            return forward(inputs, labels)

    wrapper = Wrapper()
    small = saved_tensor_bytes(wrapper, {"inputs": torch.randn(4, 8), "labels": torch.zeros(4, dtype=torch.long)})
    big = saved_tensor_bytes(wrapper, {"inputs": torch.randn(16, 8), "labels": torch.zeros(16, dtype=torch.long)})
    assert 3.5 < big / small <= 4.0  # activations only: the weights would make the ratio smaller
    assert all(p.grad is None for p in model.parameters())


def test_padding_strategies_names_and_settings() -> None:
    from helpers.models import load_tokenizer

    strategies = padding_strategies(load_tokenizer(), 32)
    assert list(strategies) == ["max_length", "dynamic", "dynamic + grouped"]
    assert strategies["dynamic + grouped"]["overrides"] == {"train_sampling_strategy": "group_by_length"}
    assert strategies["max_length"]["collator"].padding == "max_length"
    with pytest.raises(PerformanceError):
        padding_strategies(load_tokenizer(), 0)


def test_timed_train_refuses_what_is_not_a_trainer() -> None:
    with pytest.raises(PerformanceError):
        timed_train(object())


def test_cuda_peak_is_none_without_cuda() -> None:
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert cuda_peak_mib() is None


def test_format_table_aligns_and_marks_missing_values() -> None:
    text = format_table([{"name": "a", "value": 0.123456}, {"name": "bb", "value": None}], ["name", "value"])
    lines = text.splitlines()
    assert lines[0].startswith("name") and "0.123" in lines[2] and "n/a" in lines[3]
    assert len({len(line.rstrip()) for line in lines[:2]}) == 1


def test_compare_padding_refuses_bad_input() -> None:
    from helpers.performance import compare_padding

    with pytest.raises(PerformanceError, match="baseline"):
        compare_padding({"dynamic": object()}, baseline="max_length")


def test_save_figures_writes_only_when_the_gpu_run_asks(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import json

    from helpers.performance import RESULTS_VARIABLE, save_figures

    monkeypatch.delenv(RESULTS_VARIABLE, raising=False)
    assert save_figures("09", {"padding": 0.5}) is None  # a learner's run writes nothing
    monkeypatch.setenv(RESULTS_VARIABLE, str(tmp_path))
    path = save_figures("09", {"padding": 0.5})
    assert path == tmp_path / "09_gpu_and_performance.json" and json.loads(path.read_text()) == {"padding": 0.5}
    with pytest.raises(PerformanceError, match="dict"):
        save_figures("09", [0.5])


def test_the_gpu_run_reads_the_saved_figures_against_its_checks(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """What lessons 09 and 10 save is what tools/gpu_run.py looks for; a missing figure on enough GPUs fails."""
    from tools import gpu_run

    assert {check.lesson for check in gpu_run.GPU_CHECKS} == {"09", "10"}
    assert all(check.min_gpus >= 1 and check.shows for check in gpu_run.GPU_CHECKS)
    on_cpu = gpu_run.check_results({}, gpus=0)
    assert set(on_cpu) == {f"{c.lesson}/{c.key}" for c in gpu_run.GPU_CHECKS}
    assert all(outcome.startswith("skipped: needs") for outcome in on_cpu.values())
    one_gpu = gpu_run.check_results({"09": {"precision_speedup": 1.8}}, gpus=1)
    assert one_gpu["09/precision_speedup"] == "measured" and one_gpu["09/compile_speedup"] == "MISSING"
    assert one_gpu["10/fsdp_sharding"].startswith("skipped: needs 2")


def test_compare_step_times_refuses_bad_input_before_training() -> None:
    never = {"plain": lambda: pytest.fail("must not build a Trainer")}
    with pytest.raises(PerformanceError, match="larger than warmup_steps"):
        compare_step_times(never, steps=1)
    with pytest.raises(PerformanceError, match="baseline"):
        compare_step_times(never, steps=3, baseline="other")
    with pytest.raises(PerformanceError, match="warmup_steps"):
        compare_step_times(never, steps=3, warmup_steps=-1)


def test_compare_step_times_pools_steps_and_takes_ratios(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A fake clock makes the ratio exact: every reading advances it by 1 ms, and the slow variant's callback
    adds 3 ms inside each timed step (no real timing is asserted)."""
    from datasets import Dataset
    from transformers import Trainer, TrainerCallback, TrainingArguments

    from helpers import performance

    now = [0.0]

    def fake_clock() -> float:
        now[0] += 0.001
        return now[0]

    monkeypatch.setitem(performance.CLOCKS, "cpu", fake_clock)

    class Slow(TrainerCallback):
        def on_pre_optimizer_step(self, args, state, control, **kwargs):  # type: ignore[no-untyped-def]
            now[0] += 0.003  # three more milliseconds inside the timed step

    def build(callbacks: list) -> Trainer:
        torch.manual_seed(0)
        args = TrainingArguments(
            output_dir=str(tmp_path), per_device_train_batch_size=4, max_steps=99, report_to="none",
            save_strategy="no", use_cpu=True, disable_tqdm=True, logging_strategy="no",
        )  # fmt: skip
        rows = Dataset.from_dict({"x": [[1.0, 2.0]] * 32, "labels": [0, 1] * 16})
        return Trainer(model=_Linear(), args=args, train_dataset=rows, callbacks=callbacks)

    result = compare_step_times(
        {"plain": lambda: build([]), "slow": lambda: build([Slow()])}, steps=3, rounds=2, clock="cpu"
    )
    assert result["steps_timed"] == {"plain": 4, "slow": 4}  # 2 rounds x (3 steps - 1 warm-up)
    assert result["step_seconds"]["plain"] == pytest.approx(0.001)
    assert result["ratio"] == pytest.approx({"plain": 1.0, "slow": 4.0})
    assert result["clock"] == "cpu" and result["threads"] == 1
    if not torch.cuda.is_available():
        assert result["cuda_peak_mib"] == {"plain": None, "slow": None}


def test_forward_calls_counts_recomputed_layers_and_micro_batches() -> None:
    from torch.utils.checkpoint import checkpoint

    layers = torch.nn.ModuleList([torch.nn.Linear(3, 3) for _ in range(2)])
    inputs = torch.ones(4, 3, requires_grad=True)
    with forward_calls(layers) as calls:
        out = inputs
        for layer in layers:
            out = layer(out)
        out.sum().backward()
    assert calls.count == 2  # each layer once
    with forward_calls(layers) as calls:
        out = inputs
        for layer in layers:
            out = checkpoint(layer, out, use_reentrant=False)
        out.sum().backward()
    assert calls.count == 4  # each layer again during the backward pass
    layers[0](inputs)  # hooks are gone after the block
    assert calls.count == 4
    with pytest.raises(PerformanceError, match="torch.nn.Module"):
        forward_calls([])
    with pytest.raises(PerformanceError, match="torch.nn.Module"):
        forward_calls(["layer"])


class _Linear(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        logits = self.linear(x)
        return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}
