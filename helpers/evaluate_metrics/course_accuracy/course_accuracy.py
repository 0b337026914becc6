"""Accuracy as an ``evaluate`` module that loads offline: ``evaluate.load(metric_path("course_accuracy"))``."""

import evaluate
from sklearn.metrics import accuracy_score

from helpers.evaluate_metrics import classification_info


class CourseAccuracy(evaluate.Metric):
    """The fraction of predictions equal to the reference."""

    def _info(self):
        return classification_info("Accuracy: the fraction of correct predictions (scikit-learn).")

    def _compute(self, predictions, references, sample_weight=None):
        return {"accuracy": float(accuracy_score(references, predictions, sample_weight=sample_weight))}
