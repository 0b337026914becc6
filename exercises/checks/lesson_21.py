"""Exercises of lesson 21 (an optimizer of your own): parameter groups with a rate for the head, and the
settings of schedule-free AdamW. Each check trains a tiny model with the answer and reads the rates applied."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_21 as solutions

HEAD_FACTOR = 10
SCHEDULE_FREE_PEAK, SCHEDULE_FREE_UPDATES, SCHEDULE_FREE_WARMUP = 2e-3, 40, 4


def _group_rates_callback() -> Any:
    from transformers import TrainerCallback

    class Rates(TrainerCallback):
        """The rate of each parameter (by id) at each optimizer update."""

        def __init__(self) -> None:
            self.rates: list[dict[int, float]] = []

        def on_optimizer_step(self, args: Any, state: Any, control: Any, optimizer: Any = None, **kwargs: Any) -> None:
            self.rates.append({id(p): float(g["lr"]) for g in optimizer.param_groups for p in g["params"]})

    return Rates()


def _groups_of(answer: Callable[..., Any], model: Any, learning_rate: float, weight_decay: float) -> list[Any]:
    from transformers import Trainer

    decay_names = Trainer.get_decay_parameter_names(None, model)  # the method reads no state of the Trainer
    with learner_code("calling your head_rate_groups"):
        groups = answer(model, list(decay_names), learning_rate, weight_decay)
    if not isinstance(groups, (list, tuple)) or not all(isinstance(g, Mapping) and "params" in g for g in groups):
        raise Wrong("head_rate_groups should return a list of dicts, each with a 'params' list (AdamW's groups).")
    return [dict(group, params=list(group["params"])) for group in groups]


def _check_one_model(
    answer: Callable[..., Any], model: Any, kind: str, learning_rate: float, weight_decay: float
) -> None:
    import torch

    groups = _groups_of(answer, model, learning_rate, weight_decay)
    seen = [id(p) for g in groups for p in g["params"]]
    by_id = {id(p): name for name, p in model.named_parameters()}
    if len(seen) != len(set(seen)):
        twice = sorted({by_id.get(i, "?") for i in seen if seen.count(i) > 1})
        raise Wrong(f"on the {kind} model {twice[:2]} appear in two groups; give every parameter one group.")
    missing = sorted(name for name, p in model.named_parameters() if p.requires_grad and id(p) not in seen)
    if missing:
        raise Wrong(f"on the {kind} model your groups leave out {missing[:3]}: they would never be trained.")
    with learner_code("building torch.optim.AdamW from your groups"):
        optimizer = torch.optim.AdamW(groups, lr=learning_rate)
    rates = _group_rates_callback()
    settings = {"learning_rate": learning_rate, "warmup_steps": 2, "lr_scheduler_type": "linear"}
    built = fixtures.trainer(
        settings,
        fixed={"max_steps": 6, "per_device_train_batch_size": 8},
        model=model,
        optimizers=(optimizer, None),
        callbacks=[rates],
    )
    fixtures.train(built)
    body = {id(p) for p in model.base_model.parameters()}
    body_rates = [step[next(iter(body))] for step in rates.rates]
    if abs(max(body_rates) - learning_rate) > 1e-12:
        raise Wrong(
            f"on the {kind} model the body's highest rate was {max(body_rates):g}, not learning_rate "
            f"({learning_rate:g}): the body trains at learning_rate."
        )
    decay_names = set(built.get_decay_parameter_names(model))
    for name, parameter in model.named_parameters():
        in_body = id(parameter) in body
        ratios = [step[id(parameter)] / rate for step, rate in zip(rates.rates, body_rates) if rate > 0]
        if any(abs(ratio - (1 if in_body else HEAD_FACTOR)) > 1e-6 for ratio in ratios):
            advice = (
                " The head of a Llama classifier is `score`, not `classifier`: find the head as the parameters "
                "outside model.base_model, not by its name."
                if kind == "Llama" and not in_body and abs(ratios[-1] - 1) < 1e-6
                else ""
            )
            raise Wrong(
                f"on the {kind} model `{name}` ({'body' if in_body else 'head'}) trained at {ratios[-1]:g} times "
                f"the body's rate; the head should train at {HEAD_FACTOR} times, the rest at learning_rate." + advice
            )
        group = next(g for g in built.optimizer.param_groups if any(p is parameter for p in g["params"]))
        expected = weight_decay if name in decay_names else 0.0
        if abs(group["weight_decay"] - expected) > 1e-12:
            what = "in decay_names" if name in decay_names else "a bias or a norm weight, not in decay_names"
            raise Wrong(
                f"on the {kind} model `{name}` has weight decay {group['weight_decay']:g}; it is {what}, so it "
                f"should have {expected:g}: split the body and the head by decay_names as well."
            )


def _check_head_rate_groups(answer: Any) -> None:
    if not callable(answer):
        raise Wrong(f"head_rate_groups should be a function, got {type(answer).__name__}.")
    rng = random.Random(21)  # drawn here, the same for every run of the check
    learning_rate, weight_decay = rng.choice([1e-3, 5e-4, 2e-3]), rng.choice([0.01, 0.05, 0.1])
    _check_one_model(answer, fixtures.tiny_model(seed=rng.randrange(100)), "BERT", learning_rate, weight_decay)
    _check_one_model(answer, fixtures.tiny_llama(seed=rng.randrange(100)), "Llama", learning_rate, weight_decay)


def _schedule_free_callback() -> Any:
    from transformers import TrainerCallback

    class Applied(TrainerCallback):
        def __init__(self) -> None:
            self.applied: list[float | None] = []
            self.scheduled: list[float] = []

        def on_optimizer_step(self, args: Any, state: Any, control: Any, optimizer: Any = None, **kwargs: Any) -> None:
            group = optimizer.param_groups[0]
            self.applied.append(group.get("scheduled_lr"))
            self.scheduled.append(float(group["lr"]))

    return Applied()


def _check_schedule_free(settings: Any) -> None:
    recorder = _schedule_free_callback()
    fixed = {"max_steps": SCHEDULE_FREE_UPDATES, "per_device_train_batch_size": 8}
    trainer = fixtures.train(fixtures.trainer(settings, fixed=fixed, callbacks=[recorder]))
    peak, warmup = SCHEDULE_FREE_PEAK, SCHEDULE_FREE_WARMUP
    if recorder.applied[0] is None:
        raise Wrong(
            f"the optimizer was {type(trainer.optimizer.optimizer).__name__}, not schedule-free AdamW: "
            "choose it with optim='schedule_free_adamw'."
        )
    applied = [float(rate) for rate in recorder.applied]
    if applied[0] > peak * (1 + 1e-6):
        raise Wrong(
            f"the first update used {applied[0]:.1e}, {applied[0] / peak:g} times the peak: schedule-free takes "
            "warmup_steps as a count of updates; a share below 1 divides the rate by it."
        )
    if abs(max(applied) - peak) > 1e-12 and max(recorder.scheduled) != peak:
        raise Wrong(f"the highest rate used was {max(applied):.2e}; the peak should be {peak:g} (learning_rate).")
    if len(set(recorder.scheduled)) > 1 and recorder.scheduled[-1] == max(recorder.scheduled):
        raise Wrong(
            f"the scheduler raised the rate from {recorder.scheduled[0]:.1e} to {recorder.scheduled[-1]:.1e} while "
            "schedule-free warmed up as well: the run warms up twice. Keep the scheduler constant."
        )
    if len(set(recorder.scheduled)) > 1:
        raise Wrong(
            f"the scheduler moved the rate from {recorder.scheduled[0]:.1e} to {recorder.scheduled[-1]:.1e}: "
            "schedule-free warms up by itself and needs no decay, so keep the scheduler constant."
        )
    expected = [peak * min(1.0, (k + 1) / warmup) for k in range(SCHEDULE_FREE_UPDATES)]
    if any(abs(a - e) > 1e-9 for a, e in zip(applied, expected)):
        first = next(k for k, rate in enumerate(applied) if abs(rate - peak) <= 1e-12) if peak in applied else None
        raise Wrong(
            f"the rate reached the peak at update {first} (counting from 0), not {warmup - 1}: warm up over "
            f"the first {warmup} updates."
        )


q1 = Exercise(
    answer_name="head_rate_groups",
    checker=_check_head_rate_groups,
    hint_text=(
        "Tell the head from the body by whether the base model holds the parameter, not by a name: classifier "
        "heads are named differently in each architecture. Give each group its own 'lr' and 'weight_decay', and "
        "split both the body and the head by decay_names."
    ),
    solution_obj=solutions.head_rate_groups,
)

q2 = Exercise(
    answer_name="schedule_free_settings",
    checker=_check_schedule_free,
    hint_text=(
        "Schedule-free does its own warmup from warmup_steps, read as a count of updates; the Trainer's "
        "scheduler should then leave the rate alone."
    ),
    solution_obj=solutions.schedule_free_settings,
)

bind_exercises(globals())
