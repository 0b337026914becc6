"""Lesson 04's instruments: one silent evaluation with a chosen ``compute_metrics``, and the memory it takes.

* :func:`evaluate_with`: build a ``Trainer`` for one evaluation of ``model`` on ``data`` with
  ``compute_metrics=fn`` (and optionally ``preprocess_logits_for_metrics``), silence its progress display, and
  return ``evaluate()``'s metrics. Extra keywords are ``TrainingArguments`` fields.
* :func:`peak_extra_mib`: run a function and measure the peak resident memory it added (Linux ``/proc``) and,
  on a GPU, the peak of ``torch.cuda.max_memory_allocated``.
* :func:`peak_text`: the two peaks as one short text.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from helpers.performance import cuda_peak_mib, reset_cuda_peak

_PROC = Path("/proc/self")


def evaluate_with(
    fn: Callable[..., dict[str, float]] | None,
    model: Any,
    data: Any,
    collator: Any = None,
    preprocess: Callable[[Any, Any], Any] | None = None,
    ignore: list[str] | None = None,
    **settings: Any,
) -> dict[str, float]:
    """One silent evaluation with ``compute_metrics=fn``; ``settings`` go to ``TrainingArguments``.

    Defaults: ``per_device_eval_batch_size=128``, ``report_to="none"``, bf16 where the GPU supports it.

    Args:
        fn: the ``compute_metrics`` to call (``None``: the loss only).
        model: the model to evaluate.
        data: the evaluation dataset (with labels, for metrics).
        collator: the data collator (``None``: the Trainer's default).
        preprocess: ``preprocess_logits_for_metrics``.
        ignore: ``ignore_keys`` for ``evaluate`` (model outputs to leave out of the predictions).

    Raises:
        TypeError: a keyword of ``settings`` is not a ``TrainingArguments`` field (raised by transformers).
    """
    import torch
    from transformers import Trainer, TrainingArguments

    from helpers import run_dir
    from helpers.trainers import quiet

    bf16 = torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    defaults: dict[str, Any] = {"per_device_eval_batch_size": 128, "bf16": bf16, "report_to": "none"}
    args = TrainingArguments(output_dir=str(run_dir("eval_runs")), **{**defaults, **settings})
    evaluator = Trainer(
        model=model,
        args=args,
        eval_dataset=data,
        data_collator=collator,
        compute_metrics=fn,
        preprocess_logits_for_metrics=preprocess,
    )
    return quiet(evaluator).evaluate(ignore_keys=ignore)


def _status_kib(field: str) -> int:
    lines = (_PROC / "status").read_text().splitlines()
    return int(next(line for line in lines if line.startswith(field)).split()[1])


def can_measure_host() -> bool:
    """Whether this system lets a process reset and read its peak resident memory (Linux ``/proc``)."""
    return (_PROC / "clear_refs").exists() and (_PROC / "status").exists()


def peak_extra_mib(run: Callable[..., Any], *args: Any, **kwargs: Any) -> tuple[Any, float | None, float | None]:
    """``run(*args, **kwargs)``'s result, its extra peak RSS in MiB (``None`` without ``/proc``), peak GPU MiB.

    The extra peak is the process's peak resident memory during the call minus what it used just before
    (writing ``5`` to ``/proc/self/clear_refs`` resets the peak to the current size). The GPU figure is
    ``None`` without CUDA.
    """
    if not callable(run):
        raise TypeError(f"peak_extra_mib needs a function to run, got {type(run).__name__}.")
    reset_cuda_peak()
    measure = can_measure_host()
    before = 0
    if measure:
        (_PROC / "clear_refs").write_text("5")  # the peak becomes the current size
        before = _status_kib("VmRSS")
    result = run(*args, **kwargs)
    host = (_status_kib("VmHWM") - before) / 1024 if measure else None
    return result, host, cuda_peak_mib()


def peak_text(host: float | None, gpu: float | None) -> str:
    """The two peaks as one short text, e.g. ``peak RSS +477 MiB | peak GPU 12 MiB``."""
    text = f"peak RSS +{host:.0f} MiB" if host is not None else "RSS not measured"
    return text + (f" | peak GPU {gpu:.0f} MiB" if gpu is not None else "")
