"""Exercises of lesson 15 (LoRA adapters): a ``LoraConfig`` applied, trained, saved and reloaded for real, and a
merge that must leave the adapter model as it was."""

from __future__ import annotations

import random
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_15 as solutions

CASES_SEED = 1515  # the check draws its cases from this seed each time it runs; the lesson's rank 8 is not among them
WIDTH, LAYERS = 32, 2  # the fixture BERT: 32 wide, 2 layers


def ranks(seed: int = CASES_SEED) -> list[int]:
    """Two ranks for exercise 1, never the lesson's 8."""
    return random.Random(seed).sample([3, 4, 5, 6, 7, 12], 2)


def _batch(rows: int = 8) -> dict[str, Any]:
    batch = fixtures.batch(fixtures.random_ids(16, seed=9), rows)
    batch.pop("labels")
    return batch


def _logits(model: Any, batch: dict[str, Any]) -> Any:
    import torch

    model.eval()
    with torch.no_grad():
        return model(**batch).logits


def _adapted_layers(model: Any) -> set[str]:
    """The names (last part) of the layers that got a LoRA adapter."""
    return {
        name.rsplit(".lora_A", 1)[0].rsplit(".", 1)[-1] for name, _ in model.named_parameters() if ".lora_A." in name
    }


def _apply(config: Any, rank: int, seed: int) -> Any:
    from peft import LoraConfig, get_peft_model

    if not isinstance(config, LoraConfig):
        raise Wrong(f"adapter_config({rank}) returned {type(config).__name__}; return a peft.LoraConfig.")
    with learner_code(f"applying adapter_config({rank}) to a BERT classifier with get_peft_model"):
        return get_peft_model(fixtures.tiny_model(seed=seed, layers=LAYERS), config)


def _with_new_head(model: Any) -> Any:
    """The same BERT with its classification head drawn anew (as a new session draws it)."""
    import torch

    generator = torch.Generator().manual_seed(2024)
    with torch.no_grad():
        for parameter in model.classifier.parameters():
            parameter.copy_(torch.randn(parameter.shape, generator=generator))
    return model


def _check_config(answer: Any) -> None:
    from peft import PeftModel
    from peft.tuners.lora import LoraLayer

    if not callable(answer):
        raise Wrong("adapter_config should be a function of the rank: def adapter_config(rank): ...")
    for rank in ranks():
        with learner_code(f"calling adapter_config({rank})"):
            config = answer(rank)
        model = _apply(config, rank, seed=rank)
        layers = _adapted_layers(model)
        if layers != {"query", "key", "value"}:
            raise Wrong(
                f"your adapter sits on the layers {sorted(layers)}; the exercise asks for query, key and value."
            )
        a_weights = [p for n, p in model.named_parameters() if ".lora_A." in n]
        if any(p.shape[0] != rank for p in a_weights):
            raise Wrong(f"adapter_config({rank}) made adapters of rank {a_weights[0].shape[0]}; use the rank given.")
        scaling = {
            value for module in model.modules() if isinstance(module, LoraLayer) for value in module.scaling.values()
        }
        if scaling != {2.0}:
            raise Wrong(
                f"the adapters scale their update by {sorted(scaling)} (lora_alpha / r); with lora_alpha twice "
                "the rank it is 2."
            )
        head = model.get_base_model().classifier
        head_trains = any(p.requires_grad for p in head.parameters())
        if not head_trains:
            raise Wrong(
                "the classification head is frozen: it stays random. Tell PEFT that this is a sequence "
                "classifier, or name the head among the modules it trains and saves in full."
            )
        trainer = fixtures.trainer(
            {"per_device_train_batch_size": 8, "max_steps": 3, "learning_rate": 1e-2, "save_strategy": "no"},
            model=model,
        )
        fixtures.train(trainer, "training the adapter model")
        folder = fixtures.scratch_dir()
        with learner_code("saving the adapter"):
            trainer.save_model(folder)
        batch = _batch()
        with learner_code("reloading the adapter onto a new BERT (its head drawn anew)"):
            reloaded = PeftModel.from_pretrained(_with_new_head(fixtures.tiny_model(seed=rank, layers=LAYERS)), folder)
        gap = (_logits(model, batch) - _logits(reloaded, batch)).abs().max().item()
        if gap > 1e-5:
            raise Wrong(
                f"after save and reload the logits differ by {gap:.3g}: the trained head was not saved with "
                "the adapter."
            )


def _peft_model(seed: int) -> Any:
    """A small BERT with a LoRA adapter whose B matrices hold drawn values (so that merging matters)."""
    import torch
    from peft import LoraConfig, get_peft_model

    model = get_peft_model(
        fixtures.tiny_model(seed=seed, layers=LAYERS),
        LoraConfig(task_type="SEQ_CLS", r=4, lora_alpha=8, target_modules=["query", "value"]),
    )
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if ".lora_B." in name:
                parameter.copy_(torch.randn(parameter.shape, generator=generator) * 0.5)
    return model.eval()


def _check_merge(answer: Any) -> None:
    import torch
    from peft import PeftModel
    from transformers import PreTrainedModel

    if not callable(answer):
        raise Wrong("merged_copy should be a function: def merged_copy(peft_model): ...")
    seed = random.Random(CASES_SEED + 2).randint(10, 999)
    peft_model, batch = _peft_model(seed), _batch()
    before = {name: value.clone() for name, value in peft_model.state_dict().items()}
    expected = _logits(peft_model, batch)
    with learner_code("calling merged_copy(peft_model)"):
        merged = answer(peft_model)
    if isinstance(merged, PeftModel) or not isinstance(merged, PreTrainedModel):
        raise Wrong(f"merged_copy returned a {type(merged).__name__}; return the plain transformers model.")
    if any("lora_" in name for name, _ in merged.named_parameters()):
        raise Wrong("the model you returned still contains LoRA layers: the adapter is not folded into the weights.")
    after = peft_model.state_dict()
    if set(after) != set(before) or any(not torch.equal(after[name], before[name]) for name in before):
        raise Wrong("merged_copy changed peft_model itself (merging works in place): work on a copy.")
    gap = (_logits(merged, batch) - expected).abs().max().item()
    if gap > 1e-4:
        raise Wrong(
            f"your model's logits differ from peft_model's by {gap:.3g}: the adapter's update is missing from "
            "its weights."
        )


q1 = Exercise(
    answer_name="adapter_config",
    checker=_check_config,
    hint_text="LoraConfig takes r, lora_alpha and target_modules (the names of the layers inside each attention); "
    "the new head is kept trainable and saved by task_type (a sequence classifier) or by modules_to_save.",
    solution_obj=solutions.adapter_config,
)

q2 = Exercise(
    answer_name="merged_copy",
    checker=_check_merge,
    hint_text="merge_and_unload() folds the adapter into the weights and returns the plain model, but it changes "
    "the model it is called on: call it on a copy (the copy module).",
    solution_obj=solutions.merged_copy,
)

bind_exercises(globals())
