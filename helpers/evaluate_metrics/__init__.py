"""The course's own ``evaluate`` metric modules, loadable offline by path.

``evaluate.load("accuracy")`` fetches a script from the Hugging Face Hub, so it fails offline. Each folder here
(``course_accuracy``, ``course_precision``, ``course_recall``, ``course_f1``) holds a script of the same name that
``evaluate.load`` imports from disk instead::

    import evaluate
    from helpers.evaluate_metrics import metric_path
    accuracy = evaluate.load(metric_path("course_accuracy"))
    combined = evaluate.combine([metric_path(name) for name in METRIC_NAMES])

The scripts compute with scikit-learn; :func:`classification_info` is the metadata they share.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

METRIC_NAMES: tuple[str, ...] = ("course_accuracy", "course_precision", "course_recall", "course_f1")
METRICS_DIR = Path(__file__).resolve().parent


def metric_path(name: str) -> str:
    """The folder to pass to ``evaluate.load`` for one of :data:`METRIC_NAMES`.

    Raises:
        ValueError: the name is not one of the course's metric modules.
    """
    if name not in METRIC_NAMES:
        raise ValueError(f"Unknown course metric {name!r}; choose one of {METRIC_NAMES}.")
    folder = METRICS_DIR / name
    if not (folder / f"{name}.py").is_file():
        raise FileNotFoundError(f"{folder / (name + '.py')} is missing; the course checkout is incomplete.")
    return str(folder)


def classification_info(description: str) -> Any:
    """The ``evaluate.MetricInfo`` of a course metric: integer class ids as predictions and references."""
    import datasets
    import evaluate

    return evaluate.MetricInfo(
        description=description,
        citation="scikit-learn: Pedregosa et al., JMLR 12, 2011.",
        inputs_description="predictions: predicted class ids (int); references: true class ids (int).",
        features=datasets.Features({"predictions": datasets.Value("int64"), "references": datasets.Value("int64")}),
        reference_urls=["https://scikit-learn.org/stable/modules/model_evaluation.html"],
        module_type="metric",
    )
