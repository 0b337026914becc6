"""Exercises of lesson 16 (choosing a LoRA adapter): target names read from a model, and an adapter on the top
blocks only, each applied with ``get_peft_model`` to a BERT, a Llama and a DistilBERT classifier of the check's own
sizes."""

from __future__ import annotations

import random
from typing import Any

from exercises.checks.adapters import (
    EITHER_WAY,
    adapted_layers,
    block_of,
    classifiers,
    describe,
    head_of,
    linear_layers,
    why_peft_refused,
)
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_16 as solutions

CASES_SEED = 1616  # the check draws its block counts from this seed each time it runs


def _check_targets(answer: Any) -> None:
    from peft import LoraConfig, get_peft_model
    from peft.tuners.tuners_utils import NoMatchingPeftModuleError

    if not callable(answer):
        raise Wrong("linear_targets should be a function of the model: def linear_targets(model): ...")
    for label, model in classifiers(CASES_SEED):
        with learner_code(f"calling linear_targets on {label}"):
            names = answer(model)
        if not isinstance(names, (list, tuple, set, frozenset)) or not all(isinstance(n, str) for n in names):
            raise Wrong(
                f"linear_targets returned {names!r}; return a list of layer names (strings), such as "
                "['query', 'value'] for a BERT: what you would pass as target_modules."
            )
        if not names:
            raise Wrong(f"linear_targets returned no names for {label}: return the names of its linear layers.")
        names, expected, head = list(names), linear_layers(model), head_of(model)
        try:
            with learner_code(f"applying LoraConfig(target_modules=your names) to {label}"):
                adapted = adapted_layers(get_peft_model(model, LoraConfig(r=2, lora_alpha=4, target_modules=names)))
        except Wrong as wrong:
            if not isinstance(wrong.__cause__, NoMatchingPeftModuleError):
                raise
            raise Wrong(
                f"on {label}, your names ({describe(set(names))}) match no layer: read them from the model you "
                "are given (a Llama's names are not a BERT's)."
            ) from None
        if head in adapted:
            raise Wrong(
                f"on {label}, your names put an adapter on the head ({head}): leave the head out (it trains in "
                "full); its name differs from one architecture to the next."
            )
        either_way = EITHER_WAY.get(type(model).__name__, set())
        extra, missing = adapted - expected, expected - adapted - either_way
        if extra:
            kinds = sorted({type(module).__name__ for name, module in model.named_modules() if name in extra})
            raise Wrong(
                f"on {label}, your names also put an adapter on {len(extra)} layers that are not nn.Linear "
                f"({describe(extra)}: {', '.join(kinds)}): a target matches every layer whose name ends with it, "
                "so keep only the names of linear layers."
            )
        if missing:
            raise Wrong(
                f"on {label}, your names leave {len(missing)} linear layers without an adapter ({describe(missing)})"
                ": read every nn.Linear from model.named_modules(), not only the attention's."
            )


def _check_top_blocks(answer: Any) -> None:
    from peft import PeftModel

    if not callable(answer):
        raise Wrong("top_blocks_adapter should be a function: def top_blocks_adapter(model, k): ...")
    draw = random.Random(CASES_SEED + 2)
    for label, model in classifiers(CASES_SEED + 1):
        blocks = model.config.num_hidden_layers
        expected_all = linear_layers(model)
        for k in sorted(draw.sample(range(1, blocks), 2)):
            try:
                with learner_code(f"calling top_blocks_adapter({label}, k={k})"):
                    adapted_model = answer(type(model)(model.config), k)
            except Wrong as wrong:
                refused = why_peft_refused(wrong.__cause__, f"on {label} with k={k}", blocks)
                if refused is None:
                    raise
                raise Wrong(refused) from None
            if not isinstance(adapted_model, PeftModel):
                raise Wrong(
                    f"top_blocks_adapter returned {type(adapted_model).__name__}; return the model with its "
                    "adapter, as get_peft_model(model, config) returns it."
                )
            adapted = adapted_layers(adapted_model)
            wanted = {name for name in expected_all if (block_of(name) or 0) >= blocks - k}
            got_blocks = sorted({block_of(name) for name in adapted} - {None})
            if got_blocks != list(range(blocks - k, blocks)):
                raise Wrong(
                    f"on {label} with k={k}, your adapter sits in blocks {got_blocks}; the top {k} are "
                    f"{list(range(blocks - k, blocks))}. Blocks count from 0: read their number from "
                    "model.config.num_hidden_layers, and give layers_to_transform a list."
                )
            if adapted != wanted:
                extra, missing = adapted - wanted, wanted - adapted
                found = [f"your adapter also sits on {describe(extra)}, outside the top blocks"] if extra else []
                found += [f"these layers of the top blocks have no adapter: {describe(missing)}"] if missing else []
                raise Wrong(
                    f"on {label} with k={k}, {'; '.join(found)}. The exercise asks for every linear layer of the "
                    "top blocks, and nothing else."
                )
            ranks = {p.shape[0] for n, p in adapted_model.named_parameters() if ".lora_A." in n}
            if ranks != {8}:
                raise Wrong(f"your adapter has rank {sorted(ranks)}; the exercise asks for rank 8.")
            head = getattr(adapted_model.get_base_model(), head_of(model))
            if not any(p.requires_grad for p in head.parameters()):
                raise Wrong(
                    "the classification head is frozen: it stays random. Tell PEFT that this is a sequence "
                    "classifier (task_type), or name the head among the modules it trains in full."
                )


q1 = Exercise(
    answer_name="linear_targets",
    checker=_check_targets,
    hint_text="Walk the model's modules with their names and keep those that are nn.Linear layers (the last part "
    "of a name is enough: a target matches every path that ends with it); leave out the head, whose name differs "
    "between architectures (BERT's classifier, Llama's score).",
    solution_obj=solutions.linear_targets,
)

q2 = Exercise(
    answer_name="top_blocks_adapter",
    checker=_check_top_blocks,
    hint_text="The model's config gives its number of blocks (num_hidden_layers), counted from 0; LoraConfig's "
    "layers_to_transform takes a list of block numbers (an int is one block), and target_modules can stay "
    "'every linear layer' (exercise 1). The sequence-classification task type keeps the head trainable.",
    solution_obj=solutions.top_blocks_adapter,
)

bind_exercises(globals())
