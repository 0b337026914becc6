"""Precision as an ``evaluate`` module that loads offline: ``evaluate.load(metric_path("course_precision"))``."""

import evaluate
from sklearn.metrics import precision_score

from helpers.evaluate_metrics import classification_info


class CoursePrecision(evaluate.Metric):
    """Precision (scikit-learn); ``average``, ``pos_label`` and ``zero_division`` go to ``compute``."""

    def _info(self):
        return classification_info("Precision for class ids (scikit-learn's precision_score).")

    def _compute(self, predictions, references, average="binary", pos_label=1, zero_division=0.0):
        value = precision_score(
            references, predictions, average=average, pos_label=pos_label, zero_division=zero_division
        )
        return {"precision": float(value)}
