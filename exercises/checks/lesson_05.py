"""Exercises of lesson 05 (callback events): a callback run inside a real Trainer, and event counts."""

from __future__ import annotations

import inspect
import math
import random
from typing import Any

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code, require_callback_result
from exercises.solutions import lesson_05 as solutions

COUNT_SEED = 5  # the check draws its cases from this seed each time it runs; the lesson's own run is not among them
LESSON_RUN = (64, 8, 2, 2)  # (examples, batch, accumulation, epochs) of lesson 05's run

# What the six drawn cases must cover between them, so that each usual shortcut fails on one of them. The last two
# are the corners where counting over the whole run, not epoch by epoch, gives another number: batches or an
# accumulation carried across the end of an epoch (24 examples, batch 4, accumulation 4, 2 epochs: 4 steps, not 3).
_COVERAGE = {
    "a short last batch": lambda n, b, a, e: n % b != 0,
    "a short last step": lambda n, b, a, e: math.ceil(n / b) % a != 0,
    "accumulation 1": lambda n, b, a, e: a == 1,
    "accumulation over 2": lambda n, b, a, e: a > 2,
    "more than one epoch": lambda n, b, a, e: e > 1,
    "a short last step in each of several epochs, fewer steps if carried over": lambda n, b, a, e: (
        e > 1 and math.ceil(math.ceil(n / b) * e / a) != e * math.ceil(math.ceil(n / b) / a)
    ),
    "a short last batch in each of several epochs, fewer batches if carried over": lambda n, b, a, e: (
        e > 1 and math.ceil(n * e / b) != e * math.ceil(n / b)
    ),
}


def count_cases(seed: int = COUNT_SEED) -> list[tuple[int, int, int, int]]:
    """Six ``(examples, batch, accumulation, epochs)`` cases, drawn at check time from ``seed`` until they cover
    every kind of :data:`_COVERAGE`; none is the lesson's run."""
    rng = random.Random(seed)
    while True:
        cases = [(rng.randint(9, 30), rng.randint(3, 8), rng.randint(1, 4), rng.randint(1, 3)) for _ in range(6)]
        covered = all(any(kind(*case) for case in cases) for kind in _COVERAGE.values())
        if covered and LESSON_RUN not in cases:
            return cases


def _check_eval_loss_history(answer: Any) -> None:
    from transformers import TrainerCallback

    if not (inspect.isclass(answer) and issubclass(answer, TrainerCallback)):
        raise Wrong(f"EvalLossHistory should be a class that subclasses TrainerCallback, got {answer!r}.")
    for eval_steps in (2, 3):
        with learner_code("creating EvalLossHistory()"):
            callback = answer()
        settings = {
            "per_device_train_batch_size": 8,
            "max_steps": 6,
            "eval_strategy": "steps",
            "eval_steps": eval_steps,
        }
        trainer = fixtures.trainer(
            {**settings, "logging_steps": 1}, eval_dataset=fixtures.random_ids(16, seed=1), callbacks=[callback]
        )
        fixtures.train(trainer, "training with your callback")
        expected = fixtures.log_entries(trainer, "eval_loss")
        history = getattr(callback, "history", None)
        if not isinstance(history, list):
            raise Wrong("each instance needs a list attribute `history` (create it in __init__).")
        if len(history) != len(expected):
            raise Wrong(
                f"with eval_steps={eval_steps} history has {len(history)} entries for {len(expected)} evaluations: "
                "record once per evaluation (on_evaluate), and give each instance its own list (in __init__)."
            )
        for pair, (true_step, true_loss) in zip(history, expected):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
                raise Wrong(
                    f"each entry should be a pair (global_step, eval_loss), a tuple or a list of two items; "
                    f"got {pair!r}."
                )
            step, loss = pair
            if step != true_step:
                raise Wrong(
                    f"you recorded step {step} for the evaluation at global_step {true_step}; use "
                    "state.global_step as it is."
                )
            if not isinstance(loss, float) or abs(loss - true_loss) > 1e-6:
                raise Wrong(
                    f"at step {step} you recorded {loss!r}, the evaluation gave eval_loss={true_loss:.4f}; "
                    "read it from the metrics kwarg."
                )


def _check_expected_counts(answer: Any) -> None:
    from helpers.callback_events import EventRecorder

    if not callable(answer):
        raise Wrong(f"expected_counts should be a function, got {type(answer).__name__}.")
    for examples, batch_size, accumulation, epochs in count_cases():
        recorder = EventRecorder()
        settings = dict(
            per_device_train_batch_size=batch_size,
            gradient_accumulation_steps=accumulation,
            num_train_epochs=epochs,
            save_strategy="no",
        )
        fixtures.train(fixtures.trainer(settings, train_dataset=fixtures.random_ids(examples), callbacks=[recorder]))
        counts = recorder.counts()
        measured = {event: counts[event] for event in ("on_step_end", "on_substep_end", "on_epoch_end")}
        with learner_code(f"calling expected_counts({examples}, {batch_size}, {accumulation}, {epochs})"):
            given = answer(examples, batch_size, accumulation, epochs)
        if not isinstance(given, dict):
            raise Wrong(f"expected_counts should return a dict, got {type(given).__name__}.")
        wrong = {event: (given.get(event), true) for event, true in measured.items() if given.get(event) != true}
        if wrong:
            details = ", ".join(
                f"{event}: you said {said}, the run fired it {true} times" for event, (said, true) in wrong.items()
            )
            raise Wrong(
                f"{examples} examples, batch {batch_size}, accumulation {accumulation}, {epochs} epoch(s): "
                f"{details}. A smaller last batch still counts, a last step can be short, and every batch "
                "that does not end a step ends with on_substep_end."
            )


# --- Shared by the checks of every lesson from 05 on whose answer is a callback ----------------------------------


def misspelled_events_note(answer: Any) -> str:
    """For a callback answer (class or instance) whose ``on_*`` methods include a near-miss of a real event
    (``on_evaluated``), the sentence that names them; ``""`` otherwise. An exercise whose answer is a callback
    passes it as ``wrong_note``, so it is added to a ``wrong`` verdict only: a correct callback with an ``on_*``
    helper method of its own is never failed for it."""
    from helpers.callback_events import is_trainer_callback, unknown_event_methods

    if not is_trainer_callback(answer):
        return ""
    near_misses = {name: event for name, event in unknown_event_methods(answer).items() if event}
    if not near_misses:
        return ""
    named = ", ".join(f"{name} (did you mean {event}?)" for name, event in near_misses.items())
    return f" Also: the Trainer never calls {named}; a misspelled event is skipped without a warning."


def validated_callback(callback: Any) -> Any:
    """Wrap a learner's callback (instance or class) so each event's return value is checked.

    Returns a ``TrainerCallback`` that forwards every event to ``callback`` and raises :class:`Wrong` (see
    :func:`~exercises.checks.core.require_callback_result`) when one returns something other than ``None`` or the
    control.
    """
    from transformers import TrainerCallback

    from helpers.callback_events import callback_event_names

    if isinstance(callback, type):
        if not issubclass(callback, TrainerCallback):
            raise Wrong(f"{callback.__name__} must inherit transformers.TrainerCallback.")
        with learner_code(f"creating {callback.__name__}()"):
            callback = callback()
    if not isinstance(callback, TrainerCallback):
        raise Wrong(
            f"a callback must be a transformers.TrainerCallback (instance or class), got {type(callback).__name__}."
        )

    class ValidatedCallback(TrainerCallback):
        wrapped = callback

    def forward(event: str) -> Any:
        def method(self: Any, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            with learner_code(f"running {type(callback).__name__}.{event}"):
                result = getattr(callback, event)(args, state, control, **kwargs)
            require_callback_result(result, event, type(callback).__name__)
            return result

        method.__name__ = event
        return method

    for event in callback_event_names():
        setattr(ValidatedCallback, event, forward(event))
    return ValidatedCallback()


q1 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="EvalLossHistory",
    checker=_check_eval_loss_history,
    hint_text=(
        "on_evaluate receives the evaluation's metrics as a keyword argument: record the step the state gives and the"
        " loss those metrics hold, in a list that each instance makes for itself (in __init__, not on the class)."
    ),
    solution_obj=solutions.EvalLossHistory,
)

q2 = Exercise(
    answer_name="expected_counts",
    checker=_check_expected_counts,
    hint_text=(
        "Count one epoch, then multiply: an epoch's last batch may be short, and its last step may gather fewer "
        "batches than the accumulation (an epoch never lends batches to the next). Every batch that does not end a "
        "step ends with on_substep_end."
    ),
    solution_obj=solutions.expected_counts,
)


bind_exercises(globals())
