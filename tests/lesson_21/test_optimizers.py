"""Lesson 21's rules, tried beyond the lesson's own runs: the Muon split on another architecture, the joined
optimizer through a checkpoint and a resume, the per-group rates and the logged group 0 under gradient
accumulation, schedule-free AdamW's warmup and modes, and what `optim_args` drops. Tiny models, a few steps."""

from __future__ import annotations

import pytest
import torch
from transformers import Trainer, TrainerCallback, TrainingArguments

from exercises.checks import fixtures
from helpers.lessons.lesson_21 import MuonTrainer, MuonWithAdamW

MODELS = {"BERT": fixtures.tiny_model, "Llama": fixtures.tiny_llama}


def arguments(tmp_path, **settings) -> TrainingArguments:
    base = dict(
        output_dir=str(tmp_path),
        report_to="none",
        use_cpu=True,
        disable_tqdm=True,
        per_device_train_batch_size=8,
        save_strategy="no",
        seed=0,
    )
    return TrainingArguments(**{**base, **settings})


class Rates(TrainerCallback):
    """Every group's rate, and schedule-free's applied rate where there is one, at each update."""

    def __init__(self) -> None:
        self.groups: list[list[float]] = []
        self.applied: list[float] = []

    def on_optimizer_step(self, args, state, control, optimizer=None, **kwargs):
        self.groups.append([group["lr"] for group in optimizer.param_groups])
        if "scheduled_lr" in optimizer.param_groups[0]:
            self.applied.append(optimizer.param_groups[0]["scheduled_lr"])


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_the_muon_split_holds_on_each_architecture(kind, tmp_path) -> None:
    model = MODELS[kind](seed=1)
    trainer = MuonTrainer(model=model, args=arguments(tmp_path, max_steps=2), train_dataset=fixtures.random_ids())
    optimizer = trainer.create_optimizer()
    muon = {id(p) for group in optimizer.muon.param_groups for p in group["params"]}
    everything = [id(p) for group in optimizer.param_groups for p in group["params"]]
    assert sorted(everything) == sorted(id(p) for p in model.parameters() if p.requires_grad)
    linear = {id(m.weight) for m in model.base_model.modules() if isinstance(m, torch.nn.Linear)}
    assert muon == linear and muon, "Muon holds exactly the Linear weights inside base_model"
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    head = {id(p) for p in model.parameters()} - {id(p) for p in model.base_model.parameters()}
    assert head and not (muon & (embeddings | head))
    decay = set(trainer.get_decay_parameter_names(model))
    no_decay = {id(p) for n, p in model.named_parameters() if n not in decay}
    assert all(
        group["weight_decay"] == 0.0 for group in optimizer.param_groups if {id(p) for p in group["params"]} & no_decay
    )
    assert trainer.train().global_step == 2, "the split trains"


def test_muon_refuses_a_parameter_that_is_not_2d() -> None:
    model = fixtures.tiny_model()
    bias = model.bert.encoder.layer[0].attention.self.query.bias
    with pytest.raises(ValueError, match="Muon only supports 2D parameters"):
        MuonWithAdamW([{"params": [bias], "muon": True}, {"params": [model.classifier.weight], "muon": False}])


def test_the_joined_optimizer_survives_a_checkpoint_and_a_resume(tmp_path) -> None:
    """Four updates in one go and 2 + 2 through checkpoint-2 end on the same weights: both states were saved."""
    data = fixtures.random_ids()
    straight = MuonTrainer(
        model=fixtures.tiny_model(seed=3), args=arguments(tmp_path / "a", max_steps=4), train_dataset=data
    )
    straight.train()
    saving = arguments(tmp_path / "b", max_steps=4, save_strategy="steps", save_steps=2)
    first = MuonTrainer(model=fixtures.tiny_model(seed=3), args=saving, train_dataset=data)
    first.train()
    resumed = MuonTrainer(model=fixtures.tiny_model(seed=3), args=saving, train_dataset=data)
    resumed.train(resume_from_checkpoint=str(tmp_path / "b" / "checkpoint-2"))
    for (name, a), (_, b) in zip(straight.model.named_parameters(), resumed.model.named_parameters()):
        assert torch.allclose(a, b, atol=1e-6), name
    state = resumed.optimizer.optimizer.state_dict()
    assert set(state) == {"muon", "adamw"} and state["muon"]["state"], "Muon's momentum was restored"


@pytest.mark.parametrize("accumulation", [1, 4])
def test_each_group_keeps_its_ratio_and_the_log_shows_group_0(accumulation, tmp_path) -> None:
    model = fixtures.tiny_model(seed=2)
    head = [p for n, p in model.named_parameters() if n.startswith("classifier")]
    body = [p for n, p in model.named_parameters() if not n.startswith("classifier")]
    optimizer = torch.optim.AdamW([{"params": body}, {"params": head, "lr": 1e-2}], lr=1e-3)
    rates = Rates()
    args = arguments(
        tmp_path,
        max_steps=8,
        warmup_steps=2,
        lr_scheduler_type="cosine",
        logging_steps=1,
        gradient_accumulation_steps=accumulation,
    )
    trainer = Trainer(
        model=model, args=args, train_dataset=fixtures.random_ids(), optimizers=(optimizer, None), callbacks=[rates]
    )
    trainer.train()
    assert len(rates.groups) == 8 and all(abs(h - 10 * b) < 1e-15 for b, h in rates.groups)
    logged = [(log["step"], log["learning_rate"]) for log in trainer.state.log_history if "learning_rate" in log]
    assert logged and all(rate == pytest.approx(rates.groups[step - 1][0]) for step, rate in logged)


@pytest.mark.parametrize("accumulation", [1, 4])
@pytest.mark.parametrize("warmup", [3, 0.1, 0.25, 0.5])
def test_schedule_free_reads_warmup_steps_as_a_count(warmup, accumulation, tmp_path) -> None:
    rates = Rates()
    args = arguments(
        tmp_path,
        optim="schedule_free_adamw",
        lr_scheduler_type="constant",
        learning_rate=1e-3,
        warmup_steps=warmup,
        max_steps=6,
        gradient_accumulation_steps=accumulation,
    )
    Trainer(model=fixtures.tiny_model(), args=args, train_dataset=fixtures.random_ids(), callbacks=[rates]).train()
    if isinstance(warmup, int):
        assert rates.applied == pytest.approx([1e-3 * min(1, (k + 1) / warmup) for k in range(6)])
    else:  # a share goes through as it is: the first update divides by it, the rest use the peak
        assert rates.applied == pytest.approx([1e-3 / warmup] + [1e-3] * 5)
    assert {rate for group in rates.groups for rate in group} == {1e-3}, "a constant scheduler: the log is flat"


@pytest.mark.parametrize("accumulation", [1, 2])
def test_schedule_free_modes_are_switched_for_training_and_evaluation_only(accumulation, tmp_path) -> None:
    args = arguments(
        tmp_path,
        optim="schedule_free_adamw",
        lr_scheduler_type="constant",
        learning_rate=1e-2,
        warmup_steps=2,
        max_steps=5,
        gradient_accumulation_steps=accumulation,
    )
    data = fixtures.random_ids()
    trainer = Trainer(model=fixtures.tiny_model(), args=args, train_dataset=data, eval_dataset=data)
    trainer.train()
    group = trainer.optimizer.param_groups[0]
    assert group["train_mode"], "after train() the optimizer is still in train mode"
    trained = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.save_model(str(tmp_path / "saved_after_train"))
    trainer.evaluate()
    assert not group["train_mode"], "evaluate() switched it to eval mode"
    averaged = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    assert any(not torch.equal(trained[n], averaged[n]) for n in trained), "the modes hold different weights"
    from safetensors.torch import load_file

    saved = load_file(str(tmp_path / "saved_after_train" / "model.safetensors"))
    name = "classifier.weight"
    assert torch.equal(saved[name], trained[name]) and not torch.equal(saved[name], averaged[name])
    trainer.optimizer.train()
    assert all(torch.allclose(trained[n], p) for n, p in trainer.model.named_parameters())


def test_optim_args_keys_a_handler_does_not_know_are_dropped(tmp_path) -> None:
    def resolved(**settings):
        return Trainer.get_optimizer_cls_and_kwargs(arguments(tmp_path, **settings))

    cls, kwargs = resolved(optim="sgd", optim_args="momentum=0.9, nesterov=True")
    assert cls is torch.optim.SGD and kwargs["momentum"] == 0.9 and kwargs["nesterov"] is True
    assert "momentum" not in resolved(optim="sgd", optim_args="momentun=0.9")[1]
    assert resolved(optim="adamw_torch", optim_args="eps=0.5")[1] == resolved(optim="adamw_torch")[1]
