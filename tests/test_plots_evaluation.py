"""helpers.plots.evaluation: the confusion matrix and ROC plots are labelled and refuse bad input."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.plots.evaluation import plot_confusion_matrix, plot_roc  # noqa: E402

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


def test_roc_has_auc_in_legend_and_rejects_one_class() -> None:
    scores = np.array([0.1, 0.6, 0.8, 0.7, 0.4, 0.2])
    figure = plot_roc({"validation": (LABELS, scores)})
    legend = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    assert legend[0].startswith("validation (AUC 0.889") and "chance" in legend[1]
    plt.close(figure)
    with pytest.raises(ValueError, match="one class"):
        plot_roc({"x": (np.ones(4, dtype=int), np.random.rand(4))})
    with pytest.raises(ValueError, match="positive-class score"):
        plot_roc({"x": (LABELS, np.random.rand(6, 2))})
