"""The exercise machinery: ``exercise.check()``, ``exercise.hint()``, ``exercise.solution()``.

An :class:`Exercise` knows the name of the variable the learner fills in (``answer_name``), a ``checker``
that runs the learner's answer for real and returns a :class:`Verdict`, a hint, and the reference solution
(a function or value that lives in ``helpers/solutions``, out of the learner's sight).

``check()`` never raises, so "Run All" always completes: it reports one of three outcomes,

* ``passed``;
* ``wrong``, with a message that says what is wrong (an exception raised by the learner's code is
  reported here, with its type and message, never hidden);
* ``not attempted``, while the answer is still the stub (``None``, ``...``, or code that raises
  ``NotImplementedError``).

Checkers signal a wrong answer by raising :class:`Wrong` (or returning a Verdict). They should exercise
behaviour, so that a constant cannot pass.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

PASSED, WRONG, NOT_ATTEMPTED = "passed", "wrong", "not attempted"
_MISSING = object()


class Wrong(Exception):
    """Raised by a checker: the answer runs but does the wrong thing. The message is shown to the learner."""


class NotAttempted(Exception):
    """Raised by a checker (or the learner's stub) to mean: nothing has been written yet."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check."""

    status: str
    message: str
    exercise: str = ""

    @property
    def passed(self) -> bool:
        return self.status == PASSED

    def __str__(self) -> str:
        mark = {PASSED: "✅ Correct", WRONG: "❌ Not yet", NOT_ATTEMPTED: "✏️ Not attempted yet"}[self.status]
        head = f"{mark} ({self.exercise})" if self.exercise else mark
        return f"{head}: {self.message}" if self.message else head

    def _repr_markdown_(self) -> str:
        return f"**{str(self).split(':', 1)[0]}**" + (f": {self.message}" if self.message else "")


def is_stub(answer: Any) -> bool:
    """True for the untouched placeholders the notebooks hand out: ``None`` or ``...``."""
    return answer is None or answer is Ellipsis


@dataclass
class Exercise:
    """One exercise. See the module docstring for the contract.

    Attributes:
        name: a short id such as ``"02.1"``.
        answer_name: the notebook variable that holds the learner's answer.
        checker: ``checker(answer) -> Verdict | None``; raise :class:`Wrong` with a helpful message.
        hint_text: shown by :meth:`hint`.
        solution_obj: the reference answer (a function, class or value in ``helpers.solutions``).
        wrong_answers: realistic wrong answers that the tests prove are caught (with a useful message).
        stub: the placeholder the notebook starts with.
    """

    name: str
    answer_name: str
    checker: Callable[[Any], Verdict | None]
    hint_text: str
    solution_obj: Any
    wrong_answers: list[Any] = field(default_factory=list)
    stub: Any = None

    def _lookup(self, answer: Any) -> Any:
        if answer is not _MISSING:
            return answer
        namespace = getattr(sys.modules.get("__main__"), "__dict__", {})
        return namespace.get(self.answer_name, None)

    def evaluate(self, answer: Any = _MISSING) -> Verdict:
        """Run the check and return the verdict (``check`` prints it; tests use this)."""
        answer = self._lookup(answer)
        if is_stub(answer):
            return Verdict(NOT_ATTEMPTED, f"fill in `{self.answer_name}` and run this cell again.", self.name)
        try:
            verdict = self.checker(answer)
        except NotAttempted as reason:
            return Verdict(NOT_ATTEMPTED, str(reason) or f"fill in `{self.answer_name}`.", self.name)
        except NotImplementedError:
            return Verdict(NOT_ATTEMPTED, f"`{self.answer_name}` still raises NotImplementedError.", self.name)
        except Wrong as reason:
            return Verdict(WRONG, str(reason), self.name)
        except Exception as error:  # the learner's code failed: report it, with where it failed
            where = traceback.extract_tb(error.__traceback__)[-1]
            return Verdict(
                WRONG,
                f"your code raised {type(error).__name__}: {error} "
                f"(at {where.name}, line {where.lineno}). Fix that first; `.hint()` may help.",
                self.name,
            )
        if verdict is None:
            return Verdict(PASSED, "well done.", self.name)
        if not isinstance(verdict, Verdict):
            raise TypeError(f"checker of exercise {self.name} returned {type(verdict).__name__}, not a Verdict")
        return verdict

    def check(self, answer: Any = _MISSING) -> Verdict:
        """Check the learner's answer (read from the notebook variable ``answer_name`` if not given)."""
        verdict = self.evaluate(answer)
        print(verdict)
        return verdict

    def hint(self) -> None:
        """Print the hint."""
        print(f"Hint ({self.name}): {self.hint_text}")

    def solution(self) -> None:
        """Print the reference solution's source code (or its value)."""
        print(f"Solution ({self.name}):\n")
        print(solution_source(self.solution_obj))


def solution_source(obj: Any) -> str:
    """Source of a function or class; ``repr`` of anything else."""
    if inspect.isfunction(obj) or inspect.isclass(obj):
        return textwrap.dedent(inspect.getsource(obj))
    return f"{obj!r}"


# --- Validation of learners' code handed to a Trainer inside a checker ---------------------------------------


def require_metrics_dict(result: Any, name: str = "compute_metrics") -> dict[str, float]:
    """Return ``result`` if it is what ``Trainer`` expects from ``compute_metrics``; raise :class:`Wrong` if not.

    The Trainer wants a dict that maps metric names (str) to numbers. Anything else fails later, deep inside
    evaluation, with a message that does not point at the learner's function; this check points at it.
    """
    import numbers

    if not isinstance(result, dict):
        raise Wrong(
            f"{name} returned {type(result).__name__} ({result!r:.60}); it must return a dict such as "
            "{'accuracy': 0.8}, mapping each metric name to a number."
        )
    for key, value in result.items():
        if not isinstance(key, str):
            raise Wrong(
                f"{name} returned a dict with the key {key!r}; metric names must be strings such as 'accuracy'."
            )
        if isinstance(value, bool) or not isinstance(value, numbers.Number) and not _is_scalar_array(value):
            raise Wrong(
                f"{name} returned {key!r}: {type(value).__name__}; each metric must be a single number "
                "(use float(...) on a NumPy scalar or a one-element array)."
            )
    return result


def _is_scalar_array(value: Any) -> bool:
    return getattr(value, "shape", None) == () and getattr(value, "dtype", None) is not None


def require_callback_result(result: Any, event: str, callback_name: str = "your callback") -> None:
    """Raise :class:`Wrong` unless an event returned ``None`` or a ``TrainerControl``.

    The Trainer replaces its ``control`` with whatever an event returns (when it is not ``None``), so returning
    ``True`` or the ``state`` breaks the run a few lines later with an unrelated ``AttributeError``.
    """
    from transformers import TrainerControl

    if result is not None and not isinstance(result, TrainerControl):
        raise Wrong(
            f"{callback_name}.{event} returned {type(result).__name__}; an event must return None or the "
            "`control` object it received (set its flags, e.g. control.should_training_stop = True)."
        )


def validated_compute_metrics(function: Callable[[Any], Any], name: str = "compute_metrics") -> Callable[[Any], Any]:
    """Wrap a learner's ``compute_metrics`` so a wrong return type is reported as :class:`Wrong`, clearly."""
    if not callable(function):
        raise Wrong(f"{name} must be a function that takes an EvalPrediction, got {type(function).__name__}.")

    def checked(prediction: Any) -> dict[str, float]:
        return require_metrics_dict(function(prediction), name)

    return checked


def validated_callback(callback: Any) -> Any:
    """Wrap a learner's callback (instance or class) so each event's return value is checked.

    Returns a ``TrainerCallback`` that forwards every event to ``callback`` and raises :class:`Wrong` (see
    :func:`require_callback_result`) when one returns something other than ``None`` or the control.
    """
    from transformers import TrainerCallback

    if isinstance(callback, type):
        if not issubclass(callback, TrainerCallback):
            raise Wrong(f"{callback.__name__} must inherit transformers.TrainerCallback.")
        callback = callback()
    if not isinstance(callback, TrainerCallback):
        raise Wrong(
            f"a callback must be a transformers.TrainerCallback (instance or class), got {type(callback).__name__}."
        )
    from helpers.callbacks import callback_event_names

    class ValidatedCallback(TrainerCallback):
        wrapped = callback

    def forward(event: str) -> Callable[..., Any]:
        def method(self: Any, args: Any, state: Any, control: Any, **kwargs: Any) -> Any:
            result = getattr(callback, event)(args, state, control, **kwargs)
            require_callback_result(result, event, type(callback).__name__)
            return result

        method.__name__ = event
        return method

    for event in callback_event_names():
        setattr(ValidatedCallback, event, forward(event))
    return ValidatedCallback()
