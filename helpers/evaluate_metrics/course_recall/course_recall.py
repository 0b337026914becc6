"""Recall as an ``evaluate`` module that loads offline: ``evaluate.load(metric_path("course_recall"))``."""

import evaluate
from sklearn.metrics import recall_score

from helpers.evaluate_metrics import classification_info


class CourseRecall(evaluate.Metric):
    """Recall (scikit-learn); ``average``, ``pos_label`` and ``zero_division`` go to ``compute``."""

    def _info(self):
        return classification_info("Recall for class ids (scikit-learn's recall_score).")

    def _compute(self, predictions, references, average="binary", pos_label=1, zero_division=0.0):
        value = recall_score(references, predictions, average=average, pos_label=pos_label, zero_division=zero_division)
        return {"recall": float(value)}
