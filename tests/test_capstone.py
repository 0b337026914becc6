"""The capstone (lesson 12): its task module, its two checks with answers written differently from the reference
and realistic mistakes, and the score's determinism (the same answer scores the same in fresh processes and after
any earlier cells). The reference solution and the recorded wrong answers are run by tests/test_exercises.py."""

from __future__ import annotations

import ast
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from transformers import DataCollatorWithPadding, Trainer, TrainerCallback, TrainingArguments

import helpers
from helpers import capstone
from helpers.checks import CHECK_FAILED, NOT_ATTEMPTED, PASSED, WRONG
from helpers.checks import lesson_12 as exercises
from helpers.metrics import make_compute_metrics

ROOT = Path(__file__).resolve().parent.parent


# --- the task ------------------------------------------------------------------------------------------------


def test_data_is_one_positive_in_ten_and_handed_out_as_a_copy() -> None:
    data = capstone.load_data()
    sizes = capstone.SIZES[helpers.active_profile().name]
    for split, size in zip(("train", "validation"), sizes):
        assert len(data[split]) == size and sum(data[split]["labels"]) == round(size * capstone.POSITIVE_SHARE)
    data["train"] = data["validation"]
    assert len(capstone.load_data()["train"]) == sizes[0]


def test_lesson_07s_class_weighted_trainer_pastes_into_the_capstone() -> None:
    """Lesson 07's exercise counts train_dataset["labels"]; the capstone's data must have that column."""
    from helpers.solutions.lesson_07 import MyBalancedTrainer

    data = capstone.load_data()
    args = TrainingArguments(output_dir=str(helpers.run_dir("test_capstone_paste")), report_to="none")
    trainer = MyBalancedTrainer(model=capstone.model_init(), args=args, train_dataset=data["train"])
    positives = sum(data["train"]["labels"])
    expected = torch.tensor(
        [len(data["train"]) / (2 * (len(data["train"]) - positives)), len(data["train"]) / (2 * positives)]
    )
    assert torch.allclose(trainer.class_weights, expected)


def test_imbalanced_sample_rejects_sizes_it_cannot_draw() -> None:
    split = helpers.load_reviews()["validation"]
    with pytest.raises(ValueError, match="smaller size"):
        capstone.imbalanced_sample(split, len(split) * 2, positive_share=0.5)
    with pytest.raises(ValueError, match="int size"):
        capstone.imbalanced_sample(split, 1)


def test_model_init_gives_the_same_head_after_the_same_seed_whatever_ran_before() -> None:
    heads = []
    for noise in (1, 1000):
        torch.randn(noise)
        helpers.seed_everything(3)
        heads.append(capstone.model_init().classifier.weight.detach())
    assert torch.equal(*heads)
    assert not torch.equal(heads[0], capstone.model_init().classifier.weight.detach())


def test_seeded_trainer_seeds_before_it_calls_the_factory() -> None:
    draws = [capstone.seeded_trainer(lambda: (random.random(), np.random.rand(), torch.rand(1).item())) for _ in "ab"]
    assert draws[0] == draws[1]


def test_checks_and_solutions_do_not_import_each_other() -> None:
    tree = ast.parse((ROOT / "helpers/solutions/lesson_12.py").read_text())
    imported = {getattr(node, "module", None) or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not [name for name in imported if name.startswith("helpers.checks")], imported


# --- q1: StopAtTargetF1 --------------------------------------------------------------------------------------


class StopReturningControl(TrainerCallback):
    """Correct, written differently: reads the metrics from kwargs and returns the control."""

    def __init__(self, target):
        self.target = target

    def on_evaluate(self, args, state, control, **kwargs):
        control.should_training_stop = control.should_training_stop or kwargs["metrics"]["eval_f1"] >= self.target
        return control


class StopFromLogHistory(TrainerCallback):
    """Correct, written differently: reads the last evaluation from state.log_history."""

    def __init__(self, target: float) -> None:
        self.target = target

    def on_evaluate(self, args, state, control, **kwargs):
        if state.log_history[-1].get("eval_f1", 0) >= self.target:
            control.should_training_stop = True


class StopAboveTarget(StopReturningControl):
    """Wrong: '>' where '>=' was asked; one evaluation late when the F1 equals the target."""

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        control.should_training_stop = metrics["eval_f1"] > self.target


class StopAtFirstEvaluation(StopReturningControl):
    """Wrong: stops at the first evaluation whatever the score."""

    def on_evaluate(self, args, state, control, **kwargs):
        control.should_training_stop = True


class StopOnEvaluated(TrainerCallback):
    """Wrong: 'on_evaluated' is no event, so the Trainer never calls it and training never stops."""

    def __init__(self, target):
        self.target = target

    def on_evaluated(self, args, state, control, metrics=None, **kwargs):
        control.should_training_stop = metrics["eval_f1"] >= self.target


def test_q1_names_a_misspelled_event() -> None:
    verdict = exercises.q1.evaluate(StopOnEvaluated)
    assert verdict.status == WRONG and "on_evaluated (did you mean on_evaluate?)" in verdict.message, verdict


@pytest.mark.parametrize("answer", [StopReturningControl, StopFromLogHistory])
def test_q1_passes_callbacks_written_differently(answer: type) -> None:
    verdict = exercises.q1.evaluate(answer)
    assert verdict.status == PASSED, verdict


@pytest.mark.parametrize("answer", [StopAboveTarget, StopAtFirstEvaluation])
def test_q1_catches_stopping_at_the_wrong_evaluation(answer: type) -> None:
    verdict = exercises.q1.evaluate(answer)
    assert verdict.status == WRONG and "should stop after update" in verdict.message, verdict


def test_q1_reports_its_own_failure_as_the_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exercises.fixtures, "trainer", lambda *args, **kwargs: 1 / 0)
    verdict = exercises.q1.evaluate(StopReturningControl)
    assert verdict.status == CHECK_FAILED and "ZeroDivisionError" in verdict.message, verdict


# --- q2: the project -----------------------------------------------------------------------------------------


def weighted_loss(outputs, labels, num_items_in_batch=None):
    """Class-weighted cross-entropy as a compute_loss_func (1 : 9)."""
    weights = torch.tensor([1.0, 9.0], device=outputs.logits.device)
    per_review = F.cross_entropy(outputs.logits, labels, weight=weights, reduction="none")
    return per_review.sum() / (num_items_in_batch or labels.numel())


def make_with_loss_func(model=None):
    """Correct, written differently: a plain Trainer with compute_loss_func, the model built inside the function
    (not by model_init), a linear schedule, the best model by 'eval_f1'."""
    profile = helpers.active_profile()
    data = capstone.load_data()
    args = TrainingArguments(
        output_dir=str(helpers.run_dir("test_capstone_loss_func")),
        report_to="none",
        num_train_epochs=3,
        learning_rate=1e-3,
        per_device_train_batch_size=profile.batch_size,
        eval_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model="eval_f1",
        **profile.precision_kwargs(),
    )
    return Trainer(
        model=model if model is not None else capstone.model_init(),
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(helpers.models.load_tokenizer()),
        compute_metrics=make_compute_metrics(),
        compute_loss_func=weighted_loss,
    )


class SummedLossTrainer(Trainer):
    class_weights = torch.ones(2)

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        loss_fn = torch.nn.CrossEntropyLoss(weight=self.class_weights.to(outputs.logits.device), reduction="sum")
        loss = loss_fn(outputs.logits, labels) / (num_items_in_batch or len(labels))
        return (loss, outputs) if return_outputs else loss


def make_with_subclass_and_steps():
    """Correct, written differently: a Trainer subclass with nn.CrossEntropyLoss, a length in updates, evaluation
    and saving every 40 updates, warmup as a count. (With a constant learning rate after the warmup instead of the
    cosine decay, this answer scores 0.000 and the check rightly fails it.)"""
    data = capstone.load_data()
    args = TrainingArguments(
        output_dir=str(helpers.run_dir("test_capstone_subclass")),
        report_to="none",
        seed=42,
        max_steps=120,  # 3 epochs of 640 reviews at 16 a batch
        per_device_train_batch_size=16,
        learning_rate=1e-3,
        lr_scheduler_type="cosine",
        warmup_steps=12,
        eval_strategy="steps",
        eval_steps=40,
        save_steps=40,
        load_best_model_at_end=True,
        metric_for_best_model="f1",
        **helpers.active_profile().precision_kwargs(),
    )
    trainer = SummedLossTrainer(
        model_init=capstone.model_init,
        args=args,
        train_dataset=data["train"],
        eval_dataset=data["validation"],
        data_collator=DataCollatorWithPadding(helpers.models.load_tokenizer()),
        compute_metrics=make_compute_metrics(),
    )
    counts = np.bincount(data["train"]["labels"], minlength=2)
    trainer.class_weights = torch.tensor(counts.sum() / (2 * counts), dtype=torch.float32)
    return trainer


def make_mismatched_strategies():
    """Wrong: evaluates every epoch but never saves, yet asks for the best model at the end."""
    args = TrainingArguments(
        output_dir=str(helpers.run_dir("test_capstone_mismatch")),
        eval_strategy="epoch",
        save_strategy="no",
        load_best_model_at_end=True,
        metric_for_best_model="f1",
    )
    return Trainer(model_init=capstone.model_init, args=args, train_dataset=capstone.load_data()["train"])


_EARLIER_CELL = {}


def make_with_model_from_an_earlier_cell():
    """Wrong: the model was built once, in an earlier cell; every call goes on training the same object."""
    return make_with_loss_func(_EARLIER_CELL.setdefault("model", capstone.model_init()))


def earlier_cells() -> None:
    """What a notebook may have done before the check: random draws, a model built, another seed."""
    helpers.seed_everything(7)
    random.random(), np.random.rand(5), torch.randn(100)
    capstone.model_init()


SCORE_IN_A_FRESH_PROCESS = """
import sys
sys.path.insert(0, "tests")
import helpers
helpers.setup_notebook()
import test_capstone as t
if "--after-cells" in sys.argv:
    t.earlier_cells()
print("VERDICT", t.exercises.q2.evaluate(t.make_with_loss_func))
"""


def test_q2_scores_the_same_answer_the_same_in_fresh_processes_and_after_earlier_cells() -> None:
    earlier_cells()
    here = exercises.q2.evaluate(make_with_loss_func)
    assert here.status == PASSED and "seeded" in here.message, here
    for extra in ([], ["--after-cells"]):
        run = subprocess.run(
            [sys.executable, "-c", SCORE_IN_A_FRESH_PROCESS, *extra], cwd=ROOT, capture_output=True, text=True
        )
        assert run.returncode == 0, run.stderr[-2000:]
        printed = [line for line in run.stdout.splitlines() if line.startswith("VERDICT")]
        assert printed == [f"VERDICT {here}"], (printed, str(here))


def test_q2_passes_a_subclass_with_step_evaluation() -> None:
    verdict = exercises.q2.evaluate(make_with_subclass_and_steps)
    assert verdict.status == PASSED, verdict


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (make_with_model_from_an_earlier_cell, "same model object"),
        (make_mismatched_strategies, "your code raised ValueError while calling your make_capstone_trainer()"),
    ],
)
def test_q2_catches_realistic_mistakes_with_their_hint(answer, hint: str) -> None:
    verdict = exercises.q2.evaluate(answer)
    assert verdict.status == WRONG and hint in verdict.message, verdict


def test_q2_reports_its_own_failure_as_the_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    data = capstone.load_data()
    monkeypatch.setattr(capstone, "load_data", lambda profile=None: 1 / 0)
    args = TrainingArguments(
        output_dir=str(helpers.run_dir("test_capstone_check_failure")),
        eval_strategy="epoch",
        save_strategy="epoch",
        load_best_model_at_end=True,
        metric_for_best_model="f1",
    )
    verdict = exercises.q2.evaluate(
        lambda: Trainer(
            model_init=capstone.model_init, args=args, train_dataset=data["train"], eval_dataset=data["validation"]
        )
    )
    assert verdict.status == CHECK_FAILED and "ZeroDivisionError" in verdict.message, verdict
    assert exercises.q2.evaluate(None).status == NOT_ATTEMPTED
