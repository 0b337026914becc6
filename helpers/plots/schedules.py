"""Learning-rate schedules: the value each optimizer update uses, and a plot of one or more schedules.

:func:`schedule_lrs` builds the installed ``transformers.get_scheduler`` on a one-parameter optimizer and
reads the learning rate the way ``Trainer`` applies it: update ``k`` uses the rate set *before* the
scheduler's ``k``-th step. :func:`plot_schedules` draws such curves, and can lay the rates a real run
applied (for example from :class:`helpers.lessons.lesson_03.AppliedLRRecorder`) over them as markers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from helpers.plots.base import finish, new_axes

# Schedulers that move on evaluation metrics, not on the step count: they have no curve without a run.
METRIC_DRIVEN = ("reduce_lr_on_plateau", "greedy")


def schedule_lrs(
    name: str,
    num_training_steps: int,
    num_warmup_steps: int = 0,
    learning_rate: float = 1.0,
    scheduler_kwargs: Mapping[str, Any] | None = None,
) -> list[float]:
    """The learning rate of each of ``num_training_steps`` optimizer updates under scheduler ``name``.

    Args:
        name: a ``transformers.SchedulerType`` value such as ``"linear"`` or ``"cosine"``.
        num_training_steps: the number of optimizer updates.
        num_warmup_steps: the warmup length, in updates (Trainer turns a fraction into this count).
        learning_rate: the peak learning rate (1.0 gives the multiplier).
        scheduler_kwargs: what ``TrainingArguments(lr_scheduler_kwargs=...)`` would pass.

    Raises:
        ValueError: the name is unknown, the step counts make no sense, or the scheduler is metric-driven
            (``reduce_lr_on_plateau``, ``greedy``): those need a run with evaluation, not a curve.
    """
    import torch
    from transformers import SchedulerType, get_scheduler

    known = [member.value for member in SchedulerType]
    if name not in known:
        raise ValueError(f"unknown scheduler {name!r}; the installed transformers offers {known}.")
    if name in METRIC_DRIVEN:
        raise ValueError(
            f"{name!r} changes the rate from evaluation metrics, so it has no curve without a run; "
            "train with eval_strategy set and record the applied rate instead."
        )
    if not isinstance(num_training_steps, int) or num_training_steps < 1:
        raise ValueError(f"num_training_steps must be a positive int, got {num_training_steps!r}.")
    if not isinstance(num_warmup_steps, int) or not 0 <= num_warmup_steps <= num_training_steps:
        raise ValueError(
            f"num_warmup_steps must be an int from 0 to num_training_steps ({num_training_steps}), "
            f"got {num_warmup_steps!r}; turn a fraction into a count first."
        )
    weight = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([weight], lr=learning_rate)
    scheduler = get_scheduler(
        name,
        optimizer,
        num_warmup_steps=num_warmup_steps,
        num_training_steps=num_training_steps,
        scheduler_specific_kwargs=dict(scheduler_kwargs or {}),
    )
    rates = []
    for _ in range(num_training_steps):
        rates.append(float(optimizer.param_groups[0]["lr"]))
        optimizer.step()  # no gradient, so nothing changes; keeps torch's step-order check quiet
        scheduler.step()
    return rates


def plot_schedules(
    curves: Mapping[str, Sequence[float]],
    title: str = "Learning-rate schedules",
    applied: Mapping[str, tuple[Sequence[int], Sequence[float]]] | None = None,
    ax: Any = None,
    ylabel: str = "learning rate",
) -> Any:
    """Plot schedules as lines (x = optimizer step from 0) and, optionally, applied rates as markers.

    Args:
        curves: ``{label: rates}``, for example ``{"linear": schedule_lrs("linear", 20, 2)}``.
        title: the plot title.
        applied: ``{label: (steps, rates)}`` read from a real run, drawn as markers on top.
        ax: draw into these axes instead of a new figure.
        ylabel: the y-axis label (say ``"multiplier of learning_rate"`` when the peak is 1).

    Returns:
        The matplotlib Figure.
    """
    if not isinstance(curves, Mapping) or not curves:
        raise ValueError("curves must be a non-empty mapping {label: rates}; compute rates with schedule_lrs().")
    ax = new_axes(title, "optimizer step", ylabel, ax=ax)
    for label, rates in curves.items():
        if len(rates) == 0:
            raise ValueError(f"curve {label!r} has no values.")
        ax.plot(range(len(rates)), list(rates), label=label, linewidth=1.5)
    for label, (steps, rates) in (applied or {}).items():
        if len(steps) != len(rates):
            raise ValueError(f"applied {label!r}: {len(steps)} steps but {len(rates)} rates; they must pair up.")
        ax.plot(list(steps), list(rates), linestyle="none", marker="o", markersize=4, label=label)
    return finish(ax)
