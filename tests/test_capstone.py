"""The capstone (lesson 12): its task module, its two checks with answers written differently from the reference,
realistic mistakes and cheats, and the score's determinism (the same answer scores the same in a fresh process and
after any earlier cells). The reference solution and the recorded wrong answers are run by tests/test_exercises.py.

A full run of 12.2 (the reference's three epochs) trains for about 15 s, so only the answers that must reach the
goal train longer, one epoch each (the honest routes); the determinism test and the plain-loss mistake share one
short run (``short_run_after_earlier_cells``), and the cheats and mistakes are caught before or at their first
update, or train a few updates only."""

from __future__ import annotations

import ast
import copy
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from sklearn.metrics import f1_score
from transformers import DataCollatorWithPadding, Trainer, TrainerCallback, TrainingArguments

import helpers
from exercises.checks import CHECK_FAILED, NOT_ATTEMPTED, PASSED, WRONG, Verdict
from exercises.checks import lesson_12 as exercises
from helpers import capstone
from helpers.metrics import make_compute_metrics

ROOT = Path(__file__).resolve().parent.parent
DRAW = 20261203  # the held-out samples of the two runs that must score the same (the check draws its own)


# --- the task ------------------------------------------------------------------------------------------------


def _reviews(dataset) -> set[tuple[int, ...]]:
    return {tuple(ids) for ids in dataset["input_ids"]}


def test_data_is_one_positive_in_ten_handed_out_as_a_copy_without_the_held_out_reviews() -> None:
    data = capstone.load_data()
    assert set(data) == {"train", "validation"}
    for split in ("train", "validation"):
        size = capstone.SIZES[split]
        assert len(data[split]) == size and sum(data[split]["labels"]) == round(size * capstone.POSITIVE_SHARE), split
    assert len(capstone._tokenized_splits()["held_out"]) == len(helpers.load_reviews()["test"])  # the whole pool
    data["train"] = data["validation"]
    assert len(capstone.load_data()["train"]) == capstone.SIZES["train"]


def test_the_three_splits_share_no_review() -> None:
    splits = {**capstone.load_data(), "held_out": capstone._tokenized_splits()["held_out"]}
    train, validation, held_out = (_reviews(splits[name]) for name in ("train", "validation", "held_out"))
    assert not train & validation and not train & held_out and not validation & held_out
    for name in ("train", "validation", "held_out"):  # what the check asks of each review a Trainer trains on
        assert capstone.split_of(splits[name][0]["input_ids"] + [0, 0]) == name
    assert capstone.split_of([101, 7, 102]) is None


def test_lesson_07s_weighted_trainer_takes_the_capstones_data_and_model() -> None:
    from helpers.lessons.lesson_07 import WeightedLossTrainer

    data = capstone.load_data()
    weights = torch.tensor([1.0, 9.0])
    args = TrainingArguments(output_dir=str(helpers.run_dir("test_capstone_paste")), report_to="none", use_cpu=True)
    trainer = WeightedLossTrainer(model=capstone.model_init().eval(), args=args, class_weights=weights)
    batch = DataCollatorWithPadding(helpers.models.load_tokenizer())([data["train"][i] for i in range(16)])
    with torch.no_grad():
        logits = trainer.model(**{key: value for key, value in batch.items() if key != "labels"}).logits
        loss = trainer.compute_loss(trainer.model, dict(batch))
    expected = (F.cross_entropy(logits, batch["labels"], reduction="none") * weights[batch["labels"]]).mean()
    assert torch.allclose(loss, expected)


def test_imbalanced_sample_rejects_sizes_it_cannot_draw() -> None:
    split = helpers.load_reviews()["validation"]
    with pytest.raises(ValueError, match="smaller size"):
        capstone.imbalanced_sample(split, len(split) * 2, positive_share=0.5)
    with pytest.raises(ValueError, match="int size"):
        capstone.imbalanced_sample(split, 1)


@pytest.mark.rule(
    lesson="12",
    section="1. The task",
    text="Two calls after the same seed give the same head, whatever ran in between.",
    covers=["1 and 1000 random draws between the seed and the call", "a call without seeding gives another head"],
)
def test_model_init_gives_the_same_head_after_the_same_seed_whatever_ran_before() -> None:
    heads = []
    for noise in (1, 1000):
        torch.randn(noise)
        helpers.seed_everything(3)
        heads.append(capstone.model_init().classifier.weight.detach())
    assert torch.equal(*heads)
    assert not torch.equal(heads[0], capstone.model_init().classifier.weight.detach())


def test_only_the_head_trains_and_the_mean_leaves_padding_out() -> None:
    model = capstone.model_init().eval()
    trainable = [name for name, parameter in model.named_parameters() if parameter.requires_grad]
    assert trainable == ["classifier.weight", "classifier.bias"] and capstone.is_fresh(model)
    with torch.no_grad():
        model.classifier.bias[1] = 0.5  # what the check calls a model changed before the Trainer got it
    assert not capstone.is_fresh(model)
    data = capstone.load_data()["validation"]
    short, long = sorted((data[i] for i in range(8)), key=lambda row: len(row["input_ids"]))[::7]
    batch = DataCollatorWithPadding(helpers.models.load_tokenizer())([short, long])
    with torch.no_grad():
        padded = model(**{key: value for key, value in batch.items() if key != "labels"}).logits[0]
        alone = model(input_ids=torch.tensor([short["input_ids"]])).logits[0]
    assert len(short["input_ids"]) < batch["input_ids"].shape[1] and torch.allclose(padded, alone, atol=1e-5)


def test_seeded_trainer_seeds_before_it_calls_the_factory() -> None:
    draws = [capstone.seeded_trainer(lambda: (random.random(), np.random.rand(), torch.rand(1).item())) for _ in "ab"]
    assert draws[0] == draws[1]


def test_checks_and_solutions_do_not_import_each_other() -> None:
    tree = ast.parse((ROOT / "exercises/solutions/lesson_12.py").read_text())
    imported = {getattr(node, "module", None) or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert not [name for name in imported if name.startswith("exercises.checks")], imported


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


class StopAtEpoch(StopReturningControl):
    """Wrong: ends the epoch, not the run (passes a one-epoch check)."""

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        control.should_epoch_stop = control.should_epoch_stop or metrics["eval_f1"] >= self.target


class StopAtTheLessonsUpdates(TrainerCallback):
    """Wrong: a lookup table of the stop updates the check used to fix in its source."""

    def __init__(self, target):
        self.stop_at = {0.6: 3, 0.5: 2, 0.9: 4}.get(target, 1)

    def on_evaluate(self, args, state, control, **kwargs):
        control.should_training_stop = state.global_step >= self.stop_at


class StopWithoutPrefix(StopReturningControl):
    """Looks for 'f1', but the Trainer hands the callbacks 'eval_f1': it never stops."""

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        control.should_training_stop = metrics.get("f1", 0.0) >= self.target


class StopOnEvaluated(TrainerCallback):
    """Wrong: 'on_evaluated' is no event, so the Trainer never calls it and training never stops."""

    def __init__(self, target):
        self.target = target

    def on_evaluated(self, args, state, control, metrics=None, **kwargs):
        control.should_training_stop = metrics["eval_f1"] >= self.target


def test_q1_draws_cases_that_tell_each_mistake_apart() -> None:
    cases = exercises._stop_cases()
    assert cases == exercises._stop_cases() and cases != exercises._stop_cases(exercises.STOP_SEED + 1)
    total = exercises.EPOCHS * exercises.UPDATES_PER_EPOCH
    for scores, target, stop in cases:
        assert len(scores) == total and scores[0] < target and all(score < target for score in scores[: stop - 1])
        assert stop == total or (scores[stop - 1] >= target and stop <= total - exercises.UPDATES_PER_EPOCH)
    assert {scores[stop - 1] == target for scores, target, stop in cases if stop < total} == {True, False}


def test_q1_names_a_misspelled_event() -> None:
    verdict = exercises.q1.evaluate(StopOnEvaluated)
    assert verdict.status == WRONG and "on_evaluated (did you mean on_evaluate?)" in verdict.message, verdict


@pytest.mark.parametrize("answer", [StopReturningControl, StopFromLogHistory])
def test_q1_passes_callbacks_written_differently(answer: type) -> None:
    verdict = exercises.q1.evaluate(answer)
    assert verdict.status == PASSED, verdict


@pytest.mark.parametrize(
    "answer", [StopAboveTarget, StopAtFirstEvaluation, StopAtEpoch, StopAtTheLessonsUpdates, StopWithoutPrefix]
)
def test_q1_catches_stopping_at_the_wrong_update(answer: type) -> None:
    verdict = exercises.q1.evaluate(answer)
    assert verdict.status == WRONG and "should stop after update" in verdict.message, verdict


@pytest.mark.parametrize("answer", [StopReturningControl(0.5), "StopAtTargetF1"])
def test_q1_names_an_instance_or_a_string_for_the_class(answer) -> None:
    verdict = exercises.q1.evaluate(answer)
    assert verdict.status == WRONG and "must be the class itself" in verdict.message, verdict


def test_q1_reports_its_own_failure_as_the_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exercises.fixtures, "trainer", lambda *args, **kwargs: 1 / 0)
    verdict = exercises.q1.evaluate(StopReturningControl)
    assert verdict.status == CHECK_FAILED and "ZeroDivisionError" in verdict.message, verdict


# --- q2: honest routes ---------------------------------------------------------------------------------------


def _args(name: str, **settings) -> TrainingArguments:
    base = dict(output_dir=str(helpers.run_dir(name)), report_to="none", per_device_train_batch_size=16)
    return TrainingArguments(**{**base, **helpers.active_profile().precision_kwargs(), **settings})


def _parts(**extra) -> dict:
    data = capstone.load_data()
    collator = DataCollatorWithPadding(helpers.models.load_tokenizer())
    return {"train_dataset": data["train"], "eval_dataset": data["validation"], "data_collator": collator, **extra}


def weighted_loss(outputs, labels, num_items_in_batch=None):
    """Class-weighted cross-entropy as a compute_loss_func (1 : 9)."""
    weights = torch.tensor([1.0, 9.0], device=outputs["logits"].device)
    per_review = F.cross_entropy(outputs["logits"], labels, weight=weights, reduction="none")
    return per_review.sum() / (num_items_in_batch or labels.numel())


def make_with_loss_func(model=None):
    """Correct, another route: a plain Trainer with compute_loss_func, the model built inside the function (not by
    model_init), the default linear schedule, one epoch, the best model by 'eval_f1' every 20 updates."""
    every = dict(eval_strategy="steps", save_strategy="steps", eval_steps=20, save_steps=20)
    best = dict(load_best_model_at_end=True, metric_for_best_model="eval_f1")
    args = _args("test_capstone_loss_func", num_train_epochs=1, learning_rate=1e-2, **every, **best)
    model = model if model is not None else capstone.model_init()
    return Trainer(
        model=model, args=args, compute_metrics=make_compute_metrics(), **_parts(compute_loss_func=weighted_loss)
    )


class OversamplingTrainer(Trainer):
    """Draws the reviews of each class equally often (with replacement); the loss stays the plain mean."""

    def get_train_dataloader(self):
        from torch.utils.data import DataLoader, WeightedRandomSampler

        labels = torch.tensor(self.train_dataset["labels"])
        chance = (1.0 / torch.bincount(labels).float())[labels]
        sampler = WeightedRandomSampler(chance, len(labels), generator=torch.Generator().manual_seed(self.args.seed))
        loader = DataLoader(
            self.train_dataset, batch_size=self.args.train_batch_size, sampler=sampler, collate_fn=self.data_collator
        )
        return self.accelerator.prepare(loader)


def make_oversampling():
    """Correct, another route: resampling through get_train_dataloader, the last model kept, a constant rate."""
    args = _args("test_capstone_oversampling", num_train_epochs=1, learning_rate=1e-2, lr_scheduler_type="constant")
    return OversamplingTrainer(model_init=capstone.model_init, args=args, **_parts())


class ThresholdFromTraining(TrainerCallback):
    """At the end, moves the head's bias so 'positive' starts where the F1 on the training split is best."""

    def __init__(self, trainer):
        self.trainer = trainer

    def on_train_end(self, args, state, control, model=None, **kwargs):
        prediction = self.trainer.predict(self.trainer.train_dataset)
        margin = prediction.predictions[:, 1] - prediction.predictions[:, 0]
        cuts = np.quantile(margin, np.linspace(0.5, 0.99, 50))
        best = max(cuts, key=lambda cut: f1_score(prediction.label_ids, margin >= cut))
        with torch.no_grad():
            model.classifier.bias[1] -= float(best)


def make_with_threshold():
    """Correct, another route: the starter's plain loss, then a decision threshold chosen on the training split."""
    args = _args("test_capstone_threshold", num_train_epochs=1, learning_rate=2e-2)
    trainer = Trainer(model_init=capstone.model_init, args=args, **_parts())
    trainer.add_callback(ThresholdFromTraining(trainer))
    return trainer


def earlier_cells() -> None:
    """What a notebook may have done before the check: random draws, a model built, another seed."""
    helpers.seed_everything(7)
    random.random(), np.random.rand(5), torch.randn(100)
    capstone.model_init()


def make_short_plain():
    """Wrong, and cheap: the plain loss for 20 updates, the last model kept (it calls almost no review positive)."""
    args = _args("test_capstone_short", max_steps=20, learning_rate=1e-2)
    return Trainer(model_init=capstone.model_init, args=args, **_parts())


@pytest.fixture(scope="module")
def short_run_after_earlier_cells() -> tuple[Verdict, dict]:
    """The one short run the module shares: q2 checks make_short_plain after simulated earlier cells; its verdict,
    and the held-out scores of the check's own run (ROC-AUC and average precision too: they move with any change in
    the trained head)."""
    earlier_cells()
    runs, run_project = [], exercises.run_project

    def recorded(make_trainer, seed=None, draw=None):
        runs.append(run_project(make_trainer, seed, DRAW))  # the samples of the fresh process's score
        return runs[-1]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exercises, "run_project", recorded)
        verdict = exercises.q2.evaluate(make_short_plain)
    assert len(runs) == 1, verdict
    return verdict, runs[0][1]


@pytest.mark.parametrize("answer", [make_with_loss_func, make_oversampling, make_with_threshold])
def test_q2_passes_honest_routes_other_than_the_references(answer) -> None:
    verdict = exercises.q2.evaluate(answer)
    assert verdict.status == PASSED and "seeded" in verdict.message, verdict


SCORE_IN_A_FRESH_PROCESS = """
import json
import helpers
helpers.setup_notebook(announce=False)
import tests.test_capstone as t
print("SCORES", json.dumps(t.exercises.run_project(t.make_short_plain, draw=t.DRAW)[1], sort_keys=True))
"""


@pytest.mark.rule(
    lesson="12",
    section="Recap",
    text="A project check should train and score your code itself, from a seeded start, on data your code never "
    "saw, as `q2.check()` does;",
    covers=[
        "a seeded start: the same answer scores the same in a fresh process as after simulated earlier cells "
        "(F1, ROC-AUC, average precision)",
    ],
)
def test_q2_scores_an_answer_the_same_in_a_fresh_process_as_after_earlier_cells(short_run_after_earlier_cells) -> None:
    run = subprocess.run([sys.executable, "-c", SCORE_IN_A_FRESH_PROCESS], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    printed = [line for line in run.stdout.splitlines() if line.startswith("SCORES")]
    assert printed == [f"SCORES {json.dumps(short_run_after_earlier_cells[1], sort_keys=True)}"], printed


# --- q2: cheats ----------------------------------------------------------------------------------------------


class LookUpValidationLabels(torch.nn.Module):
    """A cheat: answers the validation labels it was given by heart, the wrapped model elsewhere."""

    def __init__(self, model, known):
        super().__init__()
        self.model, self.known = model, {tuple(ids): label for ids, label in zip(known["input_ids"], known["labels"])}

    def forward(self, input_ids, attention_mask, token_type_ids=None, labels=None):
        outputs = self.model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
        for row, (ids, mask) in enumerate(zip(input_ids.tolist(), attention_mask.tolist())):
            label = self.known.get(tuple(token for token, real in zip(ids, mask) if real))
            if label is not None:
                outputs.logits[row] = torch.tensor([-9.0, 9.0] if label else [9.0, -9.0])
        return outputs


@pytest.mark.rule(
    lesson="12",
    section="Recap",
    text="A project check should train and score your code itself, from a seeded start, on data your code never "
    "saw, as `q2.check()` does;",
    covers=["data your code never saw: a model that knows every validation label (F1 1.0 there) fails the check"],
)
def test_q2_a_model_that_knows_the_validation_labels_gains_nothing() -> None:
    validation = capstone.load_data()["validation"]
    cheat = LookUpValidationLabels(capstone.model_init(), validation)
    assert capstone.minority_f1(cheat, validation) == 1.0  # what scoring on the validation split would say

    def make_cheat():
        return Trainer(
            model=LookUpValidationLabels(capstone.model_init(), validation),
            args=_args("test_cheat", max_steps=5),
            **_parts(),
        )

    verdict = exercises.q2.evaluate(make_cheat)
    assert verdict.status == WRONG and "held-out reviews your code never saw" in verdict.message, verdict


def _every_review_the_helpers_load() -> dict:
    """Labels of every review a learner's code can load: the course's three splits, tokenized the capstone's way,
    and the capstone's own splits."""
    tokenized = helpers.tokenize_reviews(helpers.load_reviews(), helpers.models.load_tokenizer(), capstone.MAX_LENGTH)
    known = {}
    for split in [*tokenized.values(), *capstone.load_data().values()]:
        labels = split["label"] if "label" in split.column_names else split["labels"]
        known.update({tuple(ids): label for ids, label in zip(split["input_ids"], labels)})
    return known


class LookUpEveryReview(LookUpValidationLabels):
    """A cheat: answers every review the helpers load by heart (the held-out pool among them)."""

    def __init__(self, model, known):
        torch.nn.Module.__init__(self)
        self.model, self.known = model, known


@pytest.mark.rule(
    lesson="12",
    section="Recap",
    text="A project check should train and score your code itself, from a seeded start, on data your code never "
    "saw, as `q2.check()` does;",
    covers=["data your code never saw: a model that knows every review the helpers load fails the check"],
)
def test_q2_a_lookup_of_every_split_the_helpers_load_gains_nothing() -> None:
    known = _every_review_the_helpers_load()
    pool = capstone._tokenized_splits()["held_out"]
    assert capstone.minority_f1(LookUpEveryReview(capstone.model_init(), known), pool) == 1.0  # it knows them all

    def make_cheat():
        model = LookUpEveryReview(capstone.model_init(), known)
        return Trainer(model=model, args=_args("test_cheat", max_steps=5), **_parts())

    verdict = exercises.q2.evaluate(make_cheat)
    assert verdict.status == WRONG and "held-out reviews your code never saw" in verdict.message, verdict


class SwapInTheLookupAtTheEnd(TrainerCallback):
    """A hurried learner's try at the new check: trains a few updates honestly, then hands the Trainer a model
    that looks every label up."""

    def __init__(self, trainer, known):
        self.trainer, self.known = trainer, known

    def on_train_end(self, args, state, control, model=None, **kwargs):
        self.trainer.model = LookUpEveryReview(model, self.known)


def make_swapping_cheat():
    trainer = Trainer(model_init=capstone.model_init, args=_args("test_cheat", max_steps=3), **_parts())
    trainer.add_callback(SwapInTheLookupAtTheEnd(trainer, _every_review_the_helpers_load()))
    return trainer


class TrainsOnLookedUpTestReviews(Trainer):
    """A cheat: adds, inside compute_loss, the loss of test-split reviews whose labels it looked up."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        test = helpers.tokenize_reviews(
            helpers.load_reviews()["test"].select(range(16)), helpers.models.load_tokenizer(), capstone.MAX_LENGTH
        )
        batch = self.data_collator(
            [{"input_ids": ids, "labels": label} for ids, label in zip(test["input_ids"], test["label"])]
        )
        extra = model(**{key: value.to(self.args.device) for key, value in batch.items()}).loss
        outputs = model(**inputs)
        loss = outputs.loss + extra
        return (loss, outputs) if return_outputs else loss


class WithAnExtraLayer(torch.nn.Module):
    """The capstone model with a trainable layer of its own before the head: not the model the check scores."""

    def __init__(self):
        super().__init__()
        self.model, self.extra = capstone.model_init(), torch.nn.Linear(4, 4)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)


@pytest.mark.rule(
    lesson="12",
    section="Recap",
    text="A project check should train and score your code itself, from a seeded start, on data your code never "
    "saw, as `q2.check()` does;",
    covers=["scored by the check itself: held-out samples drawn when it scores, two draws within 0.02 F1"],
)
def test_held_out_samples_are_drawn_when_it_scores_and_score_alike() -> None:
    model = capstone.model_init()
    with torch.no_grad():
        model.classifier.weight.normal_(0, 0.5, generator=torch.Generator().manual_seed(0))
    first, second = capstone.held_out_scores(model), capstone.held_out_scores(model)
    assert first["draw"] != second["draw"] and abs(first["f1"] - second["f1"]) < 0.02, (first, second)
    assert capstone.held_out_scores(model, first["draw"]) == first


def make_on_train_and_validation():
    """A cheat: trains on the training and the validation split together."""
    from datasets import concatenate_datasets

    data = capstone.load_data()
    both = concatenate_datasets([data["train"], data["validation"]]).shuffle(seed=0)
    return Trainer(
        model_init=capstone.model_init, args=_args("test_cheat", num_train_epochs=1), **_parts(train_dataset=both)
    )


def make_with_a_head_trained_elsewhere():
    """A cheat: a model whose head was fitted before, outside the Trainer, on the validation split."""
    model = capstone.model_init()
    validation = capstone.load_data()["validation"].select(range(32))
    batch = DataCollatorWithPadding(helpers.models.load_tokenizer())([validation[i] for i in range(32)])
    optimizer = torch.optim.SGD(model.classifier.parameters(), lr=0.5)
    for _ in range(3):
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()
    return Trainer(model=copy.deepcopy(model), args=_args("test_cheat", max_steps=1), **_parts())


class NoTraining(Trainer):
    """A cheat: train() does nothing."""

    def train(self, *args, **kwargs):
        return None


_EARLIER_CELL = {}


def make_with_model_from_an_earlier_cell():
    """Wrong: the model was built once, in an earlier cell; every call goes on training the same object."""
    return make_with_loss_func(_EARLIER_CELL.setdefault("model", capstone.model_init()))


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (make_on_train_and_validation, "trained on the validation split"),
        (make_with_a_head_trained_elsewhere, "not a fresh capstone model"),
        (make_with_model_from_an_earlier_cell, "same model object"),
        (lambda: NoTraining(model_init=capstone.model_init, args=_args("test_cheat")), "made no update"),
        (make_swapping_cheat, "held-out reviews your code never saw"),
        (
            lambda: TrainsOnLookedUpTestReviews(model_init=capstone.model_init, args=_args("test_cheat"), **_parts()),
            "reviews that are not in it",
        ),
        (
            lambda: Trainer(model=WithAnExtraLayer(), args=_args("test_cheat", max_steps=2), **_parts()),
            "trains weights the capstone model does not have",
        ),
    ],
)
def test_q2_catches_cheats_before_they_train_long(answer, hint: str) -> None:
    verdict = exercises.q2.evaluate(answer)
    assert verdict.status == WRONG and hint in verdict.message, verdict


# --- q2: mistakes ----------------------------------------------------------------------------------------------


class ForgetsReturnOutputs(Trainer):
    """Wrong: always returns the loss alone, also when the evaluation asks for (loss, outputs)."""

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        return model(**inputs).loss


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


@pytest.mark.parametrize(
    ("answer", "hint"),
    [
        (
            lambda: ForgetsReturnOutputs(
                model_init=capstone.model_init,
                args=_args("test_capstone_outputs", max_steps=4, eval_strategy="steps", eval_steps=2),
                **_parts(),
            ),
            "return (loss, outputs) if return_outputs else loss",
        ),
        (make_mismatched_strategies, "your code raised ValueError while calling your make_capstone_trainer()"),
    ],
)
def test_q2_names_realistic_mistakes(answer, hint: str) -> None:
    verdict = exercises.q2.evaluate(answer)
    assert verdict.status == WRONG and hint in verdict.message, verdict


def test_q2_names_both_mistakes_of_the_plain_loss_and_the_last_model(short_run_after_earlier_cells) -> None:
    verdict = short_run_after_earlier_cells[0]
    hint = "weigh that class in the loss (lesson 07). You keep the last model: keep the best by F1"
    assert verdict.status == WRONG and hint in verdict.message, verdict


def test_q2_names_a_trainer_or_a_string_given_for_the_function() -> None:
    for answer, kind in ((make_with_loss_func(), "Trainer"), ("make_capstone_trainer", "str")):
        verdict = exercises.q2.evaluate(answer)
        assert verdict.status == WRONG and f"the function that builds the Trainer, got {kind}" in verdict.message


def test_q2_reports_its_own_failure_as_the_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    data = capstone.load_data()
    monkeypatch.setattr(capstone, "held_out_scores", lambda model, draw=None: 1 / 0)
    verdict = exercises.q2.evaluate(
        lambda: Trainer(
            model_init=capstone.model_init,
            args=_args("test_capstone_check_failure", max_steps=1),
            train_dataset=data["train"],
            data_collator=DataCollatorWithPadding(helpers.models.load_tokenizer()),
        )
    )
    assert verdict.status == CHECK_FAILED and "ZeroDivisionError" in verdict.message, verdict
    assert exercises.q2.evaluate(None).status == NOT_ATTEMPTED
