"""Lesson 16's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

from exercise_cases import answer_tests, exercise
from peft import LoraConfig, TaskType, get_peft_model
from torch import nn

from exercises.checks import WRONG


def targets_full_names(model):
    head = model.classifier if hasattr(model, "classifier") else model.score
    return [name for name, module in model.named_modules() if isinstance(module, nn.Linear) and module is not head]


def targets_by_type_name(model):
    found = set()
    for name, module in model.named_modules():
        if type(module).__name__ == "Linear" and not name.endswith(("classifier", "score")):
            found.add(name.split(".")[-1])
    return tuple(found)


def targets_attention_only(model):
    return ["query", "key", "value", "q_proj", "k_proj", "v_proj", "o_proj"]


def targets_bert_names(model):
    return ["query", "key", "value", "dense"]


def targets_with_every_head(model):
    return sorted({name.rsplit(".", 1)[-1] for name, module in model.named_modules() if isinstance(module, nn.Linear)})


def targets_bert_head_only_removed(model):
    names = {name.rsplit(".", 1)[-1] for name, module in model.named_modules() if isinstance(module, nn.Linear)}
    return sorted(names - {"classifier"})


def targets_all_linear(model):
    return "all-linear"


def targets_without_pre_classifier(model):
    """Counts DistilBERT's pre_classifier as part of its head: right too."""
    head = {"classifier", "score", "pre_classifier"}
    return sorted({n.split(".")[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)} - head)


def targets_two_architectures(model):
    """The BERT and Llama names written out: they match nothing on a third architecture."""
    bert = ["query", "key", "value", "dense"]
    llama = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    return bert + llama


def targets_with_embeddings(model):
    """Every linear layer's name, and the embeddings too (LoRA adapts nn.Embedding as well)."""
    names = {n.split(".")[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)} - {"classifier", "score"}
    return sorted(names) + [n.split(".")[-1] for n, m in model.named_modules() if isinstance(m, nn.Embedding)]


def top_blocks_regex(model, k):
    blocks = model.config.num_hidden_layers
    top = "|".join(str(block) for block in range(blocks - k, blocks))
    linear = "|".join(_linear_suffixes(model))
    return get_peft_model(
        model, LoraConfig(task_type=TaskType.SEQ_CLS, target_modules=rf".*\.layers?\.({top})\..*\.({linear})")
    )


def top_blocks_regex_two_architectures(model, k):
    """The BERT and Llama layer names written into the pattern: nothing matches on a DistilBERT."""
    blocks = model.config.num_hidden_layers
    top = "|".join(str(block) for block in range(blocks - k, blocks))
    return get_peft_model(
        model,
        LoraConfig(task_type=TaskType.SEQ_CLS, target_modules=rf".*\.layers?\.({top})\..*(query|key|value|dense|proj)"),
    )


def top_blocks_full_names(model, k):
    first = model.config.num_hidden_layers - k
    names = []
    for name, module in model.named_modules():
        parts = name.split(".")
        numbers = [int(part) for part in parts if part.isdigit()]
        if isinstance(module, nn.Linear) and numbers and numbers[0] >= first:
            names.append(name)
    return get_peft_model(
        model, LoraConfig(r=8, lora_alpha=32, target_modules=names, modules_to_save=["classifier", "score"])
    )


def _linear_suffixes(model):
    return sorted(
        {n.rsplit(".", 1)[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)} - {"classifier", "score"}
    )


def top_blocks_int(model, k):
    config = LoraConfig(task_type="SEQ_CLS", target_modules=_linear_suffixes(model), layers_to_transform=k)
    return get_peft_model(model, config)


def top_blocks_bottom(model, k):
    config = LoraConfig(task_type="SEQ_CLS", target_modules=_linear_suffixes(model), layers_to_transform=list(range(k)))
    return get_peft_model(model, config)


def top_blocks_off_by_one(model, k):
    blocks = model.config.num_hidden_layers
    layers = list(range(blocks - k + 1, blocks))
    return get_peft_model(
        model, LoraConfig(task_type="SEQ_CLS", target_modules=_linear_suffixes(model), layers_to_transform=layers)
    )


def top_blocks_lesson_six(model, k):
    config = LoraConfig(
        task_type="SEQ_CLS", target_modules=_linear_suffixes(model), layers_to_transform=list(range(6 - k, 6))
    )
    return get_peft_model(model, config)


def top_blocks_attention_only(model, k):
    blocks = model.config.num_hidden_layers
    config = LoraConfig(
        task_type="SEQ_CLS",
        target_modules=["query", "key", "value", "q_proj", "k_proj", "v_proj"],
        layers_to_transform=list(range(blocks - k, blocks)),
    )
    return get_peft_model(model, config)


def top_blocks_no_head(model, k):
    blocks = model.config.num_hidden_layers
    config = LoraConfig(target_modules=_linear_suffixes(model), layers_to_transform=list(range(blocks - k, blocks)))
    return get_peft_model(model, config)


def top_blocks_rank_four(model, k):
    blocks = model.config.num_hidden_layers
    config = LoraConfig(
        task_type="SEQ_CLS",
        r=4,
        target_modules=_linear_suffixes(model),
        layers_to_transform=list(range(blocks - k, blocks)),
    )
    return get_peft_model(model, config)


def top_blocks_head_suffixes_kept(model, k):
    """Every linear name but the final head's, with the top blocks: DistilBERT's pre_classifier is among them,
    and PEFT's sequence-classification task trains it in full already."""
    names = sorted(
        {n.split(".")[-1] for n, m in model.named_modules() if isinstance(m, nn.Linear)} - {"classifier", "score"}
    )
    top = list(range(model.config.num_hidden_layers - k, model.config.num_hidden_layers))
    return get_peft_model(
        model, LoraConfig(task_type=TaskType.SEQ_CLS, r=8, target_modules=names, layers_to_transform=top)
    )


def top_blocks_all_linear(model, k):
    blocks = model.config.num_hidden_layers
    config = LoraConfig(
        task_type=TaskType.SEQ_CLS,
        r=8,
        target_modules="all-linear",
        layers_to_transform=list(range(blocks - k, blocks)),
    )
    return get_peft_model(model, config)


def top_blocks_config_only(model, k):
    blocks = model.config.num_hidden_layers
    return LoraConfig(
        task_type="SEQ_CLS", target_modules=_linear_suffixes(model), layers_to_transform=list(range(blocks - k, blocks))
    )


CORRECT = {
    "q1": [targets_full_names, targets_by_type_name, targets_without_pre_classifier],
    "q2": [top_blocks_regex, top_blocks_full_names],
}

MISTAKES = {
    "q1": [
        (targets_attention_only, "not only the attention's"),
        (targets_bert_names, "a Llama's names are not a BERT's"),
        (targets_with_every_head, "put an adapter on the head"),
        (targets_bert_head_only_removed, "put an adapter on the head (score)"),
        (targets_all_linear, "return a list of layer names"),
        (targets_two_architectures, "on a DistilBERT of"),
        (targets_with_embeddings, "layers that are not nn.Linear"),
    ],
    "q2": [
        (top_blocks_int, "give layers_to_transform a list"),
        (top_blocks_bottom, "Blocks count from 0"),
        (top_blocks_off_by_one, "your adapter sits in blocks"),
        (top_blocks_lesson_six, "check the block numbers: this model has"),
        (top_blocks_attention_only, "have no adapter"),
        (top_blocks_no_head, "the classification head is frozen"),
        (top_blocks_rank_four, "asks for rank 8"),
        (top_blocks_config_only, "return the model with its adapter"),
        (top_blocks_regex_two_architectures, "that your target names are this model's own"),
        (top_blocks_head_suffixes_kept, "Leave those names out of target_modules"),
        (top_blocks_all_linear, "`layers_to_transform` cannot be used when `target_modules` is a str"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)


def test_peft_own_error_gets_no_block_number_hint():
    """PEFT refuses "all-linear" with layers_to_transform in words of its own: the block-number hint, meant for
    a search that adapted nothing, would send the learner the wrong way."""
    verdict = exercise("16", "q2").evaluate(top_blocks_all_linear)
    assert verdict.status == WRONG and "block numbers" not in verdict.message, verdict
