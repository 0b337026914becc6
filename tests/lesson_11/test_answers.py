"""Lesson 11's exercises, tried as learners write them: correct answers written differently from the
reference solution (they must pass) and realistic mistakes (they must fail with the hint that names the mistake).
The answers are written here, not imported from the solutions."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path

from exercise_cases import answer_tests
from transformers import TrainerCallback, TrainerControl
from transformers.trainer_callback import ExportableState
from transformers.trainer_utils import get_last_checkpoint


def latest_by_glob(output_dir):
    found = [p for p in Path(output_dir).glob("checkpoint-*") if p.is_dir() and p.name.split("-", 1)[1].isdigit()]
    return str(max(found, key=lambda p: int(p.name.split("-")[1]))) if found else None


def latest_by_library(output_dir):
    return get_last_checkpoint(output_dir)


def latest_by_text(output_dir):
    names = sorted(n for n in os.listdir(output_dir) if n.startswith("checkpoint-"))
    return os.path.join(output_dir, names[-1]) if names else None


def latest_name_only(output_dir):
    path = latest_by_glob(output_dir)
    return os.path.basename(path) if path else None


class CounterWithArgs(TrainerCallback, ExportableState):
    def __init__(self, evaluations=0):
        self.evaluations = evaluations

    def on_evaluate(self, args, state, control, **kwargs):
        self.evaluations = self.evaluations + 1

    def state(self):
        return {"args": {"evaluations": self.evaluations}, "attributes": {}}


class CounterAttributes(ExportableState, TrainerCallback):
    def __init__(self):
        self.evaluations = 0

    def on_evaluate(self, *args, **kwargs):
        self.evaluations += 1

    def state(self):
        return {"args": {}, "attributes": {"evaluations": self.evaluations}}


class CounterForgotState(TrainerCallback, ExportableState):
    def __init__(self):
        self.evaluations = 0

    def on_evaluate(self, args, state, control, **kwargs):
        self.evaluations += 1


class CounterNoExport(TrainerCallback):
    def __init__(self):
        self.evaluations = 0

    def on_evaluate(self, args, state, control, **kwargs):
        self.evaluations += 1


class CounterPredictionSteps(CounterAttributes):
    """Counts batches of evaluation: passed before, when the check's evaluation set was one batch."""

    def on_evaluate(self, *args, **kwargs):
        pass

    def on_prediction_step(self, *args, **kwargs):
        self.evaluations += 1


class CounterSaves(CounterAttributes):
    """Counts saves: passed before, when the check saved at every evaluation."""

    def on_evaluate(self, *args, **kwargs):
        pass

    def on_save(self, *args, **kwargs):
        self.evaluations += 1


class CounterFreshControl(CounterAttributes):
    """Counts right but returns a new TrainerControl, throwing away the Trainer's stop and save flags."""

    def on_evaluate(self, *args, **kwargs):
        self.evaluations += 1
        return TrainerControl()


class CounterFromSteps(CounterAttributes):
    """Wrong: works the count out from the step. Passed before, when every evaluation fell on a multiple of
    eval_steps."""

    def on_evaluate(self, args, state, control, **kwargs):
        self.evaluations = state.global_step // args.eval_steps


class CounterFromStepsPlusStart(CounterAttributes):
    """A hurried learner's try at the new check: the formula, plus one for the evaluation at the start."""

    def on_evaluate(self, args, state, control, **kwargs):
        self.evaluations = state.global_step // args.eval_steps + int(args.eval_on_start)


class CounterFromLogHistory(TrainerCallback):
    """Right, another route: counts the evaluations the Trainer logged; log_history comes back with the checkpoint."""

    def __init__(self):
        self.evaluations = 0

    def on_evaluate(self, args, state, control, **kwargs):
        self.evaluations = sum("eval_loss" in entry for entry in state.log_history)


# ---- 11.3: SIGTERM ----


class SigtermEvent(TrainerCallback):
    """Right, another route: a threading.Event, the handler installed when the callback is built."""

    def __init__(self):
        self.stop_now = threading.Event()
        self.before = signal.signal(signal.SIGTERM, lambda signum, frame: self.stop_now.set())

    def on_step_end(self, args, state, control, **kwargs):
        if self.stop_now.is_set():
            control.should_save, control.should_training_stop = True, True
        return control

    def on_train_end(self, args, state, control, **kwargs):
        signal.signal(signal.SIGTERM, self.before)


class SigtermAnyStepEvent(TrainerCallback):
    """Right, another route: looks for the request at the start of a step too, and keeps getsignal's answer."""

    def __init__(self):
        self.asked = False

    def on_train_begin(self, args, state, control, **kwargs):
        self.old_handler = signal.getsignal(signal.SIGTERM)
        signal.signal(signal.SIGTERM, self.note)

    def note(self, *_):
        self.asked = True

    def on_step_begin(self, args, state, control, **kwargs):
        self.on_step_end(args, state, control)

    def on_step_end(self, args, state, control, **kwargs):
        control.should_save = control.should_save or self.asked
        control.should_training_stop = control.should_training_stop or self.asked

    def on_train_end(self, args, state, control, **kwargs):
        signal.signal(signal.SIGTERM, self.old_handler)


class SigtermStopOnly(SigtermEvent):
    """Wrong: stops, but asks for no save."""

    def on_step_end(self, args, state, control, **kwargs):
        if self.stop_now.is_set():
            control.should_training_stop = True


class SigtermSaveOnly(SigtermEvent):
    """Wrong: saves, but goes on training."""

    def on_step_end(self, args, state, control, **kwargs):
        if self.stop_now.is_set():
            control.should_save = True
            self.stop_now.clear()


class SigtermNotRestored(SigtermEvent):
    """Wrong: leaves its handler in place after training (a later SIGTERM to the kernel would be ignored)."""

    def on_train_end(self, args, state, control, **kwargs):
        pass


class SigtermExits(TrainerCallback):
    """Wrong: the handler ends the process at once, as a 'graceful' exit."""

    def on_train_begin(self, args, state, control, **kwargs):
        self.before = signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(0))


class SigtermIgnored(TrainerCallback):
    """A hurried learner's try: ignore the signal, so the run is not killed."""

    def on_train_begin(self, args, state, control, **kwargs):
        self.before = signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def on_train_end(self, args, state, control, **kwargs):
        signal.signal(signal.SIGTERM, self.before)


class SigtermNoHandler(TrainerCallback):
    """Wrong: sets the flags once the signal came, but never installs a handler (nothing notes it)."""

    requested = False

    def on_step_end(self, args, state, control, **kwargs):
        if self.requested:
            control.should_save = control.should_training_stop = True


class SigtermAtStepBegin(SigtermEvent):
    """Wrong, a hurried learner's try: acts on the request at the start of the next step (one step late)."""

    def on_step_begin(self, args, state, control, **kwargs):
        if self.stop_now.is_set():
            control.should_save, control.should_training_stop = True, True

    def on_step_end(self, args, state, control, **kwargs):
        pass


class SigtermFreshControl(SigtermEvent):
    """Wrong, a hurried learner's try: returns a new TrainerControl from on_step_end, which drops the periodic log
    and save flags the Trainer set at that step."""

    def on_step_end(self, args, state, control, **kwargs):
        asked = self.stop_now.is_set()
        return TrainerControl(should_save=asked, should_training_stop=asked)


class SigtermRestoresDefault(SigtermEvent):
    """Wrong: puts SIG_DFL back at the end, not the handler that was there before."""

    def on_train_end(self, args, state, control, **kwargs):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class SigtermRestoredOnlyAfterSignal(TrainerCallback):
    """Wrong: puts the previous handler back when it acts on a SIGTERM, and never when no SIGTERM came."""

    def __init__(self):
        self.asked, self.before = False, None

    def on_train_begin(self, args, state, control, **kwargs):
        self.before = signal.signal(signal.SIGTERM, self._note)

    def _note(self, signum, frame):
        self.asked = True

    def on_step_end(self, args, state, control, **kwargs):
        if self.asked:
            control.should_save = control.should_training_stop = True
            signal.signal(signal.SIGTERM, self.before)


class SigtermFreshControlWhenAsked(SigtermEvent):
    """Wrong: returns a new TrainerControl only at the SIGTERM's step; it asks for the save and the stop, and drops
    the log that was due there."""

    def on_step_end(self, args, state, control, **kwargs):
        if self.stop_now.is_set():
            return TrainerControl(should_save=True, should_training_stop=True)
        return None


class SigtermOnOptimizerStep(SigtermEvent):
    """Wrong: acts in on_optimizer_step, which runs before the step's end: one step late."""

    def on_optimizer_step(self, args, state, control, **kwargs):
        if self.stop_now.is_set():
            control.should_save = control.should_training_stop = True

    def on_step_end(self, args, state, control, **kwargs):
        pass


# Realistic mistakes derived from the reference solution by one change.


def latest_checkpoint_no_empty_case(output_dir: str) -> str | None:
    """Wrong: fails on a folder without checkpoints instead of returning None."""
    names = [name for name in os.listdir(output_dir) if name.startswith("checkpoint-")]
    return os.path.join(output_dir, max(names, key=lambda name: int(name.split("-")[1])))


def counter_written_as_a_function(args, state, control, **kwargs):
    """The counter written as a function, not as a TrainerCallback class."""
    return None


CORRECT = {
    "q1": [latest_by_glob, latest_by_library],
    "q2": [CounterWithArgs, CounterAttributes, CounterFromLogHistory],
    "q3": [SigtermEvent, SigtermAnyStepEvent],
}

MISTAKES = {
    "q1": [
        (latest_by_text, "as ints"),
        (latest_name_only, "whole path"),
        (latest_checkpoint_no_empty_case, "on a folder without checkpoints"),
        ("runs/checkpoint-10", "must be a function of output_dir"),
    ],
    "q2": [
        (CounterForgotState, "implement a `state`"),
        (CounterNoExport, "ExportableState"),
        (CounterPredictionSteps, "Count once per evaluation"),
        (CounterSaves, "Count once per evaluation"),
        (CounterFreshControl, "new TrainerControl"),
        (CounterFromSteps, "does not always fall on a multiple of eval_steps"),
        (CounterFromStepsPlusStart, "do not fall on multiples of eval_steps"),
        (counter_written_as_a_function, "must be a class"),
    ],
    "q3": [
        (SigtermStopOnly, "ask for a save"),
        (SigtermSaveOnly, "the run went on to step"),
        (SigtermNotRestored, "was still yours"),
        (SigtermExits, "ended the process (SystemExit(0))"),
        (SigtermIgnored, "the run went on to step"),
        (SigtermNoHandler, "died of the SIGTERM"),
        (SigtermAtStepBegin, "one step late"),
        (SigtermFreshControl, "never a new TrainerControl"),
        (SigtermRestoresDefault, "was SIG_DFL, not the handler"),
        (SigtermRestoredOnlyAfterSignal, "in a run without a SIGTERM"),
        (SigtermFreshControlWhenAsked, "never a new TrainerControl"),
        (SigtermOnOptimizerStep, "not in on_optimizer_step of the next one"),
        ("SaveOnSigterm", "must be a class"),
    ],
}

test_a_correct_answer_written_differently_passes, test_a_realistic_mistake_fails_with_its_hint = answer_tests(
    CORRECT, MISTAKES
)
