"""The exercise machinery: ``exercise.check()``, ``exercise.hint()``, ``exercise.solution()``.

An :class:`Exercise` knows the name of the variable the learner fills in (``answer_name``), a ``checker``
that runs the learner's answer for real and returns a :class:`Verdict` (or ``None`` for a pass), a hint, and the
reference solution (it lives in ``exercises/solutions``, out of the learner's sight).

An exercise's id is never typed: a check module defines ``q1``, ``q2``, ... and ends with
``bind_exercises(globals())``, which names each ``qK`` ``"NN.K"`` after the module's lesson number
(``exercises.checks.lesson_NN``). Renumbering a lesson renames its modules, and the ids follow.

``check()`` never raises, so "Run All" always completes. It displays one verdict and returns ``None``:

* ``passed``;
* ``wrong``, with a message that says what is wrong. Checkers raise :class:`Wrong`, and run the learner's code
  inside :func:`learner_code`, which turns an exception raised there into a ``wrong`` verdict that names the
  step and the error. An exercise may add a note of its own to every ``wrong`` verdict (``wrong_note``: lesson
  05's check module has one that names a callback's misspelled events);
* ``not attempted``, while the answer is still the stub the notebook hands out (``Exercise.stub``, ``None`` or
  ``...``), or when a checker raises :class:`NotAttempted`;
* ``check failed``: an exception raised by the check's own code (outside :func:`learner_code`) is a bug in the
  check, reported as such, never blamed on the learner.
"""

from __future__ import annotations

import inspect
import os
import re
import sys
import textwrap
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

PASSED, WRONG, NOT_ATTEMPTED, CHECK_FAILED = "passed", "wrong", "not attempted", "check failed"
_MISSING = object()
# Text symbols, not emoji: DejaVu Sans (the font Debian, JupyterLab and the book fall back to) has all four, so
# the mark renders in a browser without an emoji font (tests/browser checks it).
_MARKS = {
    PASSED: "✔ Correct",
    WRONG: "✘ Not yet",
    NOT_ATTEMPTED: "✎ Not attempted yet",
    CHECK_FAILED: "⚠ Check failed",
}


class Wrong(Exception):
    """Raised by a checker: the answer runs but does the wrong thing. The message is shown to the learner."""


class NotAttempted(Exception):
    """Raised by a checker to mean: nothing has been written yet."""


class LearnerError(Wrong):
    """The learner's code raised while a checker ran it (see :func:`learner_code`); reported as ``wrong``."""


def _package_folder(name: str) -> str:
    """The folder of the course's package ``name``, ending in a separator (its modules' frames start with it)."""
    import importlib.util

    return os.path.dirname(importlib.util.find_spec(name).origin) + os.sep


COURSE_PACKAGES = (_package_folder("helpers"), _package_folder("exercises"))
"""The folders of the course's runtime and exercises: a frame in them is neither the learner's nor a library's."""


def _where(error: BaseException) -> str:
    """The deepest frame of the traceback outside the libraries and the course's packages (helpers, exercises):
    most likely the learner's line."""
    frames = traceback.extract_tb(error.__traceback__)
    own = [
        f
        for f in frames
        if not f.filename.startswith(COURSE_PACKAGES)
        and not any(part in f.filename for part in ("site-packages", "<string>"))
    ]
    frame = (own or frames)[-1]
    return f"{frame.name}, line {frame.lineno}"


@contextmanager
def learner_code(step: str, advice: str = "") -> Iterator[None]:
    """Mark the part of a checker that runs the learner's code (``step`` says what it does, e.g.
    ``"calling your compute_metrics"``). An exception raised inside becomes a ``wrong`` verdict naming the step,
    the error and ``advice``; :class:`Wrong` and :class:`NotAttempted` pass through unchanged."""
    try:
        yield
    except (Wrong, NotAttempted):
        raise
    except Exception as error:
        library = (
            " A NotImplementedError you did not write comes from the library: a method it asks you to write."
            if isinstance(error, NotImplementedError)
            else ""
        )
        raise LearnerError(
            f"your code raised {type(error).__name__} while {step}: {error} (at {_where(error)}).{library}"
            + (f" {advice}" if advice else " Fix that first; `.hint()` may help.")
        ) from error


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
        head = f"{_MARKS[self.status]} ({self.exercise})" if self.exercise else _MARKS[self.status]
        return f"{head}: {self.message}" if self.message else head


@contextmanager
def one_torch_thread(active: bool = True) -> Iterator[None]:
    """Run the block with torch's intra-op pool at one thread, then put back the kernel's count.

    The checks train models 32 wide: each operation is microseconds of work, and on two threads every one of them
    ends in a barrier where a thread waits for the other to be scheduled. On a 2-core machine with anything else
    running, that wait is most of the check: a check of lesson 03 took 42 s of wall time on two threads (15 s of
    CPU) and 2.4 s on one, lesson 05's 16.4 s and 3.0 s (tools/first_checks.py, load average 8 on 2 cores)."""
    if not active:
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def is_stub(answer: Any, stub: Any = None) -> bool:
    """True for the untouched placeholder: ``stub`` (the notebook's), ``None`` or ``...``."""
    return answer is None or answer is Ellipsis or answer is stub


@dataclass
class Exercise:
    """One exercise. See the module docstring for the contract.

    Attributes:
        answer_name: the notebook variable that holds the learner's answer.
        checker: ``checker(answer) -> Verdict | None``; raise :class:`Wrong` with a helpful message and run the
            learner's code inside :func:`learner_code`.
        hint_text: shown by :meth:`hint`: the mistake to look for and the idea to use, never the solution's code.
        solution_obj: the reference answer (a function, class or value in ``exercises.solutions``).
        stub: the placeholder the notebook starts with.
        one_thread: run the check with torch on one thread (:func:`one_torch_thread`), as every check on the
            course's tiny models should; the capstone's project, which trains the course model, keeps the kernel's.
        wrong_note: ``wrong_note(answer) -> str``, a sentence added to every ``wrong`` verdict (``""`` for none).
        name: the id ``"NN.K"``, set by :func:`bind_exercises`; never typed.

    Realistic wrong answers, each with the part of the hint it must get, live in one place:
    ``tests/lesson_NN/test_answers.py`` (``MISTAKES``), beside the correct answers written differently.
    """

    answer_name: str
    checker: Callable[[Any], Verdict | None]
    hint_text: str
    solution_obj: Any
    stub: Any = None
    wrong_note: Callable[[Any], str] | None = None
    name: str = ""
    one_thread: bool = True

    def _lookup(self, answer: Any) -> Any:
        if answer is not _MISSING:
            return answer
        namespace = getattr(sys.modules.get("__main__"), "__dict__", {})
        return namespace.get(self.answer_name, None)

    def evaluate(self, answer: Any = _MISSING) -> Verdict:
        """Run the check and return the verdict (``check`` displays it; tests use this)."""
        answer = self._lookup(answer)
        if is_stub(answer, self.stub):
            return Verdict(
                NOT_ATTEMPTED,
                f"define `{self.answer_name}` (in this cell or one above) and run this cell again.",
                self.name,
            )
        try:
            with one_torch_thread(self.one_thread):
                verdict = self.checker(answer)
        except NotAttempted as reason:
            return Verdict(NOT_ATTEMPTED, str(reason) or f"fill in `{self.answer_name}`.", self.name)
        except Wrong as reason:
            note = self.wrong_note(answer) if self.wrong_note else ""
            return Verdict(WRONG, str(reason) + note, self.name)
        except Exception as error:  # raised by the check's own code, not inside learner_code()
            return Verdict(
                CHECK_FAILED,
                f"this is a bug in the check, not in your answer: {type(error).__name__}: {error} "
                f"(at {traceback.extract_tb(error.__traceback__)[-1].name}); tell your teacher.",
                self.name,
            )
        if verdict is None:
            return Verdict(PASSED, "well done.", self.name)
        if not isinstance(verdict, Verdict):
            bug = f"this is a bug in the check, not in your answer: it returned {type(verdict).__name__}."
            return Verdict(CHECK_FAILED, bug + " Tell your teacher.", self.name)
        return verdict

    def check(self, answer: Any = _MISSING) -> None:
        """Check the learner's answer (read from the notebook variable ``answer_name`` if not given) and print
        the verdict once. Returns ``None``, so a notebook shows the verdict once."""
        print(self.evaluate(answer))

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


def bind_exercises(namespace: dict[str, Any]) -> list[Exercise]:
    """Name the exercises ``q1``, ``q2``, ... of a check module ``exercises.checks.lesson_NN`` ``"NN.1"``,
    ``"NN.2"``, ...; call it as ``bind_exercises(globals())`` at the end of the module. Returns them in order.

    Raises ``ValueError`` when the module is not a lesson's check module, or its exercises are not numbered
    1, 2, ... without a gap."""
    module = str(namespace.get("__name__", ""))
    found = re.fullmatch(r"(?:.*\.)?lesson_(\d\d)", module)
    if found is None:
        raise ValueError(f"bind_exercises(globals()) belongs in a module named lesson_NN, not in {module!r}.")
    exercises = {int(key[1:]): value for key, value in namespace.items() if re.fullmatch(r"q\d+", key)}
    if sorted(exercises) != list(range(1, len(exercises) + 1)):
        raise ValueError(f"{module}: number the exercises q1, q2, ... without a gap (found {sorted(exercises)}).")
    for number, exercise in sorted(exercises.items()):
        if not isinstance(exercise, Exercise):
            raise ValueError(f"{module}: q{number} is a {type(exercise).__name__}, not an Exercise.")
        exercise.name = f"{found.group(1)}.{number}"
    return [exercises[number] for number in sorted(exercises)]


# --- Validation of learners' code handed to a Trainer inside a checker ---------------------------------------


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
