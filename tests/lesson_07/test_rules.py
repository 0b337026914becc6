"""Lesson 07's rules, each tried on the cases a learner meets beyond the lesson's own run (issue 59): an uneven
last micro-batch (10 rows as 4 x 3: micro-batches 4, 4, 2; as 3 x 4: 3, 3, 3, 1), accumulation above 1, a model
whose ``forward`` has no ``**kwargs`` (the lesson's ``LinearHead`` is one), a ``forward`` that has them, the
evaluation loop, other seeds and imbalances.

Each test carries one ``rule`` marker per sentence of the main text that it tries (COORDINATION.md). The first
tests are the findings of issue 59 against today's text: they read the notebook, so that the sentence and the
measurement cannot part again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch

from exercises.checks import fixtures

pytestmark = [pytest.mark.filterwarnings("ignore"), pytest.mark.slow]

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "07_custom_loss.ipynb"
SPLITS = {  # batch x accumulation for 10 rows, against 10 x 1
    "4 x 3 (4, 4, 2)": (4, 3),
    "3 x 4 (3, 3, 3, 1)": (3, 4),
    "5 x 2 (even)": (5, 2),
}


def main_text() -> str:
    """The lesson's markdown outside <details> boxes, whitespace collapsed (sentences wrap across lines)."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    text = " ".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    return " ".join(re.sub(r"<details>.*?</details>", " ", text, flags=re.S).split())


class NoKwargsClassifier(torch.nn.Module):
    """A BERT classifier behind a ``forward`` without ``**kwargs``, as the lesson's ``LinearHead``."""

    def __init__(self, seed: int = 3) -> None:
        super().__init__()
        self.inner = fixtures.tiny_model(seed=seed)

    def forward(self, input_ids: Any, attention_mask: Any = None, labels: Any = None) -> Any:
        return self.inner(input_ids=input_ids, attention_mask=attention_mask, labels=labels)


class KwargsClassifier(NoKwargsClassifier):
    """The same, with ``**kwargs`` (which it drops)."""

    def forward(self, input_ids: Any, attention_mask: Any = None, labels: Any = None, **kwargs: Any) -> Any:
        return super().forward(input_ids, attention_mask, labels)


def ratio(trainer_class: Any, make_model: Any, split: tuple[int, int], **keywords: Any) -> np.ndarray:
    """[loss, grad_norm] of one SGD step on 10 rows as ``split`` over the same step as 10 x 1."""
    from helpers.trainers import one_sgd_step

    rows = fixtures.random_ids(10, seed=5)
    whole = one_sgd_step(trainer_class, make_model, rows, 10, 1, **keywords)
    return one_sgd_step(trainer_class, make_model, rows, *split, **keywords) / whole


def exact(value: np.ndarray) -> bool:
    return bool(np.allclose(value, 1, rtol=1e-4))


def pattern_trainer() -> Any:
    from helpers.lessons.lesson_07 import WeightedLossTrainer

    return WeightedLossTrainer


# --- issue 59's findings: each failed on the text and pattern before the fix ----------------------------------------


def test_the_text_no_longer_promises_the_same_step_for_every_split_of_the_mean_recipes() -> None:
    text = main_text()
    assert "gives the same step however the batch is split" not in text
    assert "exact only when every micro-batch of a step holds as many reviews" in text
    assert "exact only on equal micro-batches" in text  # the recap says it too


def test_next_to_the_pattern_the_text_tells_the_none_branch_and_the_kwargs_condition() -> None:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    first_section = next(i for i, c in enumerate(cells) if "\n## 1. " in "".join(c["source"]))
    near = " ".join(
        " ".join("".join(c["source"]).split()) for c in cells[:first_section] if c["cell_type"] == "markdown"
    )
    assert "only to a model whose `forward` takes `**kwargs`" in near
    assert "the `None` branch, a micro-batch mean" in near


@pytest.mark.rule(
    lesson="07",
    section="The pattern",
    text="the step of one big batch under accumulation, also with an uneven last micro-batch (section 5)",
    covers=["uneven last micro-batch 4, 4, 2", "uneven last micro-batch 3, 3, 3, 1", "even split 5 x 2",
            "forward without **kwargs", "forward with **kwargs", "the stock BERT classifier", "class weights 1 : 9"],
)  # fmt: skip
@pytest.mark.rule(
    lesson="07",
    section="The pattern",
    text="Hence the line in `__init__`: the count always comes; `compute_loss` never hands it to the model.",
    covers=["forward without **kwargs", "uneven last micro-batch"],
)
@pytest.mark.parametrize("split", list(SPLITS), ids=list(SPLITS))
@pytest.mark.parametrize("model", ["no kwargs", "kwargs", "stock"])
def test_the_pattern_gives_the_big_batch_step_on_any_split_and_any_forward(model: str, split: str) -> None:
    make = {"no kwargs": NoKwargsClassifier, "kwargs": KwargsClassifier, "stock": lambda: fixtures.tiny_model(3)}
    weights = torch.tensor([1.0, 9.0])
    assert exact(ratio(pattern_trainer(), make[model], SPLITS[split], class_weights=weights)), (model, split)


@pytest.mark.rule(
    lesson="07",
    section="The pattern",
    text="`LinearHead`'s `forward` takes none: it would get `None`, and the `None` branch, a micro-batch mean, "
    "is off when the last micro-batch is smaller (section 5).",
    covers=["forward without **kwargs", "uneven last micro-batch 4, 4, 2", "even split 5 x 2"],
)
def test_without_the_count_the_pattern_takes_the_none_branch_off_on_uneven_micro_batches() -> None:
    class LeftToTheTrainer(pattern_trainer()):  # what the Trainer decides from the forward's signature
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.model_accepts_loss_kwargs = False

    weights = torch.tensor([1.0, 9.0])
    uneven = ratio(LeftToTheTrainer, NoKwargsClassifier, SPLITS["4 x 3 (4, 4, 2)"], class_weights=weights)
    even = ratio(LeftToTheTrainer, NoKwargsClassifier, SPLITS["5 x 2 (even)"], class_weights=weights)
    assert not exact(uneven) and abs(uneven[1] - 1) > 0.01, uneven
    assert exact(even), even  # a mean of equal micro-batches' means is the big batch's mean


@pytest.mark.rule(
    lesson="07",
    section="The pattern",
    text="The Trainer passes `num_items_in_batch` only to a model whose `forward` takes `**kwargs` (or sets "
    "`accepts_loss_kwargs`), or with a `compute_loss_func`.",
    covers=["forward without **kwargs", "forward with **kwargs", "accepts_loss_kwargs on the model",
            "compute_loss_func", "accumulation 2", "evaluation"],
)  # fmt: skip
@pytest.mark.parametrize(
    ("case", "counted"),
    [("no kwargs", False), ("kwargs", True), ("accepts_loss_kwargs", True), ("compute_loss_func", True)],
)
def test_which_models_get_num_items_in_batch(case: str, counted: bool) -> None:
    from transformers import Trainer

    seen: list[Any] = []

    class Noting(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: ANN001, ANN201
            seen.append((model.training, num_items_in_batch))
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    model = KwargsClassifier() if case == "kwargs" else NoKwargsClassifier()
    keywords: dict[str, Any] = {}
    if case == "accepts_loss_kwargs":
        model.accepts_loss_kwargs = True
        model.forward = lambda input_ids, attention_mask=None, labels=None, **_: NoKwargsClassifier.forward(
            model, input_ids, attention_mask, labels
        )  # the count must not reach a forward that cannot take it
    if case == "compute_loss_func":
        keywords["compute_loss_func"] = lambda outputs, labels, num_items_in_batch=None: (
            torch.nn.functional.cross_entropy(outputs.logits, labels)
        )  # the labels never reach the model: this function gives the loss
    trainer = fixtures.trainer(
        dict(per_device_train_batch_size=4, gradient_accumulation_steps=2, max_steps=1),
        model=model,
        trainer_class=Noting,
        train_dataset=fixtures.random_ids(8, seed=5),
        **keywords,
    )
    trainer.train()
    trainer.evaluate(fixtures.random_ids(4, seed=6))
    training = [count for is_training, count in seen if is_training]
    evaluation = [count for is_training, count in seen if not is_training]
    assert len(training) == 2 and evaluation
    if counted:
        assert [int(count) for count in training] == [8, 8] and int(evaluation[0]) == 4
    else:
        assert training == [None, None] and evaluation == [None]


# --- section 5 and the recap: which recipe stays exact on which split ------------------------------------------------

MEAN_RECIPES = ("own mean + loss_is_scaled_for_ga=False", "own mean + model_accepts_loss_kwargs=False",
                "stock + model_accepts_loss_kwargs=False")  # fmt: skip
SUM_RECIPES = ("own sum / num_items_in_batch", "own sum / num_items_in_batch x processes",
               "compute_loss_func: sum / num_items_in_batch")  # fmt: skip


@pytest.mark.rule(
    lesson="07",
    section="2. Weighted cross-entropy against focal loss",
    text="the Trainer then divides it by the accumulation steps (exact when the micro-batches are the same size, "
    "section 5).",
    covers=["uneven last micro-batch 4, 4, 2", "uneven last micro-batch 3, 3, 3, 1", "even split 5 x 2"],
)
@pytest.mark.rule(
    lesson="07",
    section="5. Gradient accumulation and several processes",
    text="Cases 3 and 4 average the micro-batches' means: exact only when every micro-batch of a step holds as "
    "many reviews.",
    covers=["uneven last micro-batch 4, 4, 2", "uneven last micro-batch 3, 3, 3, 1", "even split 5 x 2",
            "accumulation 2, 3 and 4", "own mean", "the stock classifier's own loss"],
)  # fmt: skip
@pytest.mark.rule(
    lesson="07",
    section="Recap",
    text="A micro-batch mean with `loss_is_scaled_for_ga = False` is exact only on equal micro-batches",
    covers=["uneven last micro-batch 4, 4, 2", "uneven last micro-batch 3, 3, 3, 1", "even split 5 x 2"],
)
@pytest.mark.parametrize("split", list(SPLITS), ids=list(SPLITS))
@pytest.mark.parametrize("recipe", MEAN_RECIPES)
def test_the_mean_recipes_are_exact_on_equal_micro_batches_only(recipe: str, split: str) -> None:
    from helpers.lessons.lesson_07 import LOSS_SCALING_RECIPES

    trainer_class, keywords, _ = LOSS_SCALING_RECIPES[recipe]
    measured = ratio(trainer_class, lambda: fixtures.tiny_model(3), SPLITS[split], **keywords)
    assert exact(measured) == (split == "5 x 2 (even)"), (recipe, split, measured)


@pytest.mark.rule(
    lesson="07",
    section="Recap",
    text="divide a sum by `num_items_in_batch` (times the processes in `compute_loss`), and make sure the count "
    "comes (a `forward` without `**kwargs` gets `None`).",
    covers=["uneven last micro-batch 4, 4, 2", "uneven last micro-batch 3, 3, 3, 1", "even split 5 x 2",
            "compute_loss_func", "a subclass's sum"],
)  # fmt: skip
@pytest.mark.rule(
    lesson="07",
    section="3. `compute_loss_func=`: a loss without a subclass",
    text="divide by `num_items_in_batch`, and nothing else.",
    covers=["uneven last micro-batch 4, 4, 2", "uneven last micro-batch 3, 3, 3, 1", "even split 5 x 2"],
)
@pytest.mark.parametrize("split", list(SPLITS), ids=list(SPLITS))
@pytest.mark.parametrize("recipe", SUM_RECIPES)
def test_the_sum_recipes_are_exact_on_every_split(recipe: str, split: str) -> None:
    from helpers.lessons.lesson_07 import LOSS_SCALING_RECIPES

    trainer_class, keywords, _ = LOSS_SCALING_RECIPES[recipe]
    measured = ratio(trainer_class, lambda: fixtures.tiny_model(3), SPLITS[split], **keywords)
    assert exact(measured), (recipe, split, measured)


@pytest.mark.rule(
    lesson="07",
    section="5. Gradient accumulation and several processes",
    text="The stock model at accumulation 4 logs a loss **4 times** too large, and so is its SGD step",
    covers=["accumulation 2 and 4 on even splits", "uneven last micro-batch 4, 4, 2 (about 3 times, not exactly)"],
)
def test_the_stock_classifier_is_k_times_too_large() -> None:
    from transformers import Trainer

    from helpers.trainers import one_sgd_step

    rows, stock = fixtures.random_ids(8, seed=5), lambda: fixtures.tiny_model(3)
    whole = one_sgd_step(Trainer, stock, rows, 8, 1)
    for k in (2, 4):
        split = one_sgd_step(Trainer, stock, rows, 8 // k, k)
        assert np.allclose(split / whole, k, rtol=1e-3), (k, split / whole)
    uneven = ratio(Trainer, stock, SPLITS["4 x 3 (4, 4, 2)"])
    assert 2 < uneven[1] < 4 and not np.isclose(uneven[1], 3, rtol=1e-3), uneven  # near k, not exactly k


# --- sections 1 and 4, and the recap's other bullets -----------------------------------------------------------------


@pytest.mark.rule(
    lesson="07",
    section="Recap",
    text="Override `compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None)`; return "
    "`(loss, outputs)` when evaluation asks with `return_outputs=True`.",
    covers=["accumulation 2", "forward without **kwargs", "evaluation"],
)
@pytest.mark.rule(
    lesson="07",
    section="1. The contract of `compute_loss`",
    text="In evaluation it gets `return_outputs=True` and must return **`(loss, outputs)`**",
    covers=["accumulation 2", "forward without **kwargs", "forward with **kwargs", "a loss alone: evaluate() fails"],
)
@pytest.mark.rule(
    lesson="07",
    section="1. The contract of `compute_loss`",
    text="Ignore `return_outputs` and evaluation breaks, not training.",
    covers=["accumulation 2", "forward without **kwargs", "forward with **kwargs"],
)
@pytest.mark.parametrize("make_model", [NoKwargsClassifier, KwargsClassifier], ids=["no kwargs", "kwargs"])
def test_ignoring_return_outputs_breaks_evaluation_not_training(make_model: Any) -> None:
    from transformers import Trainer

    class LossOnly(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: ANN001, ANN201
            return model(**inputs).loss

    class Both(LossOnly):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: ANN001, ANN201
            outputs = model(**inputs)
            return (outputs.loss, outputs) if return_outputs else outputs.loss

    settings = dict(per_device_train_batch_size=4, gradient_accumulation_steps=2, max_steps=2)
    data = fixtures.random_ids(16, seed=5)
    for trainer_class in (LossOnly, Both):
        trainer = fixtures.trainer(settings, model=make_model(), trainer_class=trainer_class, train_dataset=data)
        trainer.train()
        assert trainer.state.global_step == 2
    with pytest.raises((TypeError, ValueError)):  # the Trainer unpacks a 0-d tensor as (loss, outputs)
        fixtures.trainer(settings, model=make_model(), trainer_class=LossOnly).evaluate(fixtures.random_ids(4))
    assert "eval_loss" in fixtures.trainer(settings, model=make_model(), trainer_class=Both).evaluate(
        fixtures.random_ids(4)
    )


@pytest.mark.rule(
    lesson="07",
    section="Recap",
    text="`compute_loss_func=` silently wins over `label_smoothing_factor`",
    covers=["accumulation 2", "forward without **kwargs", "the stock classifier", "evaluation"],
)
@pytest.mark.parametrize("make_model", [NoKwargsClassifier, lambda: fixtures.tiny_model(3)], ids=["no kwargs", "stock"])
def test_compute_loss_func_wins_over_label_smoothing(make_model: Any) -> None:
    import torch.nn.functional as F

    def plain(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> Any:
        count = labels.numel() if num_items_in_batch is None else num_items_in_batch
        return F.cross_entropy(outputs.logits, labels, reduction="sum") / count

    base = dict(per_device_train_batch_size=4, gradient_accumulation_steps=2, max_steps=2, logging_steps=1)
    data, held_out = fixtures.random_ids(16, seed=5), fixtures.random_ids(8, seed=6)
    logs = {}
    for name, settings, keywords in (
        ("both", base | dict(label_smoothing_factor=0.1), dict(compute_loss_func=plain)),
        ("func", base, dict(compute_loss_func=plain)),
        ("smoothing", base | dict(label_smoothing_factor=0.1), {}),
    ):
        model = make_model()
        if not hasattr(model, "config"):
            from transformers import PreTrainedConfig

            model.config = PreTrainedConfig()  # label smoothing reads model.config
        trainer = fixtures.trainer(settings, model=model, train_dataset=data, **keywords)
        trainer.train()
        logs[name] = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
        logs[name].append(trainer.evaluate(held_out)["eval_loss"])
    assert np.allclose(logs["both"], logs["func"], rtol=1e-6)
    assert not np.allclose(logs["both"], logs["smoothing"], rtol=1e-4)


@pytest.mark.rule(
    lesson="07",
    section="4. A multi-task loss",
    text="by default (`remove_unused_columns=True`) the Trainer drops every column that `model.forward` does not "
    "name. The fix is `remove_unused_columns=False`",
    covers=["forward without **kwargs", "forward with **kwargs (still dropped)", "accumulation 2"],
)
@pytest.mark.rule(
    lesson="07",
    section="Recap",
    text="a loss that needs another column needs `remove_unused_columns=False`.",
    covers=["forward without **kwargs", "forward with **kwargs (still dropped)", "accumulation 2"],
)
@pytest.mark.parametrize("make_model", [NoKwargsClassifier, KwargsClassifier], ids=["no kwargs", "kwargs"])
def test_another_column_needs_remove_unused_columns_false(make_model: Any) -> None:
    from transformers import Trainer

    class NeedsWeight(Trainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: ANN001, ANN201
            weight = inputs.pop("row_weight")  # KeyError when the column was dropped
            outputs = model(**inputs)
            loss = outputs.loss * weight.float().mean()
            return (loss, outputs) if return_outputs else loss

    data = fixtures.random_ids(16, seed=5)
    data = data.add_column("row_weight", [1.0 + i % 2 for i in range(len(data))])
    settings = dict(per_device_train_batch_size=4, gradient_accumulation_steps=2, max_steps=1)
    dropped = fixtures.trainer(settings, model=make_model(), trainer_class=NeedsWeight, train_dataset=data)
    with pytest.raises(KeyError, match="row_weight"):
        dropped.train()
    kept = fixtures.trainer(
        settings | dict(remove_unused_columns=False), model=make_model(), trainer_class=NeedsWeight, train_dataset=data
    )
    kept.train()
    assert kept.state.global_step == 1


@pytest.mark.rule(
    lesson="07",
    section="2. Weighted cross-entropy against focal loss",
    text="for a rare class, start from the weight.",
    covers=["seeds 0, 1, 2", "imbalance 1 : 9 and 1 : 5", "synthetic features (another data set)"],
)
@pytest.mark.rule(
    lesson="07",
    section="Recap",
    text="For a rare class the default loss misses, a class weight lifts recall and F1; focal loss alone does not.",
    covers=["seeds 0, 1, 2", "imbalance 1 : 9 and 1 : 5", "synthetic features (another data set)",
            "a class the default loss finds (F1 falls: the sentence's condition)"],
)  # fmt: skip
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("negatives", [9, 5], ids=["1 : 9", "1 : 5"])
@pytest.mark.parametrize("shift", [0.15, 0.6], ids=["missed", "found"])
def test_a_class_weight_lifts_recall_and_f1_focal_loss_does_not(seed: int, negatives: int, shift: float) -> None:
    from datasets import Dataset
    from sklearn.metrics import f1_score, recall_score
    from transformers import Trainer, set_seed

    from helpers.lessons.lesson_07 import WeightedLossTrainer, focal_loss

    class Head(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(16, 2)

        def forward(self, features: Any, labels: Any = None) -> Any:
            from transformers.modeling_outputs import SequenceClassifierOutput

            logits = self.linear(features)
            loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else None
            return SequenceClassifierOutput(loss=loss, logits=logits)

    class Focal(Trainer):
        loss_is_scaled_for_ga = False

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: ANN001, ANN201
            labels = inputs.pop("labels")
            outputs = model(**inputs)
            loss = focal_loss(outputs.logits, labels, gamma=2.0)
            return (loss, outputs) if return_outputs else loss

    generator = torch.Generator().manual_seed(seed)

    def rows(positives: int) -> Dataset:  # overlapping classes: the rare one is hard to find
        labels = torch.tensor([1] * positives + [0] * (negatives * positives))
        features = torch.randn(len(labels), 16, generator=generator) + labels[:, None] * shift
        return Dataset.from_dict({"features": features.tolist(), "labels": labels.tolist()})

    train, held_out = rows(64), rows(64)
    settings = dict(per_device_train_batch_size=64, num_train_epochs=10, learning_rate=1e-2, logging_steps=1000)
    scores = {}
    for name, trainer_class, keywords in (
        ("default", Trainer, {}),
        ("weighted", WeightedLossTrainer, dict(class_weights=torch.tensor([1.0, float(negatives)]))),
        ("focal", Focal, {}),
    ):
        set_seed(seed)
        trainer = fixtures.trainer(settings, model=Head(), trainer_class=trainer_class, train_dataset=train, **keywords)
        trainer.train()
        predicted = trainer.predict(held_out).predictions.argmax(-1)
        truth = np.array(held_out["labels"])
        scores[name] = (recall_score(truth, predicted, zero_division=0), f1_score(truth, predicted, zero_division=0))
    default, weighted, focal = scores["default"], scores["weighted"], scores["focal"]
    assert weighted[0] >= default[0], scores  # the weight never lowers recall
    if shift == 0.6:  # the default loss already finds most positives: the weight trades F1 for recall
        assert default[0] > 0.5 and weighted[1] < default[1], scores
        return
    assert default[0] < 0.5 and weighted[0] > default[0] + 0.2 and weighted[1] > default[1], scores
    assert focal[0] - default[0] < (weighted[0] - default[0]) / 2, scores  # focal alone: far less


@pytest.mark.rule(
    lesson="07",
    section="Recap",
    text="Log a loss's parts by collecting them in `compute_loss` and merging their means in `log`.",
    covers=["accumulation 1 and 2", "a log every 2 steps", "evaluation", "uneven last step (the parts are "
            "means over micro-batches; the logged loss a mean over steps)"],
)  # fmt: skip
@pytest.mark.parametrize(
    ("rows", "accumulation"), [(16, 1), (16, 2), (10, 2)], ids=["k 1", "k 2", "k 2, last step of 1 micro-batch"]
)
def test_loss_parts_merged_in_log_are_the_means_of_the_micro_batches(rows: int, accumulation: int) -> None:
    from helpers.lessons.lesson_07 import LossPartsTrainer
    from helpers.trainers import WithLengthHead

    data = fixtures.random_ids(rows, seed=5)
    data = data.add_column("length_target", [float(i % 3) - 1.0 for i in range(rows)])
    seen: list[dict[str, float]] = []

    class Noting(LossPartsTrainer):
        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: ANN001, ANN201
            if model.training:
                outputs, parts = self.loss_parts(model, dict(inputs))
                seen.append({name: float(value) for name, value in parts.items()})
            return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    settings = dict(per_device_train_batch_size=2, gradient_accumulation_steps=accumulation, num_train_epochs=1)
    settings |= dict(logging_steps=2, remove_unused_columns=False, learning_rate=0.0)  # lr 0: the parts repeat
    trainer = fixtures.trainer(
        settings, model=WithLengthHead(fixtures.tiny_model(3)), trainer_class=Noting, train_dataset=data
    )
    trainer.train()
    logs = [log for log in trainer.state.log_history if "loss_main" in log]
    start = 0
    for log in logs:  # each log: the mean over the micro-batches since the previous one
        end = min(log["step"] * accumulation, len(seen))
        for name in ("loss_main", "loss_aux"):
            mean = np.mean([part[name] for part in seen[start:end]])
            assert log[name] == pytest.approx(mean, rel=1e-5), (log["step"], name)
        start = end
    for log in logs if rows % (2 * accumulation) == 0 else logs[:1]:  # steps of equal micro-batches
        assert log["loss_main"] + log["loss_aux"] == pytest.approx(log["loss"], rel=1e-5)
    metrics = trainer.evaluate(data)  # batches of 8: 8 + 8, or 8 + 2
    assert {"eval_loss_main", "eval_loss_aux"} <= set(metrics)
    added = metrics["eval_loss_main"] + metrics["eval_loss_aux"]
    if rows % 8 == 0:
        assert added == pytest.approx(metrics["eval_loss"], rel=1e-5)
    else:  # eval_loss weighs each review, the parts each batch: an uneven last batch parts them
        assert added != pytest.approx(metrics["eval_loss"], rel=1e-3)


@pytest.mark.rule(
    lesson="07",
    section="6. Logging the parts of a loss",
    text="do not end their names in `_loss`: the progress table takes its evaluation prefix from the last such key.",
    covers=["the real progress table (NotebookProgressCallback) during training", "trainer.evaluate() after training",
            "two named evaluation sets (prefixes eval_a, eval_b)", "parts named loss_* (kept apart) and *_loss"],
)  # fmt: skip
@pytest.mark.parametrize("names", [("loss_main", "loss_aux"), ("main_loss", "aux_loss")], ids=["loss_*", "*_loss"])
def test_parts_ending_in_loss_put_the_timings_into_the_progress_table(names: tuple[str, str]) -> None:
    from transformers.utils.notebook import NotebookProgressCallback

    from helpers.lessons.lesson_07 import LossPartsTrainer
    from helpers.trainers import WithLengthHead

    rows_written: list[dict[str, Any]] = []

    class TableRows(NotebookProgressCallback):  # the table the Trainer draws in a notebook; its rows recorded
        def on_evaluate(self, args, state, control, metrics=None, **kwargs):  # noqa: ANN001, ANN201
            if self.training_tracker is None:  # trainer.evaluate() after training: a table of its own
                self.training_tracker = SimpleNamespace(remove_child=lambda: None)
            self.training_tracker.write_line = rows_written.append
            super().on_evaluate(args, state, control, metrics=metrics, **kwargs)

    class Renamed(LossPartsTrainer):
        def loss_parts(self, model, inputs):  # noqa: ANN001, ANN201
            outputs, parts = super().loss_parts(model, inputs)
            return outputs, dict(zip(names, parts.values(), strict=True))

    data = fixtures.random_ids(8, seed=5)
    data = data.add_column("length_target", [float(i % 3) - 1.0 for i in range(8)])
    settings = dict(per_device_train_batch_size=4, max_steps=2, eval_strategy="steps", eval_steps=2)
    settings |= dict(logging_steps=1, remove_unused_columns=False, per_device_eval_batch_size=8)
    trainer = fixtures.trainer(
        settings, model=WithLengthHead(fixtures.tiny_model(3)), trainer_class=Renamed, train_dataset=data,
        eval_dataset={"a": data, "b": data},
    )  # fmt: skip
    trainer.add_callback(TableRows())
    trainer.train()
    assert len(rows_written) == 2  # one evaluation row per set
    for row, prefix in zip(rows_written, "AB", strict=True):
        parts = {f"{prefix} " + " ".join(word.capitalize() for word in name.split("_")) for name in names}
        assert parts | {f"{prefix} Loss"} <= set(row), row  # the parts are columns either way
        timings = {f"{prefix} Runtime", f"{prefix} Samples Per Second", f"{prefix} Steps Per Second"}
        if names[0].startswith("loss_"):  # the prefix came from eval_<set>_loss: the timings were dropped
            assert not timings & set(row), row
        else:  # the prefix came from eval_<set>_<part>_loss: the timings became columns
            assert timings <= set(row), row
    metrics = trainer.evaluate(data)  # after training: one set, prefix eval
    assert f"eval_{names[0]}" in metrics and len(rows_written) == 3
    assert ("Runtime" in rows_written[2]) == names[0].endswith("_loss"), rows_written[2]


@pytest.mark.rule(
    lesson="07",
    section="3. `compute_loss_func=`",
    text="Put the smoothing into your function: `F.cross_entropy(..., label_smoothing=0.1)`.",
    covers=["10 rows as 10 x 1: the loss and gradient of label_smoothing_factor=0.1 on the stock classifier",
            "uneven last micro-batch 4, 4, 2 and 3, 3, 3, 1: the same step as 10 x 1",
            "forward without **kwargs and the stock classifier"],
)  # fmt: skip
@pytest.mark.parametrize("make_model", [NoKwargsClassifier, lambda: fixtures.tiny_model(3)], ids=["no kwargs", "stock"])
def test_smoothing_inside_compute_loss_func_is_label_smoothing_on_any_split(make_model: Any) -> None:
    import torch.nn.functional as F
    from transformers import PreTrainedConfig, Trainer, set_seed

    from helpers.trainers import one_sgd_step

    def smoothed(outputs: Any, labels: Any, num_items_in_batch: Any = None) -> Any:
        loss = F.cross_entropy(outputs.logits, labels, reduction="sum", label_smoothing=0.1)
        return loss / num_items_in_batch

    rows = fixtures.random_ids(10, seed=5)
    whole = one_sgd_step(Trainer, make_model, rows, 10, 1, compute_loss_func=smoothed)
    for split in ("4 x 3 (4, 4, 2)", "3 x 4 (3, 3, 3, 1)"):
        measured = one_sgd_step(Trainer, make_model, rows, *SPLITS[split], compute_loss_func=smoothed) / whole
        assert exact(measured), (split, measured)
    set_seed(0)
    model = make_model()
    if not hasattr(model, "config"):
        model.config = PreTrainedConfig()  # label smoothing reads model.config
    settings = dict(per_device_train_batch_size=10, max_steps=1, optim="sgd", max_grad_norm=0.0, learning_rate=0.01)
    settings |= dict(logging_steps=1, seed=0, label_smoothing_factor=0.1)
    stock = fixtures.trainer(settings, model=model, train_dataset=rows)
    stock.train()
    log = stock.state.log_history[0]
    assert np.allclose([log["loss"], log["grad_norm"]], whole, rtol=1e-5), (log, whole)
    plain = one_sgd_step(Trainer, make_model, rows, 10, 1)
    assert not np.allclose(plain, whole, rtol=1e-3)  # the smoothing shows


@pytest.mark.rule(
    lesson="07",
    section="3. `compute_loss_func=`",
    text="It suits a loss of the logits and labels alone; one that needs other inputs (section 4) needs a subclass.",
    covers=["an extra column kept by remove_unused_columns=False: it reaches forward, never the function",
            "forward with **kwargs (it takes the column and drops it)", "accumulation 2, evaluation"],
)  # fmt: skip
def test_compute_loss_func_gets_the_outputs_and_labels_only() -> None:
    calls: list[tuple[tuple[str, ...], tuple[str, ...]]] = []

    def noting(outputs: Any, labels: Any, **kwargs: Any) -> Any:
        calls.append((tuple(outputs.keys()), tuple(kwargs)))
        return torch.nn.functional.cross_entropy(outputs.logits, labels, reduction="sum") / kwargs["num_items_in_batch"]

    data = fixtures.random_ids(8, seed=5)
    data = data.add_column("row_weight", [1.0 + i % 2 for i in range(len(data))])
    settings = dict(per_device_train_batch_size=2, gradient_accumulation_steps=2, max_steps=1)
    trainer = fixtures.trainer(
        settings | dict(remove_unused_columns=False), model=KwargsClassifier(), train_dataset=data,
        compute_loss_func=noting,
    )  # fmt: skip
    trainer.train()
    trainer.evaluate(data)
    assert calls and all(kwargs == ("num_items_in_batch",) for _, kwargs in calls), calls
    assert all("row_weight" not in keys for keys, _ in calls), calls


@pytest.mark.rule(
    lesson="07",
    section="5. Gradient accumulation and several processes",
    text="Under AdamW, which divides each gradient by its running scale, the factor mostly cancels, clipping "
    "included; SGD and the logs show it.",
    covers=["the stock classifier, 8 rows as 2 x 4 against 8 x 1, 3 updates: the logged loss and grad_norm 4 times",
            "AdamW: the weights move alike (within 2 %), unclipped, clipped at 1.0 and clipped between the two norms",
            "SGD: 4 times as far; clipped between the two norms (only the 2 x 4 run clipped): 2.2 times as far"],
)  # fmt: skip
def test_adamw_hides_the_stock_models_factor_sgd_and_the_logs_show_it() -> None:
    from transformers import set_seed

    rows = fixtures.random_ids(24, seed=5)

    def run(batch: int, accumulation: int, **settings: Any) -> tuple[torch.Tensor, dict[str, float]]:
        set_seed(0)
        model = fixtures.tiny_model(3)
        before = torch.cat([p.detach().flatten().clone() for p in model.parameters()])
        keywords = dict(per_device_train_batch_size=batch, gradient_accumulation_steps=accumulation, max_steps=3)
        keywords |= dict(logging_steps=1, learning_rate=1e-3, seed=0) | settings
        trainer = fixtures.trainer(keywords, model=model, train_dataset=rows)
        trainer.train()
        moved = torch.cat([p.detach().flatten() for p in model.parameters()]) - before
        return moved, trainer.state.log_history[0]

    _, whole_log = run(8, 1, optim="sgd", max_grad_norm=0.0)
    between = 2 * whole_log["grad_norm"]  # above the 8 x 1 run's norms, below the 2 x 4 run's (4 times)
    cases = [("adamw_torch", 0.0, 1.0), ("adamw_torch", 1.0, 1.0), ("adamw_torch", between, 1.0)]
    cases += [("sgd", 0.0, 4.0), ("sgd", between, None)]
    for optim, clip, want in cases:
        split, split_log = run(2, 4, optim=optim, max_grad_norm=clip)
        whole, whole_log = run(8, 1, optim=optim, max_grad_norm=clip)
        assert split_log["loss"] / whole_log["loss"] == pytest.approx(4.0, rel=1e-4)  # the logs show it
        assert split_log["grad_norm"] / whole_log["grad_norm"] == pytest.approx(4.0, rel=1e-4)
        moved = float(split.norm() / whole.norm())
        if want is None:  # clipping acts on the 2 x 4 run's 4-times norm only: its step is neither alike nor 4 x
            assert 1.5 < moved < 3.5, (optim, clip, moved)
        else:
            assert moved == pytest.approx(want, rel=0.02), (optim, clip, moved)


@pytest.mark.rule(
    lesson="07",
    section="The pattern",
    text="Copy this shape for any per-review loss of your own.",
    covers=["focal loss per review (gamma 2) and cross-entropy with label smoothing 0.1 in the pattern's shape",
            "uneven last micro-batch 4, 4, 2 and 3, 3, 3, 1; even 5 x 2", "forward without **kwargs and the stock "
            "classifier", "a per-micro-batch mean in the same place: off on uneven splits (why per-review)"],
)  # fmt: skip
@pytest.mark.parametrize("make_model", [NoKwargsClassifier, lambda: fixtures.tiny_model(3)], ids=["no kwargs", "stock"])
def test_the_patterns_shape_holds_for_other_per_review_losses(make_model: Any) -> None:
    import torch.nn.functional as F
    from transformers import Trainer

    from helpers.lessons.lesson_07 import sum_over_count

    def focal(logits: Any, labels: Any) -> Any:
        log_p = F.log_softmax(logits.float(), dim=-1).gather(1, labels[:, None])[:, 0]
        return -((1 - log_p.exp()) ** 2) * log_p

    def smoothed(logits: Any, labels: Any) -> Any:
        return F.cross_entropy(logits, labels, reduction="none", label_smoothing=0.1)

    def shaped(per_review: Any, mean_instead: bool = False) -> type:
        class Shaped(Trainer):  # the pattern's shape, another per-review loss
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.model_accepts_loss_kwargs = True

            def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # noqa: ANN001, ANN201
                labels = inputs.pop("labels")
                outputs = model(**inputs)
                losses = per_review(outputs.logits, labels)
                loss = losses.mean() if mean_instead else sum_over_count(losses, num_items_in_batch)
                if num_items_in_batch is not None and self.args.average_tokens_across_devices:
                    loss = loss * self.accelerator.num_processes
                return (loss, outputs) if return_outputs else loss

        return Shaped

    for loss in (focal, smoothed):
        for split in SPLITS:
            assert exact(ratio(shaped(loss), make_model, SPLITS[split])), (loss.__name__, split)
    assert not exact(ratio(shaped(focal, mean_instead=True), make_model, SPLITS["4 x 3 (4, 4, 2)"]))
