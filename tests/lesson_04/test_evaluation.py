"""Lesson 04's instruments: the silent evaluation (helpers.trainers.evaluate_with) and its memory measurement
(helpers.performance.peak_extra_mib) on a tiny model; the curves read from log_history with the best epoch marked and
the confusion matrix (helpers.plots.evaluation); clear errors for bad input."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from transformers.modeling_outputs import SequenceClassifierOutput  # noqa: E402

from helpers.performance import can_measure_host, peak_extra_mib, peak_text  # noqa: E402
from helpers.plots.evaluation import plot_confusion_matrix, plot_eval_curves  # noqa: E402
from helpers.trainers import evaluate_with  # noqa: E402


class Tiny(torch.nn.Module):
    main_input_name = "x"

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 2)

    def forward(self, x, labels=None):
        logits = self.linear(x)
        loss = None if labels is None else torch.nn.functional.cross_entropy(logits, labels)
        return SequenceClassifierOutput(loss=loss, logits=logits)


def data(n: int = 20) -> Dataset:
    rng = np.random.default_rng(0)
    return Dataset.from_dict(
        {"x": rng.normal(size=(n, 3)).astype("float32").tolist(), "labels": [i % 2 for i in range(n)]}
    )


def test_evaluate_with_calls_fn_once_with_all_rows(capsys):
    torch.manual_seed(0)
    seen = []

    def fn(prediction):
        seen.append(prediction)
        return {"rows": float(len(prediction.label_ids))}

    metrics = evaluate_with(fn, Tiny(), data(20), per_device_eval_batch_size=8)
    assert len(seen) == 1 and metrics["eval_rows"] == 20.0
    assert seen[0].predictions.shape == (20, 2)
    assert "eval_loss" in metrics
    assert "{'eval_" not in capsys.readouterr().out  # nothing printed


def test_evaluate_with_preprocess_shrinks_predictions():
    seen = []

    def fn(prediction):
        seen.append(prediction.predictions)
        return {}

    evaluate_with(fn, Tiny(), data(10), preprocess=lambda logits, labels: logits.argmax(-1))
    assert seen[0].shape == (10,)


def test_evaluate_with_rejects_unknown_setting():
    with pytest.raises(TypeError):
        evaluate_with(None, Tiny(), data(4), not_a_field=1)


def test_peak_extra_mib_sees_a_large_allocation():
    result, host, gpu = peak_extra_mib(lambda: np.ones(64 * 2**20 // 8).sum())
    assert result == 64 * 2**20 // 8
    if can_measure_host():
        assert host is not None and host > 50  # 64 MiB held during the call
    else:
        assert host is None
    assert gpu is None or gpu >= 0


def test_peak_extra_mib_rejects_non_callable():
    with pytest.raises(TypeError, match="function"):
        peak_extra_mib(3)


def test_peak_text():
    assert peak_text(476.6, None) == "peak RSS +477 MiB"
    assert peak_text(None, 12.0) == "RSS not measured | peak GPU 12 MiB"


ONE_SET = [
    {"epoch": 1.0, "loss": 0.7},
    {"epoch": 1.0, "eval_f1": 0.5, "eval_accuracy": 0.6},
    {"epoch": 2.0, "eval_f1": 0.8, "eval_accuracy": 0.7},
    {"epoch": 3.0, "eval_f1": 0.7, "eval_accuracy": 0.75},
]
TWO_SETS = [
    {"epoch": 1.0, "eval_short_f1": 0.9},
    {"epoch": 1.0, "eval_long_f1": 0.4},
    {"epoch": 2.0, "eval_short_f1": 0.5},
    {"epoch": 2.0, "eval_long_f1": 0.6},
]


def test_lines_and_best_epoch() -> None:
    figure = plot_eval_curves(ONE_SET, ["eval_f1", "eval_accuracy"], "eval_f1")
    ax = figure.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert list(lines["eval_f1 (metric_for_best_model)"].get_ydata()) == [0.5, 0.8, 0.7]
    assert list(lines["eval_accuracy"].get_xdata()) == [1.0, 2.0, 3.0]
    assert list(lines["best checkpoint (loaded)"].get_xdata()) == [2.0, 2.0]
    plt.close(figure)


def test_each_set_read_from_its_own_entries() -> None:
    figure = plot_eval_curves(TWO_SETS, ["eval_long_f1", "eval_short_f1"], "eval_long_f1", title="Two sets")
    lines = {line.get_label(): line for line in figure.axes[0].get_lines()}
    assert list(lines["eval_short_f1"].get_ydata()) == [0.9, 0.5]
    assert list(lines["best checkpoint (loaded)"].get_xdata()) == [2.0, 2.0]  # long, not short, decides
    plt.close(figure)


def test_missing_key_names_the_logged_ones() -> None:
    with pytest.raises(ValueError, match="eval_long_f1.*eval_short_f1"):
        plot_eval_curves(TWO_SETS, ["eval_f1"], "eval_long_f1")


LABELS = np.array([0, 0, 1, 1, 1, 0])
PREDICTED = np.array([0, 1, 1, 1, 0, 0])


def test_confusion_matrix_counts_and_labels() -> None:
    figure = plot_confusion_matrix(LABELS, PREDICTED, ["negative", "positive"])
    ax = figure.axes[0]
    assert ax.get_title() and ax.get_xlabel() == "predicted class"
    texts = sorted(text.get_text() for text in ax.texts)
    assert texts == ["1", "1", "2", "2"]
    plt.close(figure)


def test_confusion_matrix_normalized_rows() -> None:
    figure = plot_confusion_matrix(LABELS, PREDICTED, ["negative", "positive"], normalize=True)
    assert sorted(text.get_text() for text in figure.axes[0].texts) == ["0.33", "0.33", "0.67", "0.67"]
    plt.close(figure)


def test_confusion_matrix_bad_input() -> None:
    with pytest.raises(ValueError, match="argmax"):
        plot_confusion_matrix(LABELS, np.random.rand(6), ["negative", "positive"])
    with pytest.raises(ValueError, match="class_names"):
        plot_confusion_matrix(LABELS, PREDICTED + 1, ["negative", "positive"])
