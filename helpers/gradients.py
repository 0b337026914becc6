"""Gradient statistics during training: an efficient recorder, the seeds' naive printer, and their overhead.

* :func:`layer_group` names the group (the "layer") a parameter belongs to, such as ``bert.encoder.layer.0``.
* :func:`group_gradient_norms` computes the L2 norm of the gradients of each group in one pass
  (``torch._foreach_norm`` over all gradients, then one reduction per group and one copy to the host).
* :class:`GradientNormRecorder` is a ``TrainerCallback`` that calls it every ``every`` optimizer steps at
  ``on_pre_optimizer_step``: the last event where the gradients still exist. The Trainer fires it *after*
  clipping (``max_grad_norm``), so the norms recorded are those the optimizer is about to use.
* :class:`SeedStyleGradientPrinter` is the 2021 blog posts' approach kept as a baseline: one ``.mean()`` and one
  printed line per parameter, every step.
* :func:`monitoring_overhead` times a plain Trainer against both, interleaved in one run, and returns ratios;
  :func:`monitor_call_seconds` times the monitors' own work alone, without the training step around it.
* :class:`GradientNormTrainer` does the recorder's work in a ``training_step`` override, and
  :func:`subclass_vs_callback` times that against the callback, in one run.
  The lesson and ``tools/bench.py`` call these, and they time with ``helpers.performance``, so the measurement
  lives in one place.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import torch
from transformers import Trainer, TrainerCallback

from helpers.performance import CLOCKS, compare_step_times, default_clock, interleaved, medians, ratios

_NUMBERED = re.compile(r"^(.*?\.\d+)(?:\.|$)")

__all__ = [
    "GradientNormRecorder",
    "GradientNormTrainer",
    "SeedStyleGradientPrinter",
    "direct_group_norms",
    "group_gradient_norms",
    "layer_group",
    "monitor_call_seconds",
    "monitoring_overhead",
    "parameter_groups",
    "subclass_vs_callback",
]


def layer_group(name: str) -> str:
    """The group a parameter belongs to: its name up to the first numbered module, else up to its module.

    ``bert.encoder.layer.0.attention.self.query.weight`` -> ``bert.encoder.layer.0``;
    ``bert.embeddings.word_embeddings.weight`` -> ``bert.embeddings``; ``classifier.weight`` -> ``classifier``.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"name must be a parameter name such as 'bert.encoder.layer.0.output.dense.weight', got {name!r}."
        )
    numbered = _NUMBERED.match(name)
    if numbered:
        return numbered.group(1)
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else parts[0]


def parameter_groups(
    model: torch.nn.Module, group_by: Callable[[str], str] = layer_group, keep: Callable[[str], bool] | None = None
) -> dict[str, list[torch.nn.Parameter]]:
    """Trainable parameters of ``model`` grouped by ``group_by(name)``, in model order.

    Args:
        model: the model.
        group_by: maps a parameter name to its group name (``layer_group`` by default; ``lambda n: n`` gives one
            group per parameter).
        keep: optional filter on parameter names, e.g. ``lambda n: "attention" in n`` as in seed 001.

    Raises:
        ValueError: no trainable parameter is left after ``keep``.
    """
    if not isinstance(model, torch.nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}.")
    groups: dict[str, list[torch.nn.Parameter]] = {}
    for name, parameter in model.named_parameters():
        if parameter.requires_grad and (keep is None or keep(name)):
            groups.setdefault(group_by(name), []).append(parameter)
    if not groups:
        raise ValueError(
            "no trainable parameter matched; check the `keep` filter and that the model has trainable "
            "parameters (requires_grad=True)."
        )
    return groups


def group_gradient_norms(groups: dict[str, Sequence[torch.Tensor]]) -> dict[str, float]:
    """L2 norm of the gradients of each group, in one pass; a group whose gradients are all None is left out.

    All gradients go through one ``torch._foreach_norm`` call; the per-group norms are
    ``sqrt(sum of squared parameter norms)`` and come back to the host in one ``.tolist()``.
    """
    names: list[str] = []
    grads: list[torch.Tensor] = []
    owner: list[int] = []
    for name, parameters in groups.items():
        present = [p.grad for p in parameters if p.grad is not None]
        if present:
            owner.extend([len(names)] * len(present))
            names.append(name)
            grads.extend(present)
    if not grads:
        return {}
    norms = torch.stack([norm.float() for norm in torch._foreach_norm(grads, 2.0)])
    index = torch.tensor(owner, device=norms.device)
    squared = torch.zeros(len(names), device=norms.device, dtype=torch.float32).index_add_(0, index, norms.square())
    return dict(zip(names, squared.sqrt().tolist()))


@dataclass
class GradientNormRecorder(TrainerCallback):
    """Per-group gradient norms every ``every`` optimizer steps, read at ``on_pre_optimizer_step``.

    That event fires after gradient clipping and before ``optimizer.step()``; by ``on_step_end`` the Trainer
    has called ``model.zero_grad()`` and the gradients are ``None``. So with ``max_grad_norm`` set, the norms here
    are the clipped ones; the Trainer logs the norm *before* clipping as ``grad_norm``.

    Attributes:
        every: record at optimizer steps 0, every, 2*every, ... (0-based: the step about to be taken).
        group_by: parameter name -> group name (:func:`layer_group` by default).
        keep: optional filter on parameter names.
        snapshot_steps: optimizer steps (0-based) at which to also keep every gradient value of each group,
            as a flat float32 CPU tensor, for histograms.
        steps: the steps recorded. ``norms[group][i]`` is that group's norm at ``steps[i]``; ``total_norms[i]``
            is the norm over all kept parameters. ``snapshots[step][group]`` holds the kept values.
    """

    every: int = 1
    group_by: Callable[[str], str] = layer_group
    keep: Callable[[str], bool] | None = None
    snapshot_steps: Collection[int] = ()
    steps: list[int] = field(default_factory=list)
    norms: dict[str, list[float]] = field(default_factory=dict)
    total_norms: list[float] = field(default_factory=list)
    snapshots: dict[int, dict[str, torch.Tensor]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.every, int) or isinstance(self.every, bool) or self.every < 1:
            raise ValueError(f"every must be a positive int (record every N optimizer steps), got {self.every!r}.")
        self._groups: dict[str, list[torch.nn.Parameter]] | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        if model is None:
            raise RuntimeError("on_train_begin received no model; this transformers version changed the event.")
        self._groups = parameter_groups(model, self.group_by, self.keep)

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        step = int(state.global_step)
        if step % self.every and step not in self.snapshot_steps:
            return
        if self._groups is None:
            self._groups = parameter_groups(model, self.group_by, self.keep)
        if step in self.snapshot_steps:
            self.snapshots[step] = {
                name: torch.cat([p.grad.detach().flatten().float().cpu() for p in params if p.grad is not None])
                for name, params in self._groups.items()
                if any(p.grad is not None for p in params)
            }
        if step % self.every:
            return
        norms = group_gradient_norms(self._groups)
        self.steps.append(step)
        for name in self._groups:
            self.norms.setdefault(name, []).append(norms.get(name, float("nan")))
        self.total_norms.append(sum(value**2 for value in norms.values()) ** 0.5)

    def matrix(self) -> tuple[list[str], list[int], torch.Tensor]:
        """``(group names, steps, norms)`` with ``norms[g, s]`` the norm of group ``g`` at ``steps[s]``."""
        if not self.steps:
            raise ValueError("nothing recorded yet: train with this callback first (and check `every`).")
        names = list(self.norms)
        return names, list(self.steps), torch.tensor([self.norms[name] for name in names])


@dataclass
class SeedStyleGradientPrinter(TrainerCallback):
    """Seeds 000 and 001, as a callback: for every parameter, ``grad.mean()`` and one printed line, every step.

    It does what the seeds' ``training_step`` did after ``loss.backward()`` (a Python loop over
    ``named_parameters()``, a reduction and a formatted tensor per parameter), at ``on_pre_optimizer_step``.
    Kept as the baseline the efficient :class:`GradientNormRecorder` is measured against.

    Attributes:
        stream: where the lines go (``sys.stdout`` by default; pass ``io.StringIO()`` to keep a notebook short).
        keep: optional filter on parameter names (seed 001 kept names containing ``"attention"``).
        lines_printed: how many lines were written.
    """

    stream: TextIO | None = None
    keep: Callable[[str], bool] | None = None
    lines_printed: int = 0

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        stream = self.stream if self.stream is not None else sys.stdout
        for name, param in model.named_parameters():
            if param.requires_grad and (self.keep is None or self.keep(name)):
                if param.grad is not None:
                    print(f"{name}, gradient: {param.grad.mean()}", file=stream)
                else:
                    print(f"{name} has not gradient", file=stream)
                self.lines_printed += 1


def _default_monitors(every: int) -> dict[str, Callable[[], list[TrainerCallback]]]:
    return {
        "plain": lambda: [],
        "efficient": lambda: [GradientNormRecorder(every=every)],
        "printer": lambda: [SeedStyleGradientPrinter(stream=io.StringIO())],
    }


def monitoring_overhead(
    make_trainer: Callable[[list[TrainerCallback]], Any],
    steps: int,
    repeats: int = 3,
    every: int = 1,
    monitors: dict[str, Callable[[], list[TrainerCallback]]] | None = None,
    warmup_steps: int = 1,
    clock: str | None = None,
) -> dict[str, Any]:
    """Time optimizer steps of a plain Trainer and of the same Trainer with each monitor, interleaved, in one run.

    Args:
        make_trainer: ``make_trainer(callbacks) -> Trainer``; must build the same model, data and arguments every
            call (``max_steps`` of at least ``steps``) and add the given callbacks.
        steps: optimizer steps per run (the first ``warmup_steps`` are not counted).
        repeats: rounds; each round trains once per monitor, in turn, so drift on a shared machine hits all alike.
        every: ``GradientNormRecorder(every=...)`` for the default "efficient" monitor.
        monitors: name -> factory of the callbacks to add; the default compares ``plain``, ``efficient``
            (:class:`GradientNormRecorder`) and ``printer`` (:class:`SeedStyleGradientPrinter` into a StringIO).
        warmup_steps: steps dropped from the front of each run.
        clock: ``"cpu"`` or ``"wall"``; see :func:`helpers.performance.compare_step_times`, which does the timing.

    Returns:
        ``{"step_seconds": {name: median seconds per step}, "ratio": {name: median / plain median},
        "steps_timed": {name: count}, "repeats": repeats, "clock": clock, "threads": threads}``.
    """
    if not isinstance(steps, int) or steps <= warmup_steps:
        raise ValueError(f"steps must be an int larger than warmup_steps={warmup_steps}, got {steps!r}.")
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive int, got {repeats!r}.")
    monitors = monitors if monitors is not None else _default_monitors(every)
    if "plain" not in monitors:
        raise ValueError("monitors must include a 'plain' entry (the baseline the ratios are taken against).")
    variants = {name: (lambda factory=factory: make_trainer(factory())) for name, factory in monitors.items()}
    return compare_step_times(variants, steps, rounds=repeats, baseline="plain", warmup_steps=warmup_steps, clock=clock)


class GradientNormTrainer(Trainer):
    """The same per-step work as :class:`GradientNormRecorder`, done by a ``training_step`` override instead.

    After the default step's backward pass of the last micro-batch of each optimizer step (when
    ``accelerator.sync_gradients`` is true), it computes the per-group norms with :func:`group_gradient_norms`
    and appends them to ``self.gradient_norms``. It reads the gradients *before* clipping (the Trainer clips
    after ``training_step``), where the callback reads them after. Used to time subclass against callback.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gradient_norms: list[dict[str, float]] = []
        self._norm_groups: dict[str, list[torch.nn.Parameter]] | None = None

    def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> torch.Tensor:
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.accelerator.sync_gradients:
            if self._norm_groups is None:
                self._norm_groups = parameter_groups(self.model)
            self.gradient_norms.append(group_gradient_norms(self._norm_groups))
        return loss


def subclass_vs_callback(
    make_trainer: Callable[[type, list[TrainerCallback]], Any],
    steps: int,
    repeats: int = 3,
    warmup_steps: int = 1,
    clock: str | None = None,
) -> dict[str, Any]:
    """Per-group gradient norms every step, in a callback and in a ``training_step`` override: step times compared.

    Three variants, interleaved (:func:`helpers.performance.compare_step_times`): ``plain`` (a ``Trainer``),
    ``callback`` (a ``Trainer`` with :class:`GradientNormRecorder`) and ``subclass`` (:class:`GradientNormTrainer`).

    Args:
        make_trainer: ``make_trainer(trainer_class, callbacks) -> Trainer`` on the same model, data and arguments
            every call.
        steps, repeats, warmup_steps, clock: as in :func:`monitoring_overhead`.

    Returns:
        :func:`helpers.performance.compare_step_times`'s result, plus ``"subclass_over_callback"``: the subclass's
        median step time divided by the callback's (below 1: the subclass is faster).
    """
    from transformers import Trainer as PlainTrainer

    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats must be a positive int, got {repeats!r}.")
    variants = {
        "plain": lambda: make_trainer(PlainTrainer, []),
        "callback": lambda: make_trainer(PlainTrainer, [GradientNormRecorder(every=1)]),
        "subclass": lambda: make_trainer(GradientNormTrainer, []),
    }
    result = compare_step_times(
        variants, steps, rounds=repeats, baseline="plain", warmup_steps=warmup_steps, clock=clock
    )
    seconds = result["step_seconds"]
    result["subclass_over_callback"] = seconds["subclass"] / seconds["callback"]
    return result


def monitor_call_seconds(model: torch.nn.Module, rounds: int = 20, calls: int = 5) -> dict[str, Any]:
    """The per-step work of each monitor alone, on the gradients ``model`` holds now: seconds per call.

    Times :func:`group_gradient_norms` (the recorder's work) and :class:`SeedStyleGradientPrinter`'s loop into a
    ``StringIO`` (the seeds' work), ``calls`` calls at a time, interleaved over ``rounds`` rounds
    (:func:`helpers.performance.interleaved`), on this process's CPU clock with torch on one thread, or on the
    wall clock after synchronising on a CUDA GPU. A training step's own time is not in these figures.

    Returns:
        ``{"call_seconds": {"recorder": s, "printer": s}, "ratio": {... / recorder}, "tensors": count,
        "clock": clock}``.

    Raises:
        ValueError: no parameter of ``model`` has a gradient (run a backward pass first).
    """
    if not isinstance(rounds, int) or rounds < 1 or not isinstance(calls, int) or calls < 1:
        raise ValueError(f"rounds and calls must be positive ints, got {rounds!r} and {calls!r}.")
    groups = parameter_groups(model)
    tensors = sum(1 for params in groups.values() for p in params if p.grad is not None)
    if not tensors:
        raise ValueError("no parameter has a gradient: run a backward pass (loss.backward()) on the model first.")
    clock = default_clock()
    read = CLOCKS[clock]
    synchronize = torch.cuda.synchronize if clock == "wall" and torch.cuda.is_available() else (lambda: None)
    printer = SeedStyleGradientPrinter(stream=io.StringIO())
    work = {
        "recorder": lambda: group_gradient_norms(groups),
        "printer": lambda: printer.on_pre_optimizer_step(None, None, None, model=model),
    }

    def timed(name: str) -> float:
        synchronize()
        started = read()
        for _ in range(calls):
            work[name]()
        synchronize()
        return (read() - started) / calls

    threads = torch.get_num_threads()
    if clock == "cpu":
        torch.set_num_threads(1)
    try:
        seconds = medians(interleaved({name: (lambda name=name: timed(name)) for name in work}, rounds=rounds))
    finally:
        torch.set_num_threads(threads)
    return {"call_seconds": seconds, "ratio": ratios(seconds, "recorder"), "tensors": tensors, "clock": clock}


def direct_group_norms(model: torch.nn.Module, group_by: Callable[[str], str] = layer_group) -> dict[str, float]:
    """Reference implementation, one parameter at a time (for tests and for the lesson's comparison)."""
    squared: dict[str, float] = {}
    for name, parameter in model.named_parameters():
        if parameter.requires_grad and parameter.grad is not None:
            group = group_by(name)
            squared[group] = squared.get(group, 0.0) + float(parameter.grad.double().pow(2).sum())
    return {name: value**0.5 for name, value in squared.items()}
