"""The course's evaluate modules load offline by path, agree with scikit-learn, and combine."""

from __future__ import annotations

import evaluate
import pytest
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score

from helpers.evaluate_metrics import METRIC_NAMES, metric_path

PREDICTIONS = [0, 1, 1, 0, 1, 1, 0, 0]
REFERENCES = [0, 1, 0, 0, 1, 0, 1, 0]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_EVALUATE_OFFLINE", "1")


@pytest.mark.parametrize(
    "name, expected",
    [
        ("course_accuracy", {"accuracy": accuracy_score(REFERENCES, PREDICTIONS)}),
        ("course_precision", {"precision": precision_score(REFERENCES, PREDICTIONS)}),
        ("course_recall", {"recall": recall_score(REFERENCES, PREDICTIONS)}),
        ("course_f1", {"f1": f1_score(REFERENCES, PREDICTIONS)}),
    ],
)
def test_each_module_matches_sklearn(name: str, expected: dict[str, float]) -> None:
    module = evaluate.load(metric_path(name))
    assert module.compute(predictions=PREDICTIONS, references=REFERENCES) == pytest.approx(expected)


def test_combine_gives_one_dict_and_accepts_batches() -> None:
    combined = evaluate.combine([metric_path(name) for name in METRIC_NAMES])
    for start in range(0, len(PREDICTIONS), 3):
        combined.add_batch(predictions=PREDICTIONS[start : start + 3], references=REFERENCES[start : start + 3])
    result = combined.compute()
    assert set(result) == {"accuracy", "precision", "recall", "f1"}
    assert result["f1"] == pytest.approx(f1_score(REFERENCES, PREDICTIONS))


def test_macro_average_is_passed_through() -> None:
    module = evaluate.load(metric_path("course_f1"))
    result = module.compute(predictions=[0, 2, 1, 2], references=[0, 1, 1, 2], average="macro")
    assert result["f1"] == pytest.approx(f1_score([0, 1, 1, 2], [0, 2, 1, 2], average="macro"))


def test_unknown_name_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="course_accuracy"):
        metric_path("accuracy")
