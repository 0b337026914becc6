"""helpers.plots.evaluation: the confusion matrix and ROC plots are labelled and refuse bad input."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.plots.evaluation import plot_confusion_matrix  # noqa: E402

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
