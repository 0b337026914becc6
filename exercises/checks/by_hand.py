"""What a check computes apart from the learner's code, on the same weights, to compare a run's logs with.

:class:`ByHand` is a callback that, before each optimizer step, measures each micro-batch the step will train on
(read in order from the Trainer's own sequential loader, on the weights the step starts from; the data must
fill whole steps, so that every epoch starts a step), and at each
evaluation measures each batch of the evaluation. A measure returns ``{name: (total, count)}``: a column's value
over a window is the sum of its totals over the sum of its counts, so a micro-batch mean is ``(mean, 1)`` and a
mean over reviews is ``(sum, number of reviews)``. :func:`training_windows` turns the measures into what each
training log of ``state.log_history`` should hold, :func:`evaluation_values` what each evaluation log should.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Iterable
from typing import Any

import torch
from transformers import TrainerCallback

Measure = Callable[[Any, dict[str, Any]], dict[str, tuple[float, float]]]


class ByHand(TrainerCallback):
    """Measures every training micro-batch before its step (``train``: ``(step, measures)``, in order) and every
    batch of each evaluation (``evaluations``: one list of measures per evaluation)."""

    def __init__(self, train_batches: Iterable[Any], measure: Measure, eval_batches: Iterable[Any] | None = None):
        self.loader, self.batches, self.measure, self.eval_batches = train_batches, iter(()), measure, eval_batches
        self.train: list[tuple[int, dict[str, tuple[float, float]]]] = []
        self.evaluations: list[list[dict[str, tuple[float, float]]]] = []

    def _on_device(self, model: Any, batch: dict[str, Any]) -> dict[str, Any]:
        return {key: value.to(model.device) for key, value in batch.items()}

    def _next_batch(self) -> Any:
        """The next micro-batch; the sequential loader starts again, in the same order, for the next epoch."""
        batch = next(self.batches, None)
        if batch is None:
            self.batches = iter(self.loader)
            batch = next(self.batches)
        return batch

    @torch.no_grad()
    def on_step_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        for _ in range(args.gradient_accumulation_steps):
            self.train.append((state.global_step, self.measure(model, self._on_device(model, self._next_batch()))))

    @torch.no_grad()
    def on_evaluate(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if self.eval_batches is not None:
            self.evaluations.append([self.measure(model, self._on_device(model, b)) for b in self.eval_batches])


def merged(measures: Iterable[dict[str, tuple[float, float]]]) -> dict[str, float]:
    """Each name's sum of totals over its sum of counts."""
    totals: dict[str, list[float]] = {}
    for measure in measures:
        for name, (total, count) in measure.items():
            pair = totals.setdefault(name, [0.0, 0.0])
            pair[0], pair[1] = pair[0] + total, pair[1] + count
    return {name: total / count for name, (total, count) in totals.items() if count}


def window_of(
    history: list[dict[str, Any]], entry: dict[str, Any], train: list[tuple[int, dict[str, tuple[float, float]]]]
) -> list[dict[str, tuple[float, float]]]:
    """The measures of the micro-batches that the training log ``entry`` of ``history`` covers: those trained after
    the previous training log, up to ``entry``'s step."""
    start = max((e["step"] for e in history if "loss" in e and e["step"] < entry["step"]), default=0)
    return [measure for step, measure in train if start <= step < entry["step"]]


def training_windows(
    history: list[dict[str, Any]], train: list[tuple[int, dict[str, tuple[float, float]]]]
) -> list[tuple[dict[str, Any], int, dict[str, float]]]:
    """For each training log (an entry with ``loss``) of ``history``: ``(entry, micro-batches since the previous
    training log, the merged measures of those micro-batches)``."""
    windows = []
    for entry in (entry for entry in history if "loss" in entry):
        window = window_of(history, entry, train)
        windows.append((entry, len(window), merged(window)))
    return windows


def evaluation_values(
    history: list[dict[str, Any]], evaluations: list[list[dict[str, tuple[float, float]]]]
) -> list[tuple[dict[str, Any], dict[str, float]]]:
    """Each evaluation log (an entry with ``eval_loss``) of ``history`` with the merged measures of its batches."""
    entries = [entry for entry in history if "eval_loss" in entry]
    if len(entries) != len(evaluations):
        raise RuntimeError(f"{len(entries)} evaluation logs for {len(evaluations)} evaluations measured")
    return [(entry, merged(measures)) for entry, measures in zip(entries, evaluations)]


def close(got: Any, want: float, rel: float = 1e-5) -> bool:
    """``got`` is a number within ``rel`` (relative, at least absolute 1e-5 near 0) of ``want``."""
    if isinstance(got, bool) or not isinstance(got, numbers.Real):
        return False
    return abs(got - want) <= rel * max(1.0, abs(want))
