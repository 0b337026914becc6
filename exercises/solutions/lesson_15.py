"""Reference solutions for the exercises of lesson 15."""

from __future__ import annotations

import copy
from typing import Any

from peft import LoraConfig


def adapter_config(rank: int) -> LoraConfig:
    """LoRA of rank ``rank`` on query, key and value; the classification head trained and saved in full."""
    return LoraConfig(
        task_type="SEQ_CLS",
        r=rank,
        lora_alpha=2 * rank,
        target_modules=["query", "key", "value"],
    )


def merged_copy(peft_model: Any) -> Any:
    """A plain transformers model with the adapter merged in; ``peft_model`` is left as it was."""
    return copy.deepcopy(peft_model).merge_and_unload()
