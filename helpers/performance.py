"""Measuring training speed and memory: step timers, interleaved comparisons, padding and peak memory.

Shared by lesson 09, lesson 08 (``helpers.monitor_cost``), lesson 04 (its evaluation memory) and
``tools/bench.py``. What the lesson teaches (which switch to flip, and why) stays in the notebook, which writes its
``TrainingArguments`` and ``Trainer`` out
with :data:`MEASUREMENT_SETTINGS` (defined here, re-exported by lesson 09; the bench builds the same Trainers
through lesson 01's ``make_trainer``); this module only measures, the same way everywhere:

* :func:`timed_train` times each optimizer step of a real ``Trainer`` run with :class:`StepTimer`
  (CPU seconds on a CPU, which stay steady when other programs share the machine; wall seconds on a GPU).
* :func:`interleaved` runs several variants in rotating order, round after round, so that a machine that gets
  busier or quieter during the run slows every variant alike; compare the medians it returns.
* :func:`compare_step_times` puts the two together for Trainers: median seconds per optimizer step of several
  variants (a plain Trainer, one with a callback, a subclass...), interleaved, as ratios to a baseline.
* :func:`padding_report` gives the padded-token fraction of whole dataloaders (via ``helpers.data.padding_stats``).
* :func:`saved_tensor_bytes` counts the bytes autograd keeps for the backward pass (works on any device), and
  :func:`cuda_peak_mib` reads the CUDA allocator's peak (GPU only).
* :func:`peak_extra_mib` runs a function and measures the peak resident memory it added (Linux ``/proc``) and
  the CUDA peak; :func:`peak_text` writes the two as one short text (lesson 04's evaluation memory).
* :func:`forward_calls` counts how often modules run forward (a recomputed layer, a micro-batch), exactly.
* :func:`save_figures` hands a lesson's figures to the GPU run (``tools/gpu_run.py``) when it asks for them.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from helpers.data import padding_stats

#: The ``TrainingArguments`` that lesson 09's measured Trainers and ``tools/bench.py`` share: one epoch, no saving
#: or logging, seed 0, fp32 unless a comparison switches precision.
MEASUREMENT_SETTINGS: dict[str, Any] = dict(
    num_train_epochs=1,
    learning_rate=1e-4,
    save_strategy="no",
    logging_strategy="no",
    seed=0,
    bf16=False,  # fp32 unless a comparison switches precision
    fp16=False,
)


_PROC = Path("/proc/self")


class PerformanceError(ValueError):
    """Raised when a measurement is asked for with inputs that cannot give a meaningful figure."""


CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


@dataclass
class StepTimer(TrainerCallback):
    """Time of each optimizer step, from ``on_step_begin`` to ``on_step_end`` (``seconds[i]`` for step i).

    Attributes:
        clock: ``"cpu"`` (CPU seconds of this process, all threads: steady when other programs share the machine)
            or ``"wall"`` (elapsed seconds; on CUDA the device is synchronized before each reading).
    """

    clock: str = "cpu"
    seconds: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.clock not in CLOCKS:
            raise ValueError(f"clock must be one of {sorted(CLOCKS)}, got {self.clock!r}.")
        self._read = CLOCKS[self.clock]
        self._started = 0.0

    def _now(self) -> float:
        import torch

        if self.clock == "wall" and torch.cuda.is_available():
            torch.cuda.synchronize()
        return self._read()

    def on_step_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._started = self._now()

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.seconds.append(self._now() - self._started)


def default_clock() -> str:
    """``"wall"`` on a CUDA GPU (the work runs on the device), ``"cpu"`` (this process's CPU seconds) otherwise."""
    import torch

    return "wall" if torch.cuda.is_available() else "cpu"


def timed_train(trainer: Any, clock: str | None = None) -> list[float]:
    """Run ``trainer.train()`` with a fresh :class:`StepTimer` and return the seconds of each step.

    The Trainer fetches a step's batches before ``on_step_begin``, so data loading is not in these figures.
    On CUDA the allocator's peak is reset first, so :func:`cuda_peak_mib` afterwards reads this run's peak.

    Args:
        trainer: a ``transformers.Trainer`` (its ``max_steps`` or epochs decide how many steps are timed).
        clock: ``"cpu"`` or ``"wall"``; ``None`` uses :func:`default_clock`.
    """
    if not hasattr(trainer, "train") or not hasattr(trainer, "add_callback"):
        raise PerformanceError(f"timed_train needs a transformers.Trainer, got {type(trainer).__name__}.")
    reset_cuda_peak()
    timer = StepTimer(clock=clock or default_clock())
    trainer.add_callback(timer)
    try:
        trainer.train()
    finally:
        trainer.remove_callback(timer)
    if not timer.seconds:
        raise PerformanceError("the run made no optimizer step; give it max_steps >= 1 or a non-empty dataset.")
    return timer.seconds


def interleaved(variants: Mapping[str, Callable[[], float]], rounds: int) -> dict[str, list[float]]:
    """Call each variant once per round, in an order that rotates each round; return every figure per variant.

    Each callable measures one thing and returns it (for example the seconds of one epoch). Interleaving
    spreads any change in machine load over all variants, so the ratio of their medians is fair.
    """
    if not variants:
        raise PerformanceError("give at least one variant to measure.")
    if not isinstance(rounds, int) or rounds < 1:
        raise PerformanceError(f"rounds must be a positive int, got {rounds!r}.")
    names = list(variants)
    results: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            results[name].append(float(variants[name]()))
    return results


def medians(results: Mapping[str, Iterable[float]]) -> dict[str, float]:
    """The median of each variant's figures."""
    out = {}
    for name, values in results.items():
        values = list(values)
        if not values:
            raise PerformanceError(f"variant {name!r} has no measurements.")
        out[name] = statistics.median(values)
    return out


def ratios(figures: Mapping[str, float], baseline: str) -> dict[str, float]:
    """Each figure divided by the baseline's (``baseline`` gets 1.0)."""
    if baseline not in figures:
        raise PerformanceError(f"baseline {baseline!r} is not among the variants {sorted(figures)}.")
    if figures[baseline] == 0:
        raise PerformanceError(f"baseline {baseline!r} measured 0; a ratio to it is undefined.")
    return {name: value / figures[baseline] for name, value in figures.items()}


def compare_step_times(
    variants: Mapping[str, Callable[[], Any]],
    steps: int,
    rounds: int = 3,
    baseline: str = "plain",
    warmup_steps: int = 1,
    clock: str | None = None,
) -> dict[str, Any]:
    """Median seconds per optimizer step of several Trainers, each built fresh and trained in turn, interleaved.

    Every round builds and trains each variant once (:func:`interleaved` rotates the order, :func:`timed_train`
    times each step); the step times of all rounds are pooled and their medians compared (:func:`medians`,
    :func:`ratios`).

    Args:
        variants: ``name -> factory`` of a new ``Trainer`` (the same model, data and arguments every call, so
            the variants differ only in what is being compared). Each is trained for ``steps`` optimizer steps.
        steps: optimizer steps per run; the first ``warmup_steps`` of each run are not counted.
        rounds: how many times each variant is trained.
        baseline: the variant the ratios are taken against.
        clock: ``"cpu"`` or ``"wall"``; ``None`` uses :func:`default_clock`. With the CPU clock torch runs on one
            thread during the measurement (restored after): idle OpenMP worker threads spin between small
            operations and bill that spinning as CPU time, which swamps differences of a few milliseconds.

    Returns:
        ``{"step_seconds": {name: median}, "ratio": {name: median / baseline median},
        "steps_timed": {name: count}, "cuda_peak_mib": {name: largest CUDA peak of its runs, or None without
        CUDA}, "repeats": rounds, "clock": clock, "threads": threads used}``.
    """
    import torch

    if not isinstance(warmup_steps, int) or warmup_steps < 0:
        raise PerformanceError(f"warmup_steps must be an int >= 0, got {warmup_steps!r}.")
    if not isinstance(steps, int) or steps <= warmup_steps:
        raise PerformanceError(f"steps must be an int larger than warmup_steps={warmup_steps}, got {steps!r}.")
    if baseline not in variants:
        raise PerformanceError(f"baseline {baseline!r} is not among the variants {sorted(variants)}.")
    clock = clock if clock is not None else default_clock()
    timed: dict[str, list[float]] = {name: [] for name in variants}
    peaks: dict[str, float | None] = {name: None for name in variants}

    def run(name: str) -> float:
        trainer = variants[name]()
        trainer.args.max_steps = steps
        seconds = timed_train(trainer, clock)
        if len(seconds) < steps:
            raise PerformanceError(
                f"the {name!r} run took {len(seconds)} steps, not {steps}: give the Trainer enough training data "
                "for that many steps."
            )
        timed[name].extend(seconds[warmup_steps:])
        peak = cuda_peak_mib()  # timed_train reset the peak before this run
        if peak is not None:
            peaks[name] = max(peak, peaks[name] or 0.0)
        return sum(seconds)

    threads = torch.get_num_threads()
    if clock == "cpu":
        torch.set_num_threads(1)
    try:
        interleaved({name: (lambda name=name: run(name)) for name in variants}, rounds=rounds)
    finally:
        torch.set_num_threads(threads)
    step_medians = medians(timed)
    return {
        "step_seconds": step_medians,
        "ratio": ratios(step_medians, baseline),
        "steps_timed": {name: len(values) for name, values in timed.items()},
        "cuda_peak_mib": peaks,
        "repeats": rounds,
        "clock": clock,
        "threads": 1 if clock == "cpu" else threads,
    }


def padding_report(dataloaders: Mapping[str, Iterable[Any]]) -> dict[str, dict[str, float]]:
    """``helpers.data.padding_stats`` of each dataloader (a whole pass over it), keyed by the same names."""
    if not dataloaders:
        raise PerformanceError("give at least one dataloader.")
    return {name: padding_stats(loader) for name, loader in dataloaders.items()}


def saved_tensor_bytes(model: Any, batch: Mapping[str, Any]) -> int:
    """Bytes of the tensors autograd saves for the backward pass during one forward of ``model(**batch)``.

    This is the activation memory that grows with batch size and sequence length; it is measured the same way
    on CPU and GPU. Tensors saved twice (the same storage) are counted once, and the model's own weights (which
    layers save too) are not counted. Gradient checkpointing hides the inside of each checkpointed layer from
    this count, so do not use it to compare checkpointing.
    """
    import torch

    seen: set[tuple[int, int]] = {
        (p.untyped_storage().data_ptr(), p.untyped_storage().nbytes()) for p in model.parameters()
    }
    total = 0

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        nonlocal total
        storage = tensor.untyped_storage()
        key = (storage.data_ptr(), storage.nbytes())
        if key not in seen:
            seen.add(key)
            total += storage.nbytes()
        return tensor

    device = next(model.parameters()).device  # a Trainer may have moved the model to the GPU
    batch = {key: value.to(device) if isinstance(value, torch.Tensor) else value for key, value in batch.items()}
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        output = model(**batch)
    loss = output["loss"] if isinstance(output, Mapping) else output[0]
    loss.backward()  # frees the graph; the caller decides whether to keep the gradients
    model.zero_grad(set_to_none=True)
    return total


class forward_calls:  # noqa: N801 (used as a context manager, like a function)
    """Count the forward calls of some modules while the ``with`` block runs.

    ``with forward_calls(model.bert.encoder.layer) as calls: trainer.train()`` leaves ``calls.count`` at the
    number of times those layers ran forward, all together (each micro-batch of gradient accumulation once).
    Exact on any device (forward pre-hooks, removed when the block ends, also after an exception). To see
    activation checkpointing's recomputation, count a module *inside* the checkpointed layer (its attention
    block): transformers checkpoints a layer's ``forward``, so the layer's own hooks run once a step.

    Args:
        modules: one ``torch.nn.Module``, or an iterable of them (a ``ModuleList`` counts its members).
    """

    def __init__(self, modules: Any) -> None:
        import torch

        single = isinstance(modules, torch.nn.Module) and not isinstance(modules, torch.nn.ModuleList)
        modules = [modules] if single else list(modules)  # a ModuleList never runs forward itself
        if not modules or not all(isinstance(module, torch.nn.Module) for module in modules):
            raise PerformanceError("forward_calls needs a torch.nn.Module or a non-empty list of them.")
        self.modules = modules
        self.count = 0
        self._handles: list[Any] = []

    def _hook(self, module: Any, inputs: Any) -> None:
        self.count += 1

    def __enter__(self) -> forward_calls:
        self.count = 0
        self._handles = [module.register_forward_pre_hook(self._hook) for module in self.modules]
        return self

    def __exit__(self, *exc: object) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []


def reset_cuda_peak() -> None:
    """Reset the CUDA allocator's peak counter (does nothing without CUDA)."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def cuda_peak_mib() -> float | None:
    """Peak CUDA memory allocated since the last :func:`reset_cuda_peak`, in MiB; ``None`` without CUDA."""
    import torch

    if not torch.cuda.is_available():
        return None
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / 2**20


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


def format_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A plain-text table (floats to 3 significant figures) for printing measured figures."""
    if not columns:
        raise PerformanceError("give the columns to print.")

    def cell(value: Any) -> str:
        if isinstance(value, float):
            return f"{value:.3g}"
        return "n/a" if value is None else str(value)

    body = [[cell(row.get(column)) for column in columns] for row in rows]
    widths = [
        max(len(column), *(len(line[i]) for line in body)) if body else len(column) for i, column in enumerate(columns)
    ]
    lines = ["  ".join(column.ljust(width) for column, width in zip(columns, widths))]
    lines.append("  ".join("-" * width for width in widths))
    lines += ["  ".join(value.ljust(width) for value, width in zip(line, widths)) for line in body]
    return "\n".join(lines)


def padding_strategies(tokenizer: Any, max_length: int) -> dict[str, dict[str, Any]]:
    """The three ways lesson 09 and the bench pad: ``{name: {"collator": ..., "overrides": {...}}}``.

    * ``max_length``: every review padded to ``max_length`` tokens;
    * ``dynamic``: ``DataCollatorWithPadding`` pads each batch to its longest review;
    * ``dynamic + grouped``: the same collator, and ``train_sampling_strategy="group_by_length"``.

    ``overrides`` are ``TrainingArguments`` keywords; ``collator`` goes to ``Trainer(data_collator=...)``.
    """
    from transformers import DataCollatorWithPadding

    if not isinstance(max_length, int) or max_length < 1:
        raise PerformanceError(f"max_length must be a positive number of tokens, got {max_length!r}.")
    return {
        "max_length": {
            "collator": DataCollatorWithPadding(tokenizer, padding="max_length", max_length=max_length),
            "overrides": {},
        },
        "dynamic": {"collator": DataCollatorWithPadding(tokenizer), "overrides": {}},
        "dynamic + grouped": {
            "collator": DataCollatorWithPadding(tokenizer),
            "overrides": {"train_sampling_strategy": "group_by_length"},
        },
    }


def compare_padding(
    trainers: Mapping[str, Any], rounds: int = 2, baseline: str = "max_length", clock: str | None = None
) -> dict[str, dict[str, float]]:
    """Padded-token fraction (one pass over each train dataloader) and epoch time, interleaved, for each Trainer.

    Args:
        trainers: ``{name: Trainer}``, each set to train one epoch on the same data (see :func:`padding_strategies`).
        rounds: epochs timed per Trainer, interleaved; the median is kept.
        baseline: the name the time ratios are taken against.
        clock: see :func:`timed_train`.

    Returns:
        ``{name: {"padded_fraction", "padded_tokens", "tokens", "epoch_seconds", "time_ratio"}}``.
    """
    if baseline not in trainers:
        raise PerformanceError(f"baseline {baseline!r} is not among the trainers {sorted(trainers)}.")
    padding = padding_report({name: trainer.get_train_dataloader() for name, trainer in trainers.items()})
    seconds = medians(
        interleaved(
            {name: (lambda t=trainer: sum(timed_train(t, clock))) for name, trainer in trainers.items()}, rounds=rounds
        )
    )
    time_ratio = ratios(seconds, baseline)
    return {
        name: {
            "padded_fraction": stats["padded_fraction"],
            "padded_tokens": stats["tokens"] - stats["real_tokens"],
            "tokens": stats["tokens"],
            "epoch_seconds": seconds[name],
            "time_ratio": time_ratio[name],
        }
        for name, stats in padding.items()
    }


RESULTS_VARIABLE = "COURSE_RESULTS_DIR"


def save_figures(lesson_number: str, figures: Mapping[str, Any]) -> Any:
    """Write a lesson's measured figures to ``$COURSE_RESULTS_DIR/<notebook>.json`` for ``tools/gpu_run.py``.

    Does nothing (returns ``None``) when the variable is not set, as in a learner's run; otherwise returns the path.
    The GPU run reads these files and checks them against its list of GPU checks (``tools/gpu_run.py``).

    Args:
        lesson_number: the lesson's two-digit number, as ``lessons.toml`` has it (``"09"``).
        figures: JSON-serialisable figures, keyed as the GPU run's checks name them.
    """
    import json
    import os
    from pathlib import Path

    from course_facts.registry import lesson

    if not isinstance(figures, Mapping):
        raise PerformanceError(f"figures must be a dict of measured values, got {type(figures).__name__}.")
    stem = lesson(lesson_number).stem  # a clear error for a lesson that does not exist
    folder = os.environ.get(RESULTS_VARIABLE)
    if not folder:
        return None
    path = Path(folder) / f"{stem}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(dict(figures), indent=2, sort_keys=True, default=str) + "\n")
    return path
