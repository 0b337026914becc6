"""Lesson 15's rules (LoRA adapters), tried beyond the lesson's run: BERT, Llama (head `score`) and DistilBERT
(a head of two new layers, `pre_classifier` and `classifier`) built from configs, accumulation 2 with an uneven
last micro-batch, reload onto a freshly built base, merge on a copy."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch
from peft import LoraConfig, PeftModel, get_peft_model
from rule_training import trainer
from transformers import TrainerCallback

from exercises.checks import fixtures

MODELS = {
    "bert": (fixtures.tiny_model, ["query", "value"]),
    "llama": (fixtures.tiny_llama, ["q_proj", "v_proj"]),
    "distilbert": (fixtures.tiny_distilbert, ["q_lin", "v_lin"]),
}
HEADS = {"bert": ["classifier"], "llama": ["score"], "distilbert": ["pre_classifier", "classifier"]}


def _logits(model: Any, ids: torch.Tensor) -> torch.Tensor:
    model.eval()
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits


def _trained_adapter(tmp_path: Any, name: str) -> tuple[Any, Any, dict[str, torch.Tensor]]:
    make, targets = MODELS[name]
    base = make(seed=0)
    frozen = {key: value.detach().clone() for key, value in base.state_dict().items()}
    model = get_peft_model(base, LoraConfig(task_type="SEQ_CLS", r=4, lora_alpha=8, target_modules=targets))
    run = trainer(
        tmp_path,
        model=model,
        train_dataset=fixtures.random_ids(13),
        gradient_accumulation_steps=2,
        learning_rate=1e-2,
        num_train_epochs=2,
    )
    run.train()
    return run, model, frozen


@pytest.mark.rule(
    lesson="15",
    section="Recap",
    text="`get_peft_model(model, LoraConfig(...))` makes an adapter model the Trainer trains unchanged; "
    '`task_type="SEQ_CLS"` keeps the new head trainable and saved.',
    covers=[
        "BERT, Llama (score) and DistilBERT (pre_classifier + classifier)",
        "accumulation 2",
        "uneven last micro-batch",
        "2 epochs",
    ],
)
@pytest.mark.rule(
    lesson="15",
    section="Recap",
    text="An adapter checkpoint holds the adapter and the head; reload it onto the base with "
    "`PeftModel.from_pretrained`; `merge_and_unload()` on a copy gives a plain model for serving.",
    covers=["BERT, Llama and DistilBERT", "a base built afresh (its random head replaced by the saved one)"],
)
@pytest.mark.rule(
    lesson="15",
    section="3. Merging the adapter",
    text="The merged model predicts what the adapter model predicts, up to float32 rounding.",
    covers=["BERT, Llama and DistilBERT adapters trained 2 epochs at accumulation 2", "5 rows of 9 ids: atol 1e-5"],
)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_adapter_trains_saves_reloads_and_merges(tmp_path: Any, name: str) -> None:
    run, model, frozen = _trained_adapter(tmp_path, name)
    trained = {
        key.replace("base_model.model.", ""): value for key, value in model.named_parameters() if value.requires_grad
    }
    assert all(any(key.startswith(f"{head}.") for key in trained) for head in HEADS[name]), sorted(trained)
    params, compared = dict(model.get_base_model().named_parameters()), 0
    for key, before in frozen.items():  # the wrapped layers keep their weights under `base_layer`
        if any(key.startswith(f"{head}.") for head in HEADS[name]):
            continue
        wrapped = key.rsplit(".", 1)[0] + ".base_layer." + key.rsplit(".", 1)[1]
        now = params.get(key, params.get(wrapped))
        if now is not None:
            assert torch.equal(now.detach(), before), key
            compared += 1
    assert compared > 10
    ids = torch.randint(1, 100, (5, 9), generator=torch.Generator().manual_seed(4))
    expected = _logits(model, ids)
    model.save_pretrained(tmp_path / "adapter")
    from safetensors import safe_open

    with safe_open(str(tmp_path / "adapter" / "adapter_model.safetensors"), "pt") as saved:
        keys = list(saved.keys())
    assert any("lora_" in key for key in keys) and all(any(f".{head}." in key for key in keys) for head in HEADS[name])
    fresh_base = MODELS[name][0](seed=1)  # another random head: the saved one must replace it
    reloaded = PeftModel.from_pretrained(_same_body(fresh_base, name), tmp_path / "adapter")
    assert torch.allclose(_logits(reloaded, ids), expected, atol=1e-6)
    merged = copy.deepcopy(model).merge_and_unload()
    assert not isinstance(merged, PeftModel) and torch.allclose(_logits(merged, ids), expected, atol=1e-5)


def _same_body(fresh: Any, name: str) -> Any:
    """``fresh`` with the body (everything but the head) of the seed-0 base the adapter was trained on."""
    body = {
        key: value
        for key, value in MODELS[name][0](seed=0).state_dict().items()
        if not any(key.startswith(f"{head}.") for head in HEADS[name])
    }
    fresh.load_state_dict(body, strict=False)
    return fresh


@pytest.mark.rule(
    lesson="15",
    section="Recap",
    text="On the pinned release the Trainer handles `enable_input_require_grads` and `label_names` for a PEFT model",
    covers=["BERT, Llama and DistilBERT adapters", "eval_loss reported", "checkpointing with an adapter: lora_B moves"],
)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_trainer_handles_peft_models(tmp_path: Any, name: str) -> None:
    make, targets = MODELS[name]
    model = get_peft_model(make(seed=0), LoraConfig(task_type="SEQ_CLS", r=4, target_modules=targets))
    data = fixtures.random_ids(12)
    run = trainer(
        tmp_path, model=model, train_dataset=data, eval_dataset=data, activation_checkpointing=True, learning_rate=1e-2
    )
    assert run.label_names == ["labels"] or "labels" in (run.label_names or [])
    run.train()
    assert "eval_loss" in run.evaluate()
    moved = [p for n, p in model.named_parameters() if "lora_B" in n]
    assert moved and all(p.abs().sum() > 0 for p in moved)  # B starts at zero: gradients reached it


@pytest.mark.rule(
    lesson="15",
    section="Recap",
    text="`save_only_model=True` makes a resume silently inexact.",
    covers=["a BERT adapter and TinyModel", "accumulation 2", "resume from step 2 of 6", "a full checkpoint (exact)"],
)
@pytest.mark.parametrize("name", ["bert-lora", "tiny"])
def test_save_only_model_resume_is_inexact(tmp_path: Any, name: str) -> None:
    def build() -> Any:
        if name == "tiny":
            from tiny_training import TinyModel

            torch.manual_seed(0)
            return TinyModel()
        torch.manual_seed(0)  # LoRA's A matrices are drawn from torch's global generator
        return get_peft_model(
            fixtures.tiny_model(seed=0), LoraConfig(task_type="SEQ_CLS", r=4, target_modules=["query", "value"])
        )

    data = None if name == "tiny" else fixtures.random_ids(24)

    def weights(folder: str, resume: str | None = None, **settings: Any) -> list[torch.Tensor]:
        run = trainer(
            tmp_path / folder,
            model=build(),
            train_dataset=data,
            rows=24,
            gradient_accumulation_steps=2,
            learning_rate=1e-2,
            save_strategy="steps",
            save_steps=2,
            **settings,
        )
        run.train(resume_from_checkpoint=resume)
        return [p.detach().clone() for p in run.model.parameters() if p.requires_grad]

    straight = weights("straight")
    weights("full")  # writes the checkpoints the resume reads
    resumed_full = weights("full", resume=str(tmp_path / "full" / "checkpoint-2"))
    only = weights("only", save_only_model=True)
    resumed_only = weights("only", resume=str(tmp_path / "only" / "checkpoint-2"), save_only_model=True)
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(straight, resumed_full, strict=True))
    assert all(torch.allclose(a, b) for a, b in zip(straight, only, strict=True))
    assert not all(torch.allclose(a, b, atol=1e-6) for a, b in zip(straight, resumed_only, strict=True))


@pytest.mark.rule(
    lesson="15",
    section="Recap",
    text="Choose `target_modules`, `r` and `lora_alpha` by short runs (lesson 16).",
    covers=[
        "BERT and Llama classifiers, 13 random rows, accumulation 2 (uneven last micro-batch)",
        "three settings: the query projection alone at r=1, lora_alpha=1; query and value at r=8 with lora_alpha 1 "
        "and 16",
        "a 1-epoch run ranks them by evaluation loss as a 4-epoch run does",
    ],
)
@pytest.mark.parametrize("name", ["bert", "llama"])
def test_short_runs_rank_adapter_settings_as_longer_runs_do(tmp_path: Any, name: str) -> None:
    make, targets = MODELS[name]
    settings = {"one r1 a1": (targets[:1], 1, 1), "two r8 a1": (targets, 8, 1), "two r8 a16": (targets, 8, 16)}

    def loss(epochs: int, key: str) -> float:
        modules, r, alpha = settings[key]
        model = get_peft_model(
            make(seed=0), LoraConfig(task_type="SEQ_CLS", r=r, lora_alpha=alpha, target_modules=modules)
        )
        run = trainer(
            tmp_path / f"{epochs}-{key}",
            model=model,
            train_dataset=fixtures.random_ids(13),
            gradient_accumulation_steps=2,
            learning_rate=1e-2,
            num_train_epochs=epochs,
        )
        run.train()
        return run.evaluate(fixtures.random_ids(13))["eval_loss"]

    short = {key: loss(1, key) for key in settings}
    long = {key: loss(4, key) for key in settings}
    assert len(set(short.values())) == 3, short
    assert sorted(settings, key=short.get) == sorted(settings, key=long.get), (short, long)


@pytest.mark.rule(
    lesson="15",
    section="3. Merging the adapter",
    text="It changes the model it is called on, so merge a copy when you still need the adapter",
    covers=[
        "BERT and Llama adapters",
        "merged in place: the adapter model loses its LoRA layers",
        "a merged copy: the adapter model keeps them and its predictions",
    ],
)
@pytest.mark.parametrize("name", ["bert", "llama"])
def test_merge_changes_the_model_it_is_called_on(name: str) -> None:
    make, targets = MODELS[name]
    model = get_peft_model(make(seed=0), LoraConfig(task_type="SEQ_CLS", r=4, target_modules=targets))
    with torch.no_grad():
        for key, parameter in model.named_parameters():
            if "lora_B" in key:
                parameter.normal_(0, 0.1, generator=torch.Generator().manual_seed(1))
    ids = torch.randint(1, 100, (3, 7), generator=torch.Generator().manual_seed(2))
    before = _logits(model, ids)
    copy.deepcopy(model).merge_and_unload()
    assert any("lora_" in key for key, _ in model.named_parameters())
    assert torch.equal(_logits(model, ids), before)
    model.merge_and_unload()
    assert not any("lora_" in key for key, _ in model.named_parameters())  # the adapter is gone from it


@pytest.mark.rule(
    lesson="15",
    section="4. Pitfalls, checked on the pinned release",
    text="Wrap the PEFT model in your own module whose `forward` takes `**kwargs` and you must pass "
    '`label_names=["labels"]` (and `remove_unused_columns=False`) to `TrainingArguments` yourself; a wrapper whose '
    "`forward` names `labels` needs neither.",
    covers=[
        "BERT and Llama adapters (LoRA, SEQ_CLS) wrapped in a module whose forward takes **kwargs: refused without "
        "remove_unused_columns=False, no eval_loss without label_names, eval_loss with both",
        "the same adapters in a wrapper whose forward names input_ids, attention_mask and labels: eval_loss with "
        "neither setting",
    ],
)
@pytest.mark.parametrize("name", ["bert", "llama"])
def test_a_wrapped_peft_model_needs_label_names_only_when_its_forward_takes_kwargs(tmp_path: Any, name: str) -> None:
    """Section 4 says 'Wrap the PEFT model in your own module and you must pass label_names=["labels"]': true for
    a wrapper whose forward takes **kwargs (which also needs remove_unused_columns=False, or the Trainer refuses
    the data with a clear error); a wrapper that names its inputs needs neither."""
    make, targets = MODELS[name]

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = get_peft_model(make(seed=0), LoraConfig(task_type="SEQ_CLS", r=4, target_modules=targets))

        def forward(self, **kwargs: Any) -> Any:
            return self.inner(**kwargs)

    class Named(Wrapped):
        def forward(self, input_ids: Any, attention_mask: Any = None, labels: Any = None) -> Any:
            return self.inner(input_ids=input_ids, attention_mask=attention_mask, labels=labels)

    data = fixtures.random_ids(6)

    def evaluated(folder: str, model: Any, **settings: Any) -> dict[str, float]:
        return trainer(tmp_path / folder, model=model, train_dataset=data, eval_dataset=data, **settings).evaluate()

    with pytest.raises(ValueError, match="remove_unused_columns=False"):
        evaluated("kwargs", Wrapped())
    assert "eval_loss" not in evaluated("kwargs-columns", Wrapped(), remove_unused_columns=False)
    assert "eval_loss" in evaluated("kwargs-labels", Wrapped(), remove_unused_columns=False, label_names=["labels"])
    assert "eval_loss" in evaluated("named", Named())


class _Seen(TrainerCallback):
    """Every event's name, and at on_pre_optimizer_step the names of the parameters that hold a gradient."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self.with_grad: set[str] = set()

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("on_"):
            events, with_grad = object.__getattribute__(self, "events"), object.__getattribute__(self, "with_grad")

            def record(args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
                events.append(name)
                if name == "on_pre_optimizer_step":
                    with_grad.update(n for n, p in model.named_parameters() if p.grad is not None)

            return record
        return object.__getattribute__(self, name)


@pytest.mark.rule(
    lesson="15",
    section="4. Pitfalls",
    text="**Callbacks and `compute_loss` overrides** (lessons 05 to 08) run unchanged on an adapter model: the same "
    "events in the same order.",
    covers=["BERT and Llama, full model against LoRA adapter", "accumulation 2, uneven last micro-batch, 2 epochs"],
)
@pytest.mark.rule(
    lesson="15",
    section="4. Pitfalls",
    text="What changes is what they **see**: only the trainable parameters have gradients, the names gain PEFT's "
    "prefix `base_model.model.`",
    covers=["BERT and Llama adapters", "the gradients at on_pre_optimizer_step of every update"],
)
@pytest.mark.parametrize("name", ["bert", "llama"])
def test_callbacks_see_the_same_events_on_an_adapter(tmp_path: Any, name: str) -> None:
    make, targets = MODELS[name]
    seen = {}
    for kind in ("full", "adapter"):
        model = make(seed=0)
        if kind == "adapter":
            model = get_peft_model(model, LoraConfig(task_type="SEQ_CLS", r=4, target_modules=targets))
        watcher = _Seen()
        trainer(
            tmp_path / kind,
            [watcher],
            model=model,
            train_dataset=fixtures.random_ids(13),
            gradient_accumulation_steps=2,
            num_train_epochs=2,
        ).train()
        trainable = {n for n, p in model.named_parameters() if p.requires_grad}
        seen[kind] = (watcher.events, watcher.with_grad, trainable)
    assert seen["full"][0] == seen["adapter"][0]
    events, with_grad, trainable = seen["adapter"]
    assert with_grad == trainable and all(n.startswith("base_model.model.") for n in with_grad)
    assert len(trainable) < len(seen["full"][2])
