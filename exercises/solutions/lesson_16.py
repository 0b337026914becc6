"""Reference solutions for the exercises of lesson 16."""

from __future__ import annotations

from typing import Any

from peft import LoraConfig, get_peft_model
from torch import nn


def linear_targets(model: Any) -> list[str]:
    """The last part of the name of every ``nn.Linear`` layer of ``model`` but its head: the names that end with
    ``classifier`` or ``score``, as PEFT's sequence-classification task reads the head (DistilBERT's
    ``pre_classifier`` included)."""
    linear = [name for name, module in model.named_modules() if isinstance(module, nn.Linear)]
    return sorted({name.rsplit(".", 1)[-1] for name in linear if not name.endswith(("classifier", "score"))})


def top_blocks_adapter(model: Any, k: int) -> Any:
    """``model`` with a LoRA adapter of rank 8 on every linear layer of its top ``k`` blocks; the head in full."""
    blocks = model.config.num_hidden_layers
    config = LoraConfig(
        task_type="SEQ_CLS",
        r=8,
        lora_alpha=16,
        target_modules=linear_targets(model),
        layers_to_transform=list(range(blocks - k, blocks)),
    )
    return get_peft_model(model, config)
