"""Exercises of lesson 20 (tracking and comparing runs): a value of your own in the Trainer's training logs, and
the steps at which a run logs its training loss."""

from __future__ import annotations

import inspect
import math
import random
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.solutions import lesson_20 as solutions

# (examples, batch, accumulation, logging_steps, eval_steps) of exercise 1's runs, 2 epochs each. Both have a short
# last batch in every epoch (30 = 7 x 4 + 2; 21 = 4 x 5 + 1), so a mean over batches differs from one over
# examples, and an evaluation between two training logs, so counting evaluation batches shows.
ACCURACY_CASES = ((30, 4, 2, 3, 4), (21, 5, 1, 2, 3))
EVAL_ROWS = 10
LOG_SEED = 20  # the check draws exercise 2's cases from this seed each time it runs

# What exercise 2's six cases cover between them, so that each usual shortcut fails on one of them.
_COVERAGE = {
    "a last step off the interval": lambda m, every, first: isinstance(every, int) and m % every != 0,
    "a fraction of max_steps, rounded up": lambda m, every, first: (
        isinstance(every, float) and m * every != math.ceil(m * every)
    ),
    "logging_first_step off the interval": lambda m, every, first: first and isinstance(every, int) and every > 1,
    "logging_first_step with logging_steps=1": lambda m, every, first: first and every == 1,
    "logging_first_step off": lambda m, every, first: not first,
}


def _labels(input_ids: Any) -> Any:
    """The labels of :func:`fixtures.random_ids` rows, from their token ids (the check never trusts the batch)."""
    return (input_ids[:, 1] > 70).long()


class _Truth:
    """What the model did: every forward pass (training or not, correct, examples), and how many forward passes had
    run at each step's end."""

    def __init__(self, model: Any) -> None:
        from transformers import TrainerCallback

        self.passes: list[tuple[bool, int, int]] = []
        self.at_step: dict[int, int] = {0: 0}
        model.register_forward_hook(self._record, with_kwargs=True)
        truth = self

        class StepEnds(TrainerCallback):
            def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
                truth.at_step[state.global_step] = len(truth.passes)

        self.callback = StepEnds()

    def _record(self, module: Any, args: Any, kwargs: Any, output: Any) -> None:
        input_ids = kwargs.get("input_ids", args[0] if args else None)
        logits = output.logits if hasattr(output, "logits") else output["logits"]
        correct = (logits.argmax(-1) == _labels(input_ids)).sum().item()
        self.passes.append((module.training, int(correct), len(input_ids)))

    def window(self, start: int, end: int, training_only: bool = True) -> list[tuple[int, int]]:
        """(correct, examples) of the forward passes after step ``start`` ended, up to step ``end``'s end."""
        chosen = self.passes[self.at_step[start] : self.at_step[end]]
        return [(correct, seen) for training, correct, seen in chosen if training or not training_only]


def _share(pairs: list[tuple[int, int]]) -> float:
    return sum(correct for correct, _ in pairs) / sum(seen for _, seen in pairs)


def _diagnose(value: Any, truth: _Truth, last: int, step: int) -> str:
    """The mistake that gives ``value`` at ``step`` (previous training log at ``last``), or a general message."""
    said = f"the training log at step {step} has train_accuracy={value!r}, the share of training examples "
    said += f"classified correctly since step {last} was {_share(truth.window(last, step)):.4f}"
    candidates = {
        "average over examples, not over batches (an epoch's last batch is smaller)": (
            sum(correct / seen for correct, seen in truth.window(last, step)) / len(truth.window(last, step))
        ),
        "reset your counts after each training log: count only since the previous one": _share(truth.window(0, step)),
        "leave evaluation batches out: compute_loss runs during evaluation too (check model.training)": _share(
            truth.window(last, step, training_only=False)
        ),
    }
    for advice, candidate in candidates.items():
        if isinstance(value, (int, float)) and abs(value - candidate) < 1e-6:
            return f"{said}: {advice}."
    return f"{said}. Count the correct predictions and the examples of each training batch, and divide at the log."


def _check_accuracy_trainer(answer: Any) -> None:
    from transformers import Trainer

    if not (inspect.isclass(answer) and issubclass(answer, Trainer)):
        raise Wrong(f"AccuracyLoggingTrainer should be a class that subclasses transformers.Trainer, got {answer!r}.")
    for rows, batch, accumulation, logging_steps, eval_steps in ACCURACY_CASES:
        model = fixtures.tiny_model(seed=1)
        truth = _Truth(model)
        settings = {
            "per_device_train_batch_size": batch,
            "gradient_accumulation_steps": accumulation,
            "num_train_epochs": 2,
            "logging_steps": logging_steps,
            "eval_strategy": "steps",
            "eval_steps": eval_steps,
            "per_device_eval_batch_size": 4,
            "learning_rate": 1e-3,
        }
        built = fixtures.trainer(
            settings,
            trainer_class=answer,
            model=model,
            train_dataset=fixtures.random_ids(rows, seed=2),
            eval_dataset=fixtures.random_ids(EVAL_ROWS, seed=3),
            callbacks=[truth.callback],
        )
        fixtures.train(built, "training with your AccuracyLoggingTrainer")
        history = built.state.log_history
        training = [entry for entry in history if "loss" in entry]
        max_steps = built.state.max_steps
        evaluations = len([step for step in range(1, max_steps + 1) if step % eval_steps == 0 or step == max_steps])
        expected = max_steps // logging_steps + evaluations + 1  # training logs, evaluations, the summary
        where = f"(batch {batch}, accumulation {accumulation}, logging_steps {logging_steps})"
        if len(history) != expected or len(training) != max_steps // logging_steps:
            raise Wrong(
                f"your run wrote {len(history)} log entries {where}, a Trainer writes {expected}: add train_accuracy "
                "to the Trainer's own training logs (override log) instead of logging entries of your own."
            )
        for entry in history:
            if "loss" not in entry and "train_accuracy" in entry:
                kind = "evaluation log" if "eval_loss" in entry else "summary at the end"
                raise Wrong(
                    f"the {kind} at step {entry['step']} carries train_accuracy: add it to training logs only "
                    "(those that hold 'loss')."
                )
        last = 0
        for entry in training:
            step = entry["step"]
            if "train_accuracy" not in entry:
                raise Wrong(
                    f"the training log at step {step} has no train_accuracy {where}: add the key in log() "
                    "before calling super().log()."
                )
            value = entry["train_accuracy"]
            if not isinstance(value, (int, float)) or abs(value - _share(truth.window(last, step))) > 1e-6:
                raise Wrong(_diagnose(value, truth, last, step) + f" {where}")
            last = step


def log_cases(seed: int = LOG_SEED) -> list[tuple[int, int | float, bool]]:
    """Six ``(max_steps, logging_steps, logging_first_step)`` cases, drawn from ``seed`` until they cover every
    kind of :data:`_COVERAGE`."""
    rng = random.Random(seed)
    while True:
        cases = []
        for _ in range(6):
            every: int | float = rng.choice([1, 2, 3, 4, 5, 0.2, 0.3, 0.45])
            cases.append((rng.randint(5, 13), every, rng.random() < 0.5))
        if all(any(kind(*case) for case in cases) for kind in _COVERAGE.values()):
            return cases


def _check_training_log_steps(answer: Any) -> None:
    if not callable(answer):
        raise Wrong(f"training_log_steps should be a function, got {type(answer).__name__}.")
    for max_steps, every, first in log_cases():
        settings = {
            "max_steps": max_steps,
            "logging_steps": every,
            "logging_first_step": first,
            "per_device_train_batch_size": 8,
            "save_strategy": "no",
        }
        built = fixtures.train(fixtures.trainer(settings, train_dataset=fixtures.random_ids(16)), "a check run")
        logged = [step for step, _ in fixtures.log_entries(built, "loss")]
        with learner_code(f"calling training_log_steps({max_steps}, {every}, {first})"):
            given = answer(max_steps, every, first)
        try:
            said = [int(step) for step in given]
        except (TypeError, ValueError):
            raise Wrong(f"training_log_steps should return a list of steps, got {given!r}.") from None
        if said != logged:
            hints = []
            if max_steps in said and max_steps not in logged:
                hints.append("the last step logs only when it falls on the interval")
            if isinstance(every, float):
                hints.append(f"a float logging_steps means ceil(max_steps x {every}) steps")
            if first and said.count(1) > 1:
                hints.append("step 1 logs once, even when it is on the interval too")
            if first and 1 not in said:
                hints.append("logging_first_step adds step 1")
            advice = "; ".join(hints) or "count the steps that are multiples of the interval"
            raise Wrong(
                f"max_steps={max_steps}, logging_steps={every}, logging_first_step={first}: you said {said}, "
                f"the run logged at {logged} ({advice})."
            )


q1 = Exercise(
    answer_name="AccuracyLoggingTrainer",
    checker=_check_accuracy_trainer,
    hint_text=(
        "Keep two counts on the Trainer: add each training batch's correct predictions and examples in "
        "compute_loss (only while model.training), and in log(), for a log that holds 'loss', add their ratio "
        "to logs and reset both, before the Trainer's own log method runs."
    ),
    solution_obj=solutions.AccuracyLoggingTrainer,
)

q2 = Exercise(
    answer_name="training_log_steps",
    checker=_check_training_log_steps,
    hint_text=(
        "The Trainer logs at each multiple of the interval up to max_steps (a float below 1 is a fraction of "
        "max_steps, rounded up), and at step 1 with logging_first_step; the last step only if it is a multiple."
    ),
    solution_obj=solutions.training_log_steps,
)


bind_exercises(globals())
