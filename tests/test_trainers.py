"""helpers.trainers.quiet removes only the printing callbacks and keeps the logs."""

from __future__ import annotations

import pytest
from tiny_training import tiny_trainer
from transformers import PrinterCallback, Trainer, TrainerCallback, TrainingArguments

from helpers.trainers import quiet


class Mine(TrainerCallback):
    pass


def _trainer(tmp_path, disable_tqdm: bool) -> Trainer:
    return tiny_trainer(tmp_path, [Mine()], max_steps=2, per_device_train_batch_size=4, disable_tqdm=disable_tqdm)


@pytest.mark.parametrize("disable_tqdm", [True, False])
def test_quiet_removes_the_printer_and_keeps_the_rest(tmp_path, capsys, disable_tqdm: bool) -> None:
    trainer = _trainer(tmp_path, disable_tqdm)
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
    trainer = _trainer(tmp_path, disable_tqdm=True)
    assert any(isinstance(c, PrinterCallback) for c in trainer.callback_handler.callbacks)
    trainer.train()
    assert "'loss'" in capsys.readouterr().out


def test_quiet_refuses_a_non_trainer() -> None:
    with pytest.raises(TypeError, match="build the Trainer first"):
        quiet(TrainingArguments("unused", report_to="none"))


# make_trainer: the course's quiet short-run factory (helpers.trainers), for tucked runs and tests.


def test_make_trainer_splits_keywords_between_arguments_and_trainer() -> None:
    from exercises.checks import fixtures
    from helpers.trainers import make_trainer

    data = fixtures.random_ids()
    trainer = make_trainer(
        "test_make_trainer",
        model=fixtures.tiny_model(),
        settings=dict(max_steps=3, learning_rate=1e-3),
        learning_rate=2e-3,  # a TrainingArguments field: overrides settings for this run
        train_dataset=data,  # not a field: goes to the Trainer
    )
    assert trainer.args.max_steps == 3 and trainer.args.learning_rate == 2e-3
    assert trainer.train_dataset is data
    assert trainer.args.report_to == [] and trainer.args.save_strategy == "no" and trainer.args.seed == 42
    assert trainer.args.output_dir.endswith("runs/test_make_trainer")
    shown = {type(callback).__name__ for callback in trainer.callback_handler.callbacks}
    assert not shown & {"PrinterCallback", "ProgressCallback", "NotebookProgressCallback"}


def test_make_trainer_builds_a_fresh_model_from_a_function() -> None:
    from exercises.checks import fixtures
    from helpers.trainers import make_trainer

    first = make_trainer("test_make_trainer", model=fixtures.tiny_model, train_dataset=fixtures.random_ids())
    second = make_trainer("test_make_trainer", model=fixtures.tiny_model, train_dataset=fixtures.random_ids())
    assert first.model is not second.model


def test_make_trainer_passes_a_subclass_and_callbacks(tmp_path) -> None:
    from exercises.checks import fixtures
    from helpers.trainers import make_trainer

    class Subclass(Trainer):
        pass

    trainer = make_trainer(
        "unused",
        model=fixtures.tiny_model(),
        trainer_class=Subclass,
        callbacks=[Mine()],
        output_dir=str(tmp_path),  # given: runs/unused is neither used nor emptied
    )
    assert type(trainer) is Subclass and trainer.args.output_dir == str(tmp_path)
    assert any(isinstance(callback, Mine) for callback in trainer.callback_handler.callbacks)
