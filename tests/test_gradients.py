"""Lesson 08's gradient code (helpers.gradient_norms, with lesson 06's one-pass norms): the norms equal a direct
computation, and the callbacks work in a real Trainer."""

from __future__ import annotations

import io
import math

import pytest
import torch
from tiny_training import tiny_trainer
from torch import nn

from helpers.gradient_norms import (
    GradientNormRecorder,
    SeedStyleGradientPrinter,
    direct_group_norms,
    gradient_values,
    group_gradient_norms,
    layer_group,
    parameter_groups,
)
from helpers.monitor_cost import monitoring_overhead
from helpers.performance import StepTimer


class TinyClassifier(nn.Module):
    """Named like a transformer: ``encoder.layer.N...`` plus a ``classifier`` head."""

    def __init__(self) -> None:
        super().__init__()
        self.embeddings = nn.Embedding(50, 8)
        self.encoder = nn.Module()
        self.encoder.layer = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])
        self.classifier = nn.Linear(8, 2)

    def forward(self, input_ids: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        hidden = self.embeddings(input_ids).mean(dim=1)
        for layer in self.encoder.layer:
            hidden = torch.tanh(layer(hidden))
        logits = self.classifier(hidden)
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = nn.functional.cross_entropy(logits, labels)
        return out


def _model_with_grads(seed: int = 0) -> TinyClassifier:
    torch.manual_seed(seed)
    model = TinyClassifier()
    ids = torch.randint(0, 50, (4, 5))
    model(ids, torch.tensor([0, 1, 1, 0]))["loss"].backward()
    return model


def test_layer_group_names() -> None:
    assert layer_group("bert.encoder.layer.0.attention.self.query.weight") == "bert.encoder.layer.0"
    assert layer_group("bert.encoder.layer.11.output.dense.bias") == "bert.encoder.layer.11"
    assert layer_group("bert.embeddings.word_embeddings.weight") == "bert.embeddings"
    assert layer_group("classifier.weight") == "classifier"
    with pytest.raises(ValueError, match="parameter name"):
        layer_group("")


def test_group_norms_equal_direct_computation() -> None:
    model = _model_with_grads()
    fast = group_gradient_norms(parameter_groups(model))
    direct = direct_group_norms(model)
    assert list(fast) == ["embeddings", "encoder.layer.0", "encoder.layer.1", "encoder.layer.2", "classifier"]
    assert fast.keys() == direct.keys()
    for name in fast:
        assert fast[name] == pytest.approx(direct[name], rel=1e-5)
    total = math.sqrt(sum(value**2 for value in fast.values()))
    assert total == pytest.approx(float(torch.nn.utils.get_total_norm([p.grad for p in model.parameters()])), rel=1e-5)


def test_per_parameter_groups_and_filter() -> None:
    model = _model_with_grads()
    per_parameter = group_gradient_norms(parameter_groups(model, group_by=lambda name: name))
    assert per_parameter["classifier.weight"] == pytest.approx(float(model.classifier.weight.grad.norm()), rel=1e-6)
    only_layers = parameter_groups(model, keep=lambda name: "encoder" in name)
    assert list(only_layers) == ["encoder.layer.0", "encoder.layer.1", "encoder.layer.2"]
    with pytest.raises(ValueError, match="no trainable parameter"):
        parameter_groups(model, keep=lambda name: False)


def test_gradient_values_are_flat_per_group_and_skip_missing_gradients() -> None:
    values = gradient_values(parameter_groups(_model_with_grads()))
    assert list(values) == ["embeddings", "encoder.layer.0", "encoder.layer.1", "encoder.layer.2", "classifier"]
    assert values["classifier"].shape == (8 * 2 + 2,) and values["classifier"].dtype == torch.float32
    assert gradient_values(parameter_groups(TinyClassifier())) == {}


def test_missing_gradients_are_left_out() -> None:
    model = TinyClassifier()
    assert group_gradient_norms(parameter_groups(model)) == {}


def test_bad_arguments_raise_clear_errors() -> None:
    with pytest.raises(ValueError, match="positive int"):
        GradientNormRecorder(every=0)
    with pytest.raises(TypeError, match="torch.nn.Module"):
        parameter_groups("not a model")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="clock"):
        StepTimer(clock="sundial")
    with pytest.raises(ValueError, match="larger than warmup_steps"):
        monitoring_overhead(lambda callbacks: None, steps=1)


def _tiny_trainer(callbacks: list, tmp_path, max_grad_norm: float = 1.0, steps: int = 4, trainer_class=None):  # type: ignore[no-untyped-def]
    from datasets import Dataset

    rows = [{"input_ids": [i % 50, (3 * i) % 50, 7], "labels": i % 2} for i in range(64)]
    return tiny_trainer(
        tmp_path,
        callbacks,
        trainer_class,
        model=TinyClassifier,
        train_dataset=Dataset.from_list(rows),
        per_device_train_batch_size=8,
        max_steps=steps,
        learning_rate=1e-1,
        max_grad_norm=max_grad_norm,
    )


def test_recorder_in_a_trainer_sees_clipped_gradients(tmp_path) -> None:  # type: ignore[no-untyped-def]
    recorder = GradientNormRecorder(every=2, snapshot_steps=(0, 3))
    trainer = _tiny_trainer([recorder], tmp_path, max_grad_norm=1e-3)
    trainer.train()
    assert recorder.steps == [0, 2]
    assert set(recorder.snapshots) == {0, 3}
    assert recorder.snapshots[0]["classifier"].numel() == 8 * 2 + 2
    names, steps, matrix = recorder.matrix()
    assert matrix.shape == (len(names), 2)
    logged = [entry["grad_norm"] for entry in trainer.state.log_history if "grad_norm" in entry]
    for recorded_total, before_clipping in zip(recorder.total_norms, logged[::2]):
        assert before_clipping > 1e-3
        assert recorded_total == pytest.approx(1e-3, rel=1e-3)  # clipped to max_grad_norm


def test_recorder_total_matches_logged_norm_without_clipping(tmp_path) -> None:  # type: ignore[no-untyped-def]
    recorder = GradientNormRecorder()
    trainer = _tiny_trainer([recorder], tmp_path, max_grad_norm=0.0)
    trainer.train()
    logged = [entry["grad_norm"] for entry in trainer.state.log_history if "grad_norm" in entry]
    assert recorder.total_norms == pytest.approx(logged, rel=1e-4)


def test_seed_style_printer_prints_one_line_per_parameter(tmp_path) -> None:  # type: ignore[no-untyped-def]
    stream = io.StringIO()
    printer = SeedStyleGradientPrinter(stream=stream)
    _tiny_trainer([printer], tmp_path, steps=2).train()
    parameters = len(list(TinyClassifier().parameters()))
    assert printer.lines_printed == 2 * parameters
    assert stream.getvalue().count(", gradient: ") == 2 * parameters


def test_monitoring_overhead_returns_ratios(tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = monitoring_overhead(lambda callbacks: _tiny_trainer(callbacks, tmp_path, steps=3), steps=3, repeats=1)
    assert set(result["ratio"]) == {"plain", "efficient", "printer"}
    assert result["ratio"]["plain"] == 1.0
    assert all(value > 0 for value in result["step_seconds"].values())
    assert result["steps_timed"] == {"plain": 2, "efficient": 2, "printer": 2}


def test_subclass_records_the_same_norms_as_the_callback_before_clipping(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from helpers.gradient_norms import GradientNormTrainer

    recorder = GradientNormRecorder()
    _tiny_trainer([recorder], tmp_path, max_grad_norm=0.0, steps=3).train()  # no clipping: before = after
    subclass = _tiny_trainer([], tmp_path, max_grad_norm=0.0, steps=3, trainer_class=GradientNormTrainer)
    subclass.train()
    assert len(subclass.gradient_norms) == 3
    for step, norms in enumerate(subclass.gradient_norms):
        assert list(norms) == list(recorder.norms)
        for group, value in norms.items():
            assert value == pytest.approx(recorder.norms[group][step], rel=1e-4)


def test_subclass_vs_callback_returns_the_ratio(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from helpers.monitor_cost import subclass_vs_callback

    built = []

    def make(trainer_class, callbacks):  # type: ignore[no-untyped-def]
        trainer = _tiny_trainer(callbacks, tmp_path, steps=3, trainer_class=trainer_class)
        built.append((type(trainer).__name__, [type(c).__name__ for c in callbacks]))
        return trainer

    result = subclass_vs_callback(make, steps=3, repeats=1)
    assert sorted(built) == [("GradientNormTrainer", []), ("Trainer", []), ("Trainer", ["GradientNormRecorder"])]
    assert set(result["ratio"]) == {"plain", "callback", "subclass"}
    assert result["subclass_over_callback"] == pytest.approx(
        result["step_seconds"]["subclass"] / result["step_seconds"]["callback"]
    )
    with pytest.raises(ValueError, match="positive int"):
        subclass_vs_callback(make, steps=3, repeats=0)


def test_monitor_call_seconds_times_both_monitors() -> None:
    from helpers.monitor_cost import monitor_call_seconds

    model = _model_with_grads()
    result = monitor_call_seconds(model, rounds=3, calls=2)
    assert set(result["call_seconds"]) == {"recorder", "printer"}
    assert result["ratio"]["recorder"] == 1.0 and result["tensors"] == len(list(model.parameters()))
    assert all(value > 0 for value in result["call_seconds"].values())
    with pytest.raises(ValueError, match="backward"):
        monitor_call_seconds(TinyClassifier())
    with pytest.raises(ValueError, match="positive ints"):
        monitor_call_seconds(model, rounds=0)


def test_recorder_keeps_exactly_the_filtered_parameters(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Lesson 08's old attention heatmap, moved here: a recorder grouped per parameter with a name filter (the
    Long customisation post's `"attention" in name`) records one row per kept weight, in model order."""

    def keep(name: str) -> bool:
        return "encoder" in name and name.endswith("weight")

    recorder = GradientNormRecorder(group_by=lambda name: name, keep=keep)
    _tiny_trainer([recorder], tmp_path, steps=2).train()
    names, steps, matrix = recorder.matrix()
    assert names == [name for name, _ in TinyClassifier().named_parameters() if keep(name)]
    assert steps == [0, 1] and matrix.shape == (3, 2)


def test_monitor_call_seconds_counts_more_tensors_on_a_deeper_model() -> None:
    """Lesson 08's old cost comparison by depth, moved here: more layers, more gradient tensors to read."""
    from helpers.monitor_cost import monitor_call_seconds

    shallow = monitor_call_seconds(_model_with_grads(), rounds=2, calls=1)
    deeper = _model_with_grads()
    deeper.encoder.layer.append(nn.Linear(8, 8))
    deeper(torch.randint(0, 50, (4, 5)), torch.tensor([0, 1, 1, 0]))["loss"].backward()
    deep = monitor_call_seconds(deeper, rounds=2, calls=1)
    assert deep["tensors"] == shallow["tensors"] + 2
    assert all(value > 0 for result in (shallow, deep) for value in result["call_seconds"].values())
