"""Lesson 13's rules (reading real subclasses): the overrides and the loss-scaling declarations of TRL's trainers,
read on the pinned TRL, with GRPOTrainer as a third class the sentence does not name."""

from __future__ import annotations

from typing import Any

import pytest
import torch
from trl import DPOTrainer, GRPOTrainer, SFTTrainer

from helpers.lessons.lesson_13 import trainer_overrides

FOUR = {"compute_loss", "training_step", "prediction_step", "log"}


@pytest.mark.rule(
    lesson="13",
    section="Recap",
    text="`SFTTrainer` and `DPOTrainer` both redefine `compute_loss`, `training_step`, `prediction_step` and `log`; "
    "ask a class with `trainer_overrides` (its method resolution order).",
    covers=["SFTTrainer", "DPOTrainer", "GRPOTrainer (not named: it redefines the same four)"],
)
@pytest.mark.parametrize("cls", [SFTTrainer, DPOTrainer, GRPOTrainer])
def test_trl_trainers_redefine_the_four(cls: type) -> None:
    assert FOUR <= set(trainer_overrides(cls))


@pytest.mark.rule(
    lesson="13",
    section="Recap",
    text="`DPOTrainer` a per-batch mean with `loss_is_scaled_for_ga = False`",
    covers=["the class attribute on the pinned TRL", "SFTTrainer leaves it to the Trainer (None)"],
)
def test_dpo_declares_its_loss_unscaled() -> None:
    assert DPOTrainer.loss_is_scaled_for_ga is False
    assert getattr(SFTTrainer, "loss_is_scaled_for_ga", None) is None


def _sft_trainer(
    tmp_path: Any, batch: int, accumulation: int = 1, trainer_class: type = SFTTrainer, **settings: Any
) -> Any:
    """A quiet SFTTrainer (or ``trainer_class``) on a tiny Llama and the same 4 texts of uneven length, for one
    update; ``settings`` go to its SFTConfig."""
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import SFTConfig

    from exercises.checks.lesson_13 import QUIET_SFT, TINY_LLAMA
    from helpers.models import load_tokenizer
    from helpers.trainers import quiet

    tokenizer = load_tokenizer()
    tokenizer.eos_token = "[SEP]"
    config = LlamaConfig(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, **TINY_LLAMA)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = LlamaForCausalLM(config)
    texts = ["a fine film", "a long and winding film that never seems to end at all, alas", "dull", "bright, brisk fun"]
    base = dict(max_steps=1, logging_steps=1, max_grad_norm=0.0, learning_rate=1e-3)
    args = SFTConfig(
        str(tmp_path),
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=accumulation,
        **(QUIET_SFT | base | settings),
    )
    return quiet(
        trainer_class(
            model=model, args=args, train_dataset=Dataset.from_dict({"text": texts}), processing_class=tokenizer
        )
    )


def _sft_first_update(
    tmp_path: Any, batch: int, accumulation: int, trainer_class: type = SFTTrainer
) -> tuple[float, float]:
    """The logged loss and grad_norm of an SFTTrainer's (or ``trainer_class``'s) first update over the same 4 texts
    of uneven length."""
    run = _sft_trainer(tmp_path, batch, accumulation, trainer_class)
    run.train()
    entry = next(entry for entry in run.state.log_history if "grad_norm" in entry)
    return entry["loss"], entry["grad_norm"]


@pytest.mark.rule(
    lesson="13",
    section="3. How they scale the loss",
    text="`SFTTrainer` leaves it at `None`, sums the loss of every token and divides by `num_items_in_batch`",
    covers=["texts of 1 to 15 tokens (uneven micro-batches)", "accumulation 2 and 4 against one batch of 4"],
)
@pytest.mark.parametrize("accumulation", [2, 4])
def test_sft_step_is_the_same_however_the_batch_is_split(tmp_path: Any, accumulation: int) -> None:
    whole = _sft_first_update(tmp_path / "whole", 4, 1)
    split = _sft_first_update(tmp_path / "split", 4 // accumulation, accumulation)
    assert split[1] == pytest.approx(whole[1], rel=1e-4)


@pytest.mark.rule(
    lesson="13",
    section="Recap",
    text="Lesson 05's `LoopRecorder` wraps any Trainer class, a library's too, and shows which overrides fire, how "
    "often and what they call.",
    covers=[
        "Trainer, a subclass of its own and SFTTrainer",
        "accumulation 2 with an uneven last group",
        "compute_loss seen inside training_step",
    ],
)
@pytest.mark.parametrize("base", ["Trainer", "subclass", "SFTTrainer"])
def test_loop_recorder_wraps_any_trainer_class(tmp_path: Any, base: str) -> None:
    from rule_training import trainer
    from transformers import Trainer

    from helpers.loop_calls import LoopRecorder

    recorder = LoopRecorder(methods=("training_step", "compute_loss"))
    if base == "SFTTrainer":
        from datasets import Dataset
        from transformers import LlamaConfig, LlamaForCausalLM
        from trl import SFTConfig

        from exercises.checks.lesson_13 import QUIET_SFT, TINY_LLAMA
        from helpers.models import load_tokenizer

        tokenizer = load_tokenizer()
        tokenizer.eos_token = "[SEP]"
        model = LlamaForCausalLM(
            LlamaConfig(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id, **TINY_LLAMA)
        )
        texts = ["a fine film", "dull", "bright, brisk fun", "long and slow", "a gem"]
        args = SFTConfig(
            str(tmp_path), per_device_train_batch_size=2, gradient_accumulation_steps=2, max_steps=2, **QUIET_SFT
        )
        run = recorder.trainer_class(SFTTrainer)(
            model=model, args=args, processing_class=tokenizer, train_dataset=Dataset.from_dict({"text": texts})
        )
        run.train()
        micro_batches = 3  # 5 texts in batches of 2: 2 + 1 micro-batches over 2 steps
    else:

        class Own(Trainer):
            pass

        cls = recorder.trainer_class(Trainer if base == "Trainer" else Own)
        run = trainer(tmp_path, rows=10, trainer_class=cls, gradient_accumulation_steps=2)
        run.train()
        micro_batches = 5
    assert recorder.names().count("training_step") == micro_batches
    assert "compute_loss" in recorder.inside("training_step")


@pytest.mark.rule(
    lesson="13",
    section="1. Which methods do TRL's trainers override?",
    text="Your own subclass should prefer the public methods.",
    covers=[
        "a subclass of SFTTrainer overriding public compute_loss and log: called once an update and once a log, "
        "accumulation 1 and 2, the same first update as SFTTrainer itself",
    ],
)
@pytest.mark.rule(
    lesson="13",
    section="Recap",
    text="Prefer public methods in your own subclasses; the private ones TRL overrides can change between releases.",
    covers=[
        "the pinned TRL: SFTTrainer and DPOTrainer override two private Trainer methods (_save_checkpoint, "
        "_set_signature_columns_if_needed) besides the public ones",
        "every loop method they redefine (compute_loss, training_step, prediction_step, log, evaluate) still takes "
        "the Trainer's parameters (by name, or *args and **kwargs); create_model_card does not (its own arguments)",
        "a subclass of SFTTrainer overriding public compute_loss and log: called once an update and once a log, "
        "accumulation 1 and 2, the same first update as SFTTrainer itself",
        "not tried: another TRL release (the change between releases is not measured here)",
    ],
)
@pytest.mark.parametrize("accumulation", [1, 2])
def test_public_overrides_fit_trl_trainers(tmp_path: Any, accumulation: int) -> None:
    import inspect

    from transformers import Trainer

    for cls in (SFTTrainer, DPOTrainer):
        overrides = set(trainer_overrides(cls)) - {"__init__"}
        assert {name for name in overrides if name.startswith("_")} == {
            "_save_checkpoint",
            "_set_signature_columns_if_needed",
        }
        loop = {"compute_loss", "training_step", "prediction_step", "log", "evaluate"}
        assert overrides - loop - {"_save_checkpoint", "_set_signature_columns_if_needed"} == {"create_model_card"}
        for name in loop:
            theirs = inspect.signature(getattr(cls, name)).parameters
            kinds = {parameter.kind for parameter in theirs.values()}
            takes_all = kinds >= {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}
            assert takes_all or set(inspect.signature(getattr(Trainer, name)).parameters) <= set(theirs), name

    calls: list[str] = []

    class Mine(SFTTrainer):
        def compute_loss(self, model: Any, inputs: Any, return_outputs: bool = False, num_items_in_batch: Any = None):
            calls.append("compute_loss")
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

        def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
            calls.append("log")
            super().log(logs, start_time)

    mine = _sft_first_update(tmp_path / "mine", 4 // accumulation, accumulation, Mine)
    assert calls.count("compute_loss") == accumulation and "log" in calls
    assert mine == pytest.approx(_sft_first_update(tmp_path / "stock", 4 // accumulation, accumulation), rel=1e-5)


@pytest.mark.rule(
    lesson="13",
    section="3. How they scale the loss",
    text="then, with the default `average_tokens_across_devices=True`, multiplies by the number of processes",
    covers=[
        "1, 2 and 4 processes (the accelerator's count patched on one process): the loss scales by exactly that",
        "average_tokens_across_devices=False: no factor",
        "texts of 1 to 15 tokens, a batch of 2 and of 4",
    ],
)
@pytest.mark.rule(
    lesson="13",
    section="Recap",
    text="`SFTTrainer` a sum over `num_items_in_batch` times the number of processes when "
    "`average_tokens_across_devices=True`, the default",
    covers=["1, 2 and 4 processes (patched count)", "average_tokens_across_devices=False", "batches of 2 and 4"],
)
@pytest.mark.parametrize("batch", [2, 4])
def test_sft_multiplies_by_the_processes_when_tokens_are_averaged(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    from accelerate import Accelerator
    from transformers import TrainingArguments

    assert TrainingArguments("x").average_tokens_across_devices is True  # the default
    losses = {}
    for averaged in (True, False):
        run = _sft_trainer(tmp_path / str(averaged), batch, average_tokens_across_devices=averaged)
        inputs = next(iter(run.get_train_dataloader()))
        tokens = int((inputs["labels"][:, 1:] != -100).sum())
        for processes in (1, 2, 4):
            monkeypatch.setattr(Accelerator, "num_processes", property(lambda self, n=processes: n))
            with torch.no_grad():
                loss = run.compute_loss(run.model, dict(inputs), num_items_in_batch=torch.tensor(tokens))
            losses[averaged, processes] = float(loss)
            monkeypatch.undo()
    for processes in (2, 4):
        assert losses[True, processes] == pytest.approx(processes * losses[True, 1], rel=1e-6)
        assert losses[False, processes] == pytest.approx(losses[False, 1], rel=1e-6)


@pytest.mark.rule(
    lesson="13",
    section="Recap",
    text="They log numbers of the step the way lesson 07 did: collect in `compute_loss` (`self._metrics`), merge "
    "the means in `log`, start again.",
    covers=[
        "SFTTrainer, batch 1, accumulation 2, a log every 2 updates over 4 updates (2 epochs of 4 uneven texts)",
        "every logged entropy and mean_token_accuracy is the mean of the values compute_loss collected since the "
        "last log, one a micro-batch; the store is empty after each log",
    ],
)
@pytest.mark.rule(
    lesson="13",
    section="2. How they log numbers of the step",
    text="collect in `compute_loss`, average in `log`, hand the result to `super().log`, start again.",
    covers=["SFTTrainer, accumulation 2, a log every 2 updates: means of 4 values a log, the store emptied"],
)
def test_sft_collects_in_compute_loss_and_merges_means_in_log(tmp_path: Any) -> None:
    collected: list[dict[str, list[float]]] = []
    left: list[int] = []

    class Watched(SFTTrainer):
        def log(self, logs: dict[str, float], start_time: float | None = None) -> None:
            if self.model.training and "loss" in logs:
                collected.append({key: list(values) for key, values in self._metrics["train"].items()})
            super().log(logs, start_time)
            left.append(sum(len(values) for values in self._metrics["train"].values()))

    run = _sft_trainer(tmp_path, 1, 2, Watched, max_steps=4, logging_steps=2)
    run.train()
    logged = [entry for entry in run.state.log_history if "loss" in entry and "train_runtime" not in entry]
    assert len(logged) == len(collected) == 2 and set(left) == {0}
    for entry, values in zip(logged, collected, strict=True):
        for key in ("entropy", "mean_token_accuracy"):
            assert len(values[key]) == 2 * 2  # 2 updates × 2 micro-batches since the last log
            assert entry[key] == pytest.approx(sum(values[key]) / len(values[key]), rel=1e-6)
