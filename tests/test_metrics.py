"""helpers.metrics: the compute_metrics factory of lessons 06, 07 and the capstone (lesson 04 teaches the pattern)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from sklearn.metrics import f1_score, roc_auc_score
from transformers import EvalPrediction

from helpers.metrics import MetricsInputError, make_compute_metrics, softmax, split_predictions


def _binary_case(seed: int = 0, count: int = 40) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(count, 2)).astype(np.float32), rng.integers(0, 2, size=count)


def test_no_argument_call_gives_binary_metrics() -> None:
    logits, labels = _binary_case()
    metrics = make_compute_metrics()(EvalPrediction(predictions=logits, label_ids=labels))
    assert {"accuracy", "precision", "recall", "f1", "roc_auc", "average_precision"} <= set(metrics)
    predicted = logits.argmax(-1)
    assert metrics["accuracy"] == pytest.approx((predicted == labels).mean())
    assert metrics["f1"] == pytest.approx(f1_score(labels, predicted))
    assert metrics["roc_auc"] == pytest.approx(roc_auc_score(labels, softmax(logits)[:, 1]))
    assert all(isinstance(value, float) for value in metrics.values())


def test_tuple_predictions_use_the_first_element() -> None:
    logits, labels = _binary_case()
    plain = make_compute_metrics()(EvalPrediction(logits, labels))
    hidden = np.zeros((len(labels), 5, 3), dtype=np.float32)
    assert make_compute_metrics()(EvalPrediction((logits, hidden), labels)) == plain


def test_plain_pair_and_torch_tensors_are_accepted() -> None:
    logits, labels = _binary_case()
    plain = make_compute_metrics()(EvalPrediction(logits, labels))
    assert make_compute_metrics()((logits, labels)) == plain
    from_tensors = make_compute_metrics()(
        EvalPrediction(torch.from_numpy(logits).bfloat16().float(), torch.from_numpy(labels))
    )
    assert from_tensors["accuracy"] == plain["accuracy"]
    bf16 = make_compute_metrics()(EvalPrediction(torch.from_numpy(logits).bfloat16(), torch.from_numpy(labels)))
    assert set(bf16) == set(plain)


def test_class_ids_skip_probability_metrics_or_fail_clearly() -> None:
    logits, labels = _binary_case()
    ids = logits.argmax(-1)
    metrics = make_compute_metrics()(EvalPrediction(ids, labels))
    assert "roc_auc" not in metrics and metrics["accuracy"] == pytest.approx((ids == labels).mean())
    with pytest.raises(MetricsInputError, match="preprocess_logits_for_metrics"):
        make_compute_metrics(probability_metrics=True)(EvalPrediction(ids, labels))


def test_single_class_in_labels() -> None:
    logits, _ = _binary_case()
    labels = np.ones(len(logits), dtype=np.int64)
    metrics = make_compute_metrics()(EvalPrediction(logits, labels))
    assert math.isnan(metrics["roc_auc"]) and math.isnan(metrics["average_precision"])
    assert metrics["recall"] == pytest.approx((logits.argmax(-1) == 1).mean())
    never_positive = np.tile([5.0, -5.0], (len(labels), 1))
    zero = make_compute_metrics(zero_division=0.0)(EvalPrediction(never_positive, np.zeros(len(labels), int)))
    one = make_compute_metrics(zero_division=1.0)(EvalPrediction(never_positive, np.zeros(len(labels), int)))
    assert zero["precision"] == 0.0 and one["precision"] == 1.0


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_or_inf_logits_raise_a_clear_error(bad: float) -> None:
    logits, labels = _binary_case()
    logits[3, 1] = bad
    with pytest.raises(MetricsInputError, match="NaN or infinite"):
        make_compute_metrics()(EvalPrediction(logits, labels))


def test_multiclass_macro_and_weighted() -> None:
    rng = np.random.default_rng(1)
    logits, labels = rng.normal(size=(60, 4)), rng.integers(0, 4, size=60)
    predicted = logits.argmax(-1)
    auto = make_compute_metrics()(EvalPrediction(logits, labels))
    assert auto["f1"] == pytest.approx(f1_score(labels, predicted, average="macro", zero_division=0))
    both = make_compute_metrics(average=["macro", "weighted"])(EvalPrediction(logits, labels))
    assert both["f1_weighted"] == pytest.approx(f1_score(labels, predicted, average="weighted", zero_division=0))
    assert both["roc_auc"] == pytest.approx(roc_auc_score(labels, softmax(logits), multi_class="ovr"))
    with pytest.raises(MetricsInputError, match="binary"):
        make_compute_metrics(average="binary")(EvalPrediction(logits, labels))


def test_token_level_arrays_drop_ignore_index() -> None:
    rng = np.random.default_rng(2)
    logits, labels = rng.normal(size=(3, 5, 7)), rng.integers(0, 7, size=(3, 5))
    labels[:, -2:] = -100
    kept_labels, predicted, probabilities = split_predictions(logits, labels)
    assert kept_labels.shape == (9,) and probabilities is not None and probabilities.shape == (9, 7)
    assert (predicted == logits[:, :3].reshape(-1, 7).argmax(-1)).all()


def test_probabilities_input() -> None:
    logits, labels = _binary_case()
    from_logits = make_compute_metrics()(EvalPrediction(logits, labels))
    from_probabilities = make_compute_metrics(from_logits=False)(EvalPrediction(softmax(logits), labels))
    assert from_probabilities == pytest.approx(from_logits)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"average": "mean"}, "average"),
        ({"positive_label": -1}, "positive_label"),
        ({"zero_division": 2}, "zero_division"),
    ],
)
def test_bad_factory_arguments(kwargs: dict, match: str) -> None:
    with pytest.raises(MetricsInputError, match=match):
        make_compute_metrics(**kwargs)


def test_bad_inputs_say_what_to_do() -> None:
    logits, labels = _binary_case()
    with pytest.raises(MetricsInputError, match="label_names"):
        make_compute_metrics()(EvalPrediction(logits, None))
    with pytest.raises(MetricsInputError, match="shape"):
        make_compute_metrics()(EvalPrediction(logits[:10], labels))
    with pytest.raises(MetricsInputError, match="score column"):
        make_compute_metrics()(EvalPrediction(logits[:, :1], labels))
    with pytest.raises(MetricsInputError, match="EvalPrediction"):
        make_compute_metrics()("not a prediction")


def test_several_averages_at_once_are_suffixed() -> None:
    logits, labels = _binary_case(seed=3)
    predicted = logits.argmax(-1)
    three = make_compute_metrics(average=["binary", "macro", "weighted"])(EvalPrediction(logits, labels))
    for average in ("binary", "macro", "weighted"):
        assert three[f"f1_{average}"] == pytest.approx(f1_score(labels, predicted, average=average, zero_division=0))
    assert "f1" not in three


def test_roc_auc_reads_the_probabilities_not_the_argmax() -> None:
    logits, labels = _binary_case(seed=5, count=200)
    logits[:, 1] += 0.8 * labels  # scores that rank positives higher, but not perfectly
    metrics = make_compute_metrics()(EvalPrediction(logits, labels))
    from_argmax = roc_auc_score(labels, logits.argmax(-1))
    assert metrics["roc_auc"] == pytest.approx(roc_auc_score(labels, softmax(logits)[:, 1]))
    assert metrics["roc_auc"] > from_argmax
