"""helpers.trainers.quiet removes only the printing callbacks and keeps the logs."""

from __future__ import annotations

import pytest
import torch
from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

from helpers.trainers import quiet


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(2, 2)

    def forward(self, x: torch.Tensor, labels: torch.Tensor) -> dict[str, torch.Tensor]:
        logits = self.linear(x)
        return {"loss": torch.nn.functional.cross_entropy(logits, labels), "logits": logits}


class Mine(TrainerCallback):
    pass


def tiny_trainer(tmp_path, disable_tqdm: bool) -> Trainer:
    data = [{"x": torch.randn(2), "labels": torch.tensor(i % 2)} for i in range(8)]
    args = TrainingArguments(
        tmp_path,
        max_steps=2,
        logging_steps=1,
        report_to="none",
        use_cpu=True,
        disable_tqdm=disable_tqdm,
        save_strategy="no",
        per_device_train_batch_size=4,
    )
    return Trainer(model=Tiny(), args=args, train_dataset=data, callbacks=[Mine()])


@pytest.mark.parametrize("disable_tqdm", [True, False])
def test_quiet_removes_the_printer_and_keeps_the_rest(tmp_path, capsys, disable_tqdm: bool) -> None:
    trainer = tiny_trainer(tmp_path, disable_tqdm)
    before = [type(c).__name__ for c in trainer.callback_handler.callbacks]
    assert quiet(trainer) is trainer
    after = [type(c).__name__ for c in trainer.callback_handler.callbacks]
    assert set(before) - set(after) == {"PrinterCallback" if disable_tqdm else "ProgressCallback"}
    assert "Mine" in after and "DefaultFlowCallback" in after
    capsys.readouterr()
    trainer.train()
    printed = capsys.readouterr()
    assert "'loss'" not in printed.out + printed.err
    assert [entry["step"] for entry in trainer.state.log_history if "loss" in entry] == [1, 2]


def test_printer_prints_without_quiet(tmp_path, capsys) -> None:
    trainer = tiny_trainer(tmp_path, disable_tqdm=True)
    assert any(isinstance(c, PrinterCallback) for c in trainer.callback_handler.callbacks)
    trainer.train()
    assert "'loss'" in capsys.readouterr().out


def test_quiet_refuses_a_non_trainer() -> None:
    with pytest.raises(TypeError, match="build the Trainer first"):
        quiet(TrainingArguments("unused", report_to="none"))
