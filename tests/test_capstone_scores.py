"""helpers.capstone scores the held-out split with scikit-learn itself (hand-written helpers never import the
lessons' exported code), and agrees with lesson 04's metrics, which the lesson's text compares it with."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from transformers import EvalPrediction

from helpers.capstone import held_out_metrics
from helpers.metrics import make_compute_metrics


@pytest.mark.parametrize("seed", range(5))
def test_the_capstone_scores_agree_with_lesson_04s_metrics(seed: int) -> None:
    rng = np.random.default_rng(seed)
    labels = (rng.random(60) < 0.1).astype(int)
    logits = rng.normal(size=(60, 2))
    ours = held_out_metrics(labels, logits.argmax(-1))
    lesson = make_compute_metrics()(EvalPrediction(logits, labels))
    for name in ("accuracy", "precision", "recall", "f1"):
        assert ours[name] == pytest.approx(lesson[name]), name
    assert ours["predicted_positive"] == int((logits.argmax(-1) == 1).sum())


def test_a_model_that_never_says_positive_scores_zero_without_a_warning() -> None:
    labels = np.array([0] * 9 + [1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scores = held_out_metrics(labels, np.zeros(10, dtype=int))
    assert scores["f1"] == scores["precision"] == 0.0 and scores["accuracy"] == 0.9
