"""Lesson 16's rules, tried where a learner uses them: three architectures built from configs (BERT, Llama,
DistilBERT), other ranks and ratios, and the lesson's own committed run (no empty progress tables)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import torch
from peft import LoraConfig, get_peft_model
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "16_choosing_an_adapter.ipynb"


def classifiers() -> dict[str, Any]:
    """Small classifiers from configs, 4 blocks each, dropout off; their block module names for layers_pattern."""
    from transformers import (
        BertConfig,
        BertForSequenceClassification,
        DistilBertConfig,
        DistilBertForSequenceClassification,
        LlamaConfig,
        LlamaForSequenceClassification,
    )

    torch.manual_seed(0)
    bert = BertForSequenceClassification(
        BertConfig(
            vocab_size=100,
            hidden_size=32,
            num_hidden_layers=4,
            num_attention_heads=2,
            intermediate_size=64,
            hidden_dropout_prob=0.0,
            attention_probs_dropout_prob=0.0,
        )
    )
    llama = LlamaForSequenceClassification(
        LlamaConfig(
            vocab_size=100,
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=4,
            num_attention_heads=2,
            num_key_value_heads=2,
            pad_token_id=0,
        )
    )
    distil = DistilBertForSequenceClassification(
        DistilBertConfig(
            vocab_size=100, dim=32, n_layers=4, n_heads=2, hidden_dim=64, dropout=0.0, attention_dropout=0.0
        )
    )
    return {
        "bert": (bert, ["query", "value", "dense"], "layer"),
        "llama": (llama, ["q_proj", "v_proj", "down_proj"], "layers"),
        "distilbert": (distil, ["q_lin", "v_lin", "lin1"], "layer"),
    }


def _adapted(model: Any) -> list[str]:
    return sorted(name for name, module in model.named_modules() if hasattr(module, "lora_A") and "lora" not in name)


@pytest.mark.rule(
    lesson="16",
    section="Recap",
    text="a name matches every layer whose path ends with it",
    covers=["BERT", "Llama", "DistilBERT", "a name that is only the end of a word matches nothing"],
)
def test_a_target_name_matches_every_linear_layer_whose_path_ends_with_it() -> None:
    from peft.tuners.tuners_utils import NoMatchingPeftModuleError

    for name, (model, targets, _) in classifiers().items():
        expected = sorted(
            path
            for path, module in model.named_modules()
            if isinstance(module, nn.Linear) and path.rsplit(".", 1)[-1] in targets
        )
        config = LoraConfig(task_type="SEQ_CLS", r=2, target_modules=targets)
        assert _adapted(get_peft_model(model, config)) == [f"base_model.model.{path}" for path in expected], name
    bert = classifiers()["bert"][0]
    with pytest.raises(NoMatchingPeftModuleError):
        get_peft_model(bert, LoraConfig(task_type="SEQ_CLS", r=2, target_modules=["ense"]))


@pytest.mark.rule(
    lesson="16",
    section="Recap",
    text="`layers_to_transform` adapts only the blocks you name",
    covers=["BERT", "Llama", "DistilBERT", "top 2 of 4 blocks", "no gradient below the lowest adapted block"],
)
def test_layers_to_transform_adapts_the_named_blocks_and_the_backward_pass_stops_below() -> None:
    for name, (model, targets, pattern) in classifiers().items():
        config = LoraConfig(
            task_type="SEQ_CLS", r=2, target_modules=targets, layers_to_transform=[2, 3], layers_pattern=pattern
        )
        adapted = get_peft_model(model, config)
        blocks = {int(part) for path in _adapted(adapted) for part in path.split(".") if part.isdigit()}
        assert blocks == {2, 3}, (name, blocks)
        ids = torch.randint(1, 100, (2, 6))
        hidden = adapted(input_ids=ids, output_hidden_states=True).hidden_states  # [embeddings, blocks]
        assert not any(state.requires_grad for state in hidden[:3]), name  # below block 2: no graph
        assert hidden[3].requires_grad, name


@pytest.mark.rule(
    lesson="16",
    section="Recap",
    text="`r` buys capacity at a linear cost in parameters",
    covers=["BERT", "Llama", "DistilBERT", "r 1, 2, 4, 8, 16"],
)
def test_the_adapter_parameters_grow_linearly_with_r() -> None:
    for name, (model, targets, _) in classifiers().items():
        counts = {}
        for rank in (1, 2, 4, 8, 16):
            config = LoraConfig(task_type="SEQ_CLS", r=rank, target_modules=targets)
            counts[rank] = get_peft_model(model, config).get_nb_trainable_parameters()[0]
            model = classifiers()[name][0]  # get_peft_model changes the model it is given
        per_rank = counts[2] - counts[1]
        assert all(counts[rank] - counts[1] == (rank - 1) * per_rank for rank in counts), (name, counts)


def _one_step_change(model: Any, config: LoraConfig, learning_rate: float, tmp_path: Path) -> torch.Tensor:
    from transformers import Trainer, TrainingArguments

    adapted = get_peft_model(model, config)
    generator = torch.Generator().manual_seed(0)
    rows = [
        {"input_ids": ids, "labels": int(ids[0] > 50)} for ids in torch.randint(1, 100, (16, 6), generator=generator)
    ]
    args = TrainingArguments(
        output_dir=str(tmp_path),
        max_steps=1,
        per_device_train_batch_size=16,
        learning_rate=learning_rate,
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        report_to="none",
    )
    Trainer(model=adapted, args=args, train_dataset=rows).train()
    layer = next(module for name, module in adapted.named_modules() if hasattr(module, "get_delta_weight"))
    return layer.get_delta_weight("default")


@pytest.mark.rule(
    lesson="16",
    section="Recap",
    text="`lora_alpha / r` is a learning-rate factor",
    covers=["BERT", "Llama", "DistilBERT", "alpha and learning rate doubled", "r 4 and 8", "first AdamW step"],
)
def test_lora_alpha_over_r_acts_as_a_learning_rate_factor_on_the_first_step(tmp_path: Path) -> None:
    gaps = {}
    for name in ("bert", "llama", "distilbert"):
        for rank in (4, 8):
            changes = []
            for alpha, rate in ((4 * rank, 1e-3), (2 * rank, 2e-3)):
                model, targets, _ = classifiers()[name]
                config = LoraConfig(task_type="SEQ_CLS", r=rank, lora_alpha=alpha, target_modules=targets)
                changes.append(_one_step_change(model, config, rate, tmp_path))
            largest = changes[1].abs().max().item()
            assert largest > 0, (name, rank)
            gaps[name, rank] = (changes[0] - changes[1]).abs().max().item() / largest
    print({key: round(gap, 3) for key, gap in gaps.items()})
    assert max(gaps.values()) < 0.15, gaps  # AdamW's epsilon: not exactly the same step (the lesson, section 2)


def test_the_trials_show_no_empty_progress_table() -> None:
    """Issue 59: each trial printed a progress table with no row ("No log") in the committed run."""
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    outputs = json.dumps([cell.get("outputs", []) for cell in cells if cell["cell_type"] == "code"])
    assert "No log" not in outputs


def _blocks(model: Any, pattern: str) -> list[Any]:
    """The numbered blocks of a classifier (``...<pattern>.<i>``), in order."""
    found = [
        (int(name.rsplit(".", 1)[1]), module)
        for name, module in model.named_modules()
        if name.rsplit(".", 1)[0].endswith(f".{pattern}") and name.rsplit(".", 1)[1].isdigit()
    ]
    return [module for _, module in sorted(found, key=lambda pair: pair[0])]


@pytest.mark.rule(
    lesson="16",
    section="1. Only the top layers",
    text="below the lowest adapted block nothing needs a gradient, so the backward pass stops there.",
    covers=[
        "BERT, Llama and DistilBERT classifiers of 4 blocks",
        "layers_to_transform [2, 3] and [3]: backward hooks fire on the adapted blocks only",
        "every block adapted: the backward pass reaches block 0",
    ],
)
def test_the_backward_pass_stops_below_the_lowest_adapted_block() -> None:
    import copy

    ids = torch.randint(1, 100, (2, 6), generator=torch.Generator().manual_seed(0))
    for name, (model, targets, pattern) in classifiers().items():
        for layers in ([2, 3], [3], None):
            adapter = get_peft_model(
                copy.deepcopy(model),
                LoraConfig(task_type="SEQ_CLS", r=4, target_modules=targets[:2], layers_to_transform=layers),
            )
            reached: list[int] = []
            for index, block in enumerate(_blocks(adapter, pattern)):
                block.register_full_backward_hook(
                    lambda module, grad_in, grad_out, i=index, seen=reached: seen.append(i)
                )
            adapter(input_ids=ids, attention_mask=torch.ones_like(ids), labels=torch.tensor([0, 1])).loss.backward()
            assert sorted(reached) == (layers or [0, 1, 2, 3]), (name, layers, reached)


@pytest.mark.rule(
    lesson="16",
    section="2. `r` and `lora_alpha`",
    text="`use_rslora=True` scales by `lora_alpha / √r` instead.",
    covers=["BERT, Llama and DistilBERT", "r 4 and 16, lora_alpha 8", "without it: lora_alpha / r"],
)
def test_rslora_scales_by_the_square_root_of_r() -> None:
    import copy

    for model, targets, _ in classifiers().values():
        for r in (4, 16):
            for rslora, expected in ((True, 8 / r**0.5), (False, 8 / r)):
                adapter = get_peft_model(
                    copy.deepcopy(model),
                    LoraConfig(task_type="SEQ_CLS", r=r, lora_alpha=8, target_modules=targets[:1], use_rslora=rslora),
                )
                scales = {m.scaling["default"] for _, m in adapter.named_modules() if hasattr(m, "lora_A")}
                assert len(scales) == 1 and scales.pop() == pytest.approx(expected)


@pytest.mark.rule(
    lesson="16",
    section="3. Names that match nothing",
    text='`target_modules="all-linear"` takes every linear layer but the head (on a head of two layers, as '
    'DistilBERT\'s, `task_type="SEQ_CLS"` then raises a `TypeError` unless `modules_to_save` names both).',
    covers=[
        "BERT (head: classifier) and Llama (head: score) with task_type SEQ_CLS: every other nn.Linear adapted",
        "DistilBERT (head: pre_classifier and classifier): TypeError naming modules_to_save; with both named, every "
        "other nn.Linear adapted",
    ],
)
def test_all_linear_with_seq_cls_on_a_head_of_two_layers() -> None:
    """Section 3 says 'target_modules="all-linear" takes every linear layer but the head': true on BERT (all but
    classifier) and Llama (all but score) with task_type="SEQ_CLS"; on DistilBERT, whose head is pre_classifier and
    classifier, get_peft_model raises a TypeError unless modules_to_save names both."""
    import copy

    for name, (model, _, _) in classifiers().items():
        linears = {path for path, module in model.named_modules() if isinstance(module, nn.Linear)}
        config = LoraConfig(task_type="SEQ_CLS", r=4, target_modules="all-linear")
        if name == "distilbert":
            with pytest.raises(TypeError, match="modules_to_save"):
                get_peft_model(copy.deepcopy(model), config)
            config = LoraConfig(
                task_type="SEQ_CLS", r=4, target_modules="all-linear", modules_to_save=["pre_classifier", "classifier"]
            )
        adapter = get_peft_model(copy.deepcopy(model), config)
        adapted = {path.replace("base_model.model.", "") for path in _adapted(adapter)}
        head = {"bert": {"classifier"}, "llama": {"score"}, "distilbert": {"pre_classifier", "classifier"}}[name]
        assert linears - adapted == head, name
