"""Lesson 15's claims that its tucked cells used to prove by re-training (section 2, the head without
``task_type``; section 4, callbacks and ``compute_loss`` overrides on an adapter model), tried here on BERT, Llama
and DistilBERT classifiers built from configs, so the lesson's run keeps to its time budget."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from peft import LoraConfig, PeftModel, get_peft_model
from rule_training import trainer
from safetensors import safe_open

from exercises.checks import fixtures
from helpers.callback_events import EventRecorder
from helpers.gradient_norms import GradientNormRecorder
from helpers.lessons.lesson_07 import WeightedLossTrainer

MODELS = {
    "bert": (fixtures.tiny_model, ["query", "value"]),
    "llama": (fixtures.tiny_llama, ["q_proj", "v_proj"]),
    "distilbert": (fixtures.tiny_distilbert, ["q_lin", "v_lin"]),
}
HEADS = {"bert": ["classifier"], "llama": ["score"], "distilbert": ["pre_classifier", "classifier"]}


def _head(model: Any, name: str) -> dict[str, torch.Tensor]:
    """The head's weights of a PEFT model (or of a plain one), by layer name."""
    base = model.get_base_model() if isinstance(model, PeftModel) else model
    return {head: getattr(base, head).weight.detach().clone() for head in HEADS[name]}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_without_task_type_the_head_stays_random_and_is_not_saved(tmp_path: Any, name: str) -> None:
    make, targets = MODELS[name]
    headless = get_peft_model(make(seed=0), LoraConfig(r=4, lora_alpha=8, target_modules=targets))
    before = _head(headless, name)
    run = trainer(tmp_path / "run", model=headless, train_dataset=fixtures.random_ids(12), learning_rate=1e-2)
    run.train()
    run.save_model(str(tmp_path / "saved"))
    with safe_open(str(tmp_path / "saved" / "adapter_model.safetensors"), "pt") as saved:
        keys = list(saved.keys())
    again = PeftModel.from_pretrained(make(seed=1), str(tmp_path / "saved"))
    after = _head(headless, name)
    assert type(headless) is PeftModel  # a plain PeftModel, not PeftModelForSequenceClassification
    assert all(torch.equal(before[head], after[head]) for head in before)  # the head did not train
    assert any("lora_" in key for key in keys)
    assert not any(f".{head}." in key for key in keys for head in HEADS[name])  # nor is it saved
    reloaded = _head(again, name)
    assert all(not torch.equal(reloaded[head], after[head]) for head in after)  # a reload draws another


@pytest.mark.parametrize("name", sorted(MODELS))
def test_modules_to_save_is_the_other_fix(tmp_path: Any, name: str) -> None:
    make, targets = MODELS[name]
    config = LoraConfig(r=4, lora_alpha=8, target_modules=targets, modules_to_save=HEADS[name])
    model = get_peft_model(make(seed=0), config)
    before = _head(model, name)
    run = trainer(tmp_path / "run", model=model, train_dataset=fixtures.random_ids(12), learning_rate=1e-2)
    run.train()
    run.save_model(str(tmp_path / "saved"))
    again = PeftModel.from_pretrained(make(seed=1), str(tmp_path / "saved"))
    after, reloaded = _head(model, name), _head(again, name)
    assert all(not torch.equal(before[head], after[head]) for head in before)  # the head trained
    assert all(torch.equal(reloaded[head], after[head]) for head in after)  # and came back with the adapter


def _events_and_norms(tmp_path: Any, model: Any) -> dict[str, Any]:
    """A weighted-loss run (lesson 07) with lesson 05's event recorder and lesson 08's gradient-norm recorder."""
    events, norms = EventRecorder(), GradientNormRecorder()
    run = trainer(
        tmp_path,
        callbacks=[events, norms],
        model=model,
        train_dataset=fixtures.random_ids(12),
        trainer_class=WeightedLossTrainer,
        class_weights=torch.tensor([1.0, 3.0]),
        max_steps=3,
        per_device_train_batch_size=4,
        logging_strategy="steps",
        logging_steps=1,
        learning_rate=1e-2,
    )
    run.train()
    logged = [entry["grad_norm"] for entry in run.state.log_history if "grad_norm" in entry]
    assert len(logged) == len(norms.total_norms) == 3
    return {
        "events": [record.event for record in events.records],
        "groups": list(norms.norms),
        "norm gap": max(  # the recorder reads after clipping to max_grad_norm
            abs(a - min(b, run.args.max_grad_norm)) for a, b in zip(norms.total_norms, logged)
        ),
    }


@pytest.mark.parametrize("name", sorted(MODELS))
def test_callbacks_and_loss_overrides_run_unchanged_on_an_adapter_model(tmp_path: Any, name: str) -> None:
    make, targets = MODELS[name]
    adapter = get_peft_model(make(seed=0), LoraConfig(task_type="SEQ_CLS", r=4, target_modules=targets))
    plain = _events_and_norms(tmp_path / "plain", make(seed=0))
    lora = _events_and_norms(tmp_path / "lora", adapter)
    assert plain["events"] == lora["events"]  # the same events in the same order
    assert plain["norm gap"] < 1e-4 and lora["norm gap"] < 1e-4
    assert "base_model.model" in lora["groups"] and "base_model.model" not in plain["groups"]  # PEFT's prefix
    heads = [getattr(adapter.get_base_model(), head) for head in HEADS[name]]
    assert all(type(head).__name__ == "ModulesToSaveWrapper" for head in heads)
