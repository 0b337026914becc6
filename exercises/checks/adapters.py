"""Transformers classifiers of three architectures and what a LoRA adapter put on them: the fixtures and readings
of lesson 16's checks (choosing an adapter), one concern apart from the exercises' verdicts."""

from __future__ import annotations

import random
import re
from typing import Any

from exercises.checks import fixtures

HEADS = {
    "BertForSequenceClassification": "classifier",
    "LlamaForSequenceClassification": "score",
    "DistilBertForSequenceClassification": "classifier",
}
# Linear layers outside the blocks that sit before the head: an adapter there is right, and so is none. PEFT's
# sequence-classification task counts DistilBERT's pre_classifier as part of the head (a name that ends with
# "classifier") and trains it in full, so exercise 2 cannot adapt it; exercise 1 names targets without a task.
EITHER_WAY = {"DistilBertForSequenceClassification": {"pre_classifier"}}


def classifiers(seed: int) -> list[tuple[str, Any]]:
    """The check's classifiers: a BERT, a Llama and a DistilBERT (built from a config, no weights), their numbers
    of blocks drawn (3 to 5), never the lesson's 6. Three architectures name their layers three ways (query,
    q_proj, q_lin), so names written out for two of them match nothing on the third."""
    draw = random.Random(seed)
    bert_layers, llama_layers, distil_layers = draw.randint(3, 5), draw.randint(3, 5), draw.randint(3, 5)
    return [
        (f"a BERT of {bert_layers} blocks", fixtures.tiny_model(seed=seed, layers=bert_layers)),
        (f"a Llama of {llama_layers} blocks", fixtures.tiny_llama(seed=seed, layers=llama_layers)),
        (f"a DistilBERT of {distil_layers} blocks", fixtures.tiny_distilbert(seed=seed, layers=distil_layers)),
    ]


def head_of(model: Any) -> str:
    return HEADS[type(model).__name__]


def linear_layers(model: Any) -> set[str]:
    """The full names of the model's ``nn.Linear`` layers, its head left out."""
    from torch import nn

    head = head_of(model)
    return {name for name, module in model.named_modules() if isinstance(module, nn.Linear) and name != head}


def adapted_layers(peft_model: Any) -> set[str]:
    """The full names (in the base model) of the layers that carry a LoRA adapter."""
    from peft.tuners.lora import LoraLayer

    prefix = "base_model.model."
    return {name.removeprefix(prefix) for name, module in peft_model.named_modules() if isinstance(module, LoraLayer)}


def block_of(name: str) -> int | None:
    """The block number in a layer's full name (``...layer.3...`` or ``...layers.3...``), or None."""
    found = re.search(r"\.layers?\.(\d+)\.", name)
    return int(found.group(1)) if found else None


def describe(names: set[str]) -> str:
    return ", ".join(sorted(names)[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")


def why_peft_refused(error: BaseException | None, where: str, blocks: int) -> str | None:
    """What to tell a learner whose top-blocks adapter PEFT refused with ``error``, or None when ``error`` is not
    one of PEFT's refusals: the head trained in full cannot also hold an adapter; nothing matched to adapt."""
    from peft.tuners.tuners_utils import NoMatchingPeftModuleError

    if "modules_to_save cannot be applied" in str(error):
        return (
            f"{where}, PEFT refused your adapter ({error}): the sequence-classification task trains the head in full "
            "(every module whose name ends with classifier or score, DistilBERT's pre_classifier too) and cannot "
            "also put an adapter on it. Leave those names out of target_modules."
        )
    if isinstance(error, NoMatchingPeftModuleError):
        return (
            f"{where}, PEFT found no layer to adapt ({error}); check the block numbers: this model has {blocks}, "
            "from 0; and check that your target names are this model's own (read them from the model, as in "
            "exercise 1)."
        )
    return None
