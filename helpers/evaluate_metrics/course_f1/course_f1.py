"""F1 as an ``evaluate`` module that loads offline: ``evaluate.load(metric_path("course_f1"))``."""

import evaluate
from sklearn.metrics import f1_score

from helpers.evaluate_metrics import classification_info


class CourseF1(evaluate.Metric):
    """F1 (scikit-learn); ``average``, ``pos_label`` and ``zero_division`` go to ``compute``."""

    def _info(self):
        return classification_info("F1 for class ids (scikit-learn's f1_score).")

    def _compute(self, predictions, references, average="binary", pos_label=1, zero_division=0.0):
        value = f1_score(references, predictions, average=average, pos_label=pos_label, zero_division=zero_division)
        return {"f1": float(value)}
