"""Per-layer gradient norms: the course's gradient recorder and its reference (lesson 08).

``GradientNormRecorder`` records, at ``on_pre_optimizer_step`` (after clipping, the gradients the optimizer is
about to use), the L2 norm of each layer's gradients in one pass (:func:`group_gradient_norms`), and keeps
every gradient value at chosen steps for histograms. ``GradientNormTrainer`` does the same work in a
``training_step`` override (before clipping); ``SeedStyleGradientPrinter`` is the source posts' way (one mean and
one printed line per parameter); ``direct_group_norms`` computes the norms one parameter at a time, as a reference.
Lesson 08 and later lessons import them from here.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import torch
from transformers import Trainer, TrainerCallback


def group_gradient_norms(groups: dict[str, Sequence[torch.Tensor]]) -> dict[str, float]:
    """L2 norm of the gradients of each group, in one pass; a group whose gradients
    are all None is left out.

    All gradients go through one ``torch._foreach_norm`` call; the per-group norms are
    ``sqrt(sum of squared parameter norms)`` and come back to the host in one
    ``.tolist()``.
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
    squared = torch.zeros(len(names), device=norms.device, dtype=torch.float32)
    squared = squared.index_add_(0, index, norms.square())
    return dict(zip(names, squared.sqrt().tolist()))


NUMBERED_MODULE = re.compile(r"^(.*?\.\d+)(?:\.|$)")


def layer_group(name: str) -> str:
    """The layer of a parameter: its name up to the first numbered module, else up to its module
    (``bert.encoder.layer.0.attention.self.query.weight`` -> ``bert.encoder.layer.0``;
    ``bert.embeddings.word_embeddings.weight`` -> ``bert.embeddings``)."""
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"name must be a parameter name such as 'bert.encoder.layer.0.output.dense.weight', got {name!r}."
        )
    numbered = NUMBERED_MODULE.match(name)
    if numbered:
        return numbered.group(1)
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else parts[0]


def parameter_groups(
    model: torch.nn.Module,
    group_by: Callable[[str], str] = layer_group,
    keep: Callable[[str], bool] | None = None,
) -> dict[str, list[torch.nn.Parameter]]:
    """The trainable parameters of ``model`` by ``group_by(name)``, in model order; ``keep`` filters names
    (``lambda name: "attention" in name``, as the Long customisation post did)."""
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


def gradient_values(groups: dict[str, list[torch.nn.Parameter]]) -> dict[str, torch.Tensor]:
    """Every gradient value of each group, as one flat float32 CPU tensor per group."""
    values = {}
    for name, params in groups.items():
        grads = [p.grad.detach().flatten() for p in params if p.grad is not None]
        if grads:
            values[name] = torch.cat(grads).float().cpu()
    return values


@dataclass
class NormHistory:
    """What a gradient recorder keeps: ``norms[layer][i]``, the layer's norm at optimizer step ``steps[i]``;
    ``total_norms[i]``, over all layers; ``snapshots[step][layer]``, every gradient value of the layer then."""

    steps: list = field(default_factory=list, kw_only=True)
    norms: dict = field(default_factory=dict, kw_only=True)
    total_norms: list = field(default_factory=list, kw_only=True)
    snapshots: dict = field(default_factory=dict, kw_only=True)

    def matrix(self) -> tuple[list[str], list[int], torch.Tensor]:
        """``(layer names, steps, norms)``; ``norms[g, s]``: layer g, step s."""
        if not self.steps:
            raise ValueError("nothing recorded yet: train with this callback first.")
        names = list(self.norms)
        return names, list(self.steps), torch.tensor([self.norms[n] for n in names])


@dataclass
class GradientNormRecorder(TrainerCallback, NormHistory):
    """Per-layer gradient norms every ``every`` optimizer steps, at on_pre_optimizer_step: after clipping, the
    norms the optimizer is about to use (kept as in NormHistory)."""

    every: int = 1
    group_by: Callable[[str], str] = layer_group
    keep: Callable[[str], bool] | None = None
    snapshot_steps: Collection[int] = ()

    def __post_init__(self) -> None:
        if type(self.every) is not int or self.every < 1:
            wanted = "a positive int (record every N optimizer steps)"
            raise ValueError(f"every must be {wanted}, got {self.every!r}.")
        self._groups: dict[str, list[torch.nn.Parameter]] | None = None

    def on_train_begin(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        self._groups = parameter_groups(model, self.group_by, self.keep)

    def on_pre_optimizer_step(self, args: Any, state: Any, control: Any, model: Any = None, **kwargs: Any) -> None:
        step = int(state.global_step)
        if self._groups is None:
            self._groups = parameter_groups(model, self.group_by, self.keep)
        if step in self.snapshot_steps:
            self.snapshots[step] = gradient_values(self._groups)
        if step % self.every == 0:
            norms = group_gradient_norms(self._groups)
            self.steps.append(step)
            for name in self._groups:
                self.norms.setdefault(name, []).append(norms.get(name, float("nan")))
            self.total_norms.append(sum(v**2 for v in norms.values()) ** 0.5)


@dataclass
class SeedStyleGradientPrinter(TrainerCallback):
    """The Short and Long customisation posts' printer as a callback: for every parameter, ``grad.mean()`` and
    one printed line, every step (into ``stream``; ``keep`` filters names)."""

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


def direct_group_norms(model: torch.nn.Module, group_by: Callable[[str], str] = layer_group) -> dict[str, float]:
    """The per-layer gradient norms, one parameter at a time (the reference)."""
    squared: dict[str, float] = {}
    for name, parameter in model.named_parameters():
        if parameter.requires_grad and parameter.grad is not None:
            group = group_by(name)
            squared[group] = squared.get(group, 0.0) + float(parameter.grad.double().pow(2).sum())
    return {name: value**0.5 for name, value in squared.items()}


class GradientNormTrainer(Trainer):
    """The recorder's work in a ``training_step`` override: after the backward pass of the last micro-batch of
    each optimizer step, the per-layer norms go to ``gradient_norms`` (before clipping, which the Trainer does
    after ``training_step``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gradient_norms: list[dict[str, float]] = []
        self._norm_groups: dict[str, list[torch.nn.Parameter]] | None = None

    def training_step(self, model: Any, inputs: Any, num_items_in_batch: Any = None) -> torch.Tensor:
        loss = super().training_step(model, inputs, num_items_in_batch)
        if self.accelerator.sync_gradients:  # the last micro-batch of the step
            if self._norm_groups is None:
                self._norm_groups = parameter_groups(self.model)
            self.gradient_norms.append(group_gradient_norms(self._norm_groups))
        return loss
