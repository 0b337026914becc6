"""Exercises of lesson 11 (checkpoints and resume): ``q1`` finds the latest checkpoint, ``q2`` writes a
callback whose state survives an interrupted and resumed run."""

from __future__ import annotations

import json
import os
import random
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import torch
from transformers import TrainerCallback

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.checks.lesson_05 import misspelled_events_note
from exercises.solutions import lesson_11 as solutions


def _check_latest_checkpoint(latest_checkpoint: Any) -> None:
    if not callable(latest_checkpoint):
        raise Wrong(f"latest_checkpoint must be a function of output_dir, got {type(latest_checkpoint).__name__}.")
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        empty = Path(tmp) / "empty"
        empty.mkdir()
        (empty / "runs").mkdir()
        with learner_code("calling latest_checkpoint on a folder without checkpoints"):
            nothing = latest_checkpoint(str(empty))
        if nothing is not None:
            raise Wrong("a folder without checkpoint-N folders must give None.")
        folder = Path(tmp) / "run"
        # The largest step starts with a smaller digit than another one, so comparing names as text fails.
        steps = [rng.randint(1, 4), rng.randint(5, 9), rng.randint(10, 49)]
        for step in steps:
            (folder / f"checkpoint-{step}").mkdir(parents=True)
        (folder / "runs").mkdir()
        (folder / "checkpoint-99.log").write_text("a file, not a checkpoint")
        (folder / "checkpoint-tmp").mkdir()
        with learner_code(f"calling latest_checkpoint on {sorted(f'checkpoint-{s}' for s in steps)}"):
            answer = latest_checkpoint(str(folder))
        expected = folder / f"checkpoint-{max(steps)}"
        if answer is None:
            raise Wrong(f"the folder holds {sorted(f'checkpoint-{s}' for s in steps)} but you returned None.")
        if not isinstance(answer, str):
            raise Wrong(f"return the path as a str (os.path.join or str(path)), got {type(answer).__name__}.")
        if Path(answer) != expected and Path(answer).name == expected.name:
            raise Wrong(f"you returned {answer!r}: return the whole path, os.path.join(output_dir, name).")
        if Path(answer) != expected:
            raise Wrong(
                f"for {sorted(f'checkpoint-{s}' for s in steps)} you returned {Path(answer).name}, "
                f"not checkpoint-{max(steps)}. Keep only folders named checkpoint-<digits> and compare the step "
                "numbers as ints, not the names as text; return the whole path."
            )


RESUME_SEED = 112  # the check draws its run from this seed each time it runs; the lesson's run is not among them
_EVAL_ROWS, _EVAL_BATCH = 24, 8  # each evaluation runs 3 batches, so counting prediction steps counts something else


def resume_case(seed: int = RESUME_SEED) -> tuple[int, int, int]:
    """``(eval_steps, stop_step, max_steps)``: the run evaluates at its start (``eval_on_start``, again when it
    resumes) and at its end, and it stops, saves and resumes between two of the ``eval_steps`` evaluations, so an
    evaluation count is never ``global_step // eval_steps``, nor a count of saves, steps or logs."""
    rng = random.Random(seed)
    eval_steps = rng.choice([2, 3])
    stop_step = rng.choice([step for step in range(3, 8) if step % eval_steps])
    max_steps = rng.choice([step for step in range(stop_step + 3, stop_step + 8) if step % eval_steps])
    return eval_steps, stop_step, max_steps


class _Evaluations(TrainerCallback):
    """The check's own count of the evaluations of one run (``evaluations``), and its stop at ``stop_step``."""

    def __init__(self, stop_step: int | None) -> None:
        self.stop_step, self.evaluations = stop_step, 0

    def on_evaluate(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.evaluations += 1

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if self.stop_step is not None and state.global_step >= self.stop_step:
            control.should_training_stop = True


def _run_eval_counter(callback_class: type, output_dir: str, stop_step: int | None, case: tuple[int, int, int]) -> Any:
    """One run (the first, stopped at ``stop_step``, or the resumed one): the live instance of the learner's class
    and the check's own count of the run's evaluations."""
    eval_steps, save_steps, max_steps = case
    settings = dict(
        output_dir=output_dir,
        max_steps=max_steps,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=_EVAL_BATCH,
        eval_strategy="steps",
        eval_steps=eval_steps,
        eval_on_start=True,
        save_steps=save_steps,
        restore_callback_states_from_checkpoint=True,
    )
    with learner_code("creating EvalCounter()"):
        callback = callback_class()
    counted = _Evaluations(stop_step)
    trainer = fixtures.trainer(
        settings, eval_dataset=fixtures.random_ids(_EVAL_ROWS, seed=1), callbacks=[callback, counted]
    )
    resume = stop_step is None
    step = "resuming with your callback" if resume else "training (and saving checkpoints) with your callback"
    fixtures.train(trainer, step, resume_from_checkpoint=True if resume else None)
    expected_step = max_steps if resume else stop_step
    if trainer.state.global_step != expected_step:
        raise Wrong(
            f"the run went to step {trainer.state.global_step}, not {expected_step}: an event of your callback "
            "returned a new TrainerControl, which throws away the Trainer's own flags (stop, save). Change the "
            "`control` you receive, or return None."
        )
    live = [cb for cb in trainer.callback_handler.callbacks if isinstance(cb, callback_class)]
    if not live:
        raise Wrong("after the resume no instance of your class is among trainer.callback_handler.callbacks.")
    return live[0], counted.evaluations


def _check_eval_counter(eval_counter: Any) -> None:
    if not isinstance(eval_counter, type):
        raise Wrong(f"EvalCounter must be a class (a TrainerCallback subclass), got {type(eval_counter).__name__}.")
    if not issubclass(eval_counter, TrainerCallback):
        raise Wrong("EvalCounter must inherit transformers.TrainerCallback.")
    with learner_code("creating EvalCounter()"):
        fresh = eval_counter()
    if not hasattr(fresh, "evaluations"):
        raise Wrong("an EvalCounter() needs an attribute `evaluations` (set it to 0 in __init__).")
    case = resume_case()
    eval_steps, stop_step, max_steps = case
    with tempfile.TemporaryDirectory() as tmp:
        first, before = _run_eval_counter(eval_counter, tmp, stop_step, case)
        if first.evaluations != before:
            raise Wrong(
                f"{stop_step} steps with eval_steps={eval_steps} and eval_on_start=True ran {before} evaluations (of "
                f"{_EVAL_ROWS // _EVAL_BATCH} batches each; one save, at step {stop_step}), but your callback "
                f"counted {first.evaluations!r}. Count once per evaluation, in on_evaluate: an evaluation does not "
                "always fall on a multiple of eval_steps."
            )
        resumed, after = _run_eval_counter(eval_counter, tmp, None, case)
    if resumed.evaluations != before + after:
        said = (
            f"resumed from checkpoint-{stop_step} and run to step {max_steps} (evaluating when it resumed, every "
            f"{eval_steps} steps and at the end), your callback counted {resumed.evaluations!r} evaluations; the "
            f"whole run had {before + after}, {after} of them after the resume."
        )
        if resumed.evaluations == after:
            raise Wrong(
                f"{said} The count started again: the Trainer builds a new instance on resume from what the "
                "checkpoint kept of it: inherit transformers.trainer_callback.ExportableState and put the count in "
                "what state() returns (lesson 11, section 8)."
            )
        raise Wrong(
            f"{said} Count once per evaluation, in on_evaluate, from what the checkpoint kept: the evaluations at "
            "the resume and at the end do not fall on multiples of eval_steps."
        )


# ---- 11.3: SIGTERM, saved for ----

SIGNAL_SEED = 113
KILLED = 143  # the exit code of the check's stand-in for the handler a process starts with: it dies, as by default
SIGTERM_TIMEOUT_S = 60


LOG_EVERY = 2  # the check's run logs every 2 steps and saves on its own schedule (save_every), as real runs do


def signal_case(seed: int = SIGNAL_SEED) -> tuple[int, int]:
    """``(the step during which the SIGTERM comes, max_steps)``."""
    rng = random.Random(seed)
    step = rng.randint(3, 8)
    return step, step + rng.randint(8, 12)


def due_case(seed: int = SIGNAL_SEED) -> int:
    """A second SIGTERM's step, where the run's own log and save are due (a new TrainerControl there drops them)."""
    return LOG_EVERY * random.Random(seed + 1).randint(2, 3)


QUIET_STEPS = 3  # a run that no SIGTERM interrupts: it trains to the end, and the handler is put back all the same


def save_every(at: int) -> int:
    """The check's run's ``save_steps``: at least one periodic save comes before step ``at``, none at ``at``, so a
    callback that drops the Trainer's own flags (a new ``TrainerControl``) shows, and the SIGTERM's save is the
    answer's."""
    return next(every for every in (2, 3, 4, 5) if every < at and at % every)


def _handler_name(handler: Any) -> str:
    """How a SIGTERM handler reads in a message: SIG_DFL, SIG_IGN, or the function's name."""
    for name in ("SIG_DFL", "SIG_IGN"):
        if handler == getattr(signal, name):
            return name
    return getattr(handler, "__qualname__", repr(handler))


def _dies(signum: int, frame: Any) -> None:
    """The SIGTERM handler the check's process starts with: the process dies, as one without a handler does."""
    os._exit(KILLED)


class _Handshake(TrainerCallback):
    """In the child: at the end of step ``at`` it says so to the parent and waits until the parent has sent the
    SIGTERM, so the signal comes at the same point of the run every time."""

    def __init__(self, at: int, out: Any, inp: Any) -> None:
        self.at, self.out, self.inp = at, out, inp

    def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        if state.global_step == self.at:
            self.out.write(f"step {self.at}\n")
            self.out.flush()
            self.inp.readline()  # the parent's go, after its SIGTERM: the handler runs while this waits


def _child(answer: type, folder: str, at: int | None, run: tuple[int, int], fds: tuple[int, int]) -> None:
    """The forked run: the learner's callback after the handshake, its report as one JSON line, then the end."""
    inp, out = os.fdopen(fds[0]), os.fdopen(fds[1], "w")
    silent = os.open(os.devnull, os.O_WRONLY)
    os.dup2(silent, 1)
    os.dup2(silent, 2)
    signal.signal(signal.SIGTERM, _dies)
    torch.set_num_threads(1)
    report: dict[str, Any] = {}
    try:
        with learner_code("creating SaveOnSigterm()"):
            callback = answer()
        max_steps, save_steps = run
        settings = dict(
            output_dir=folder,
            max_steps=max_steps,
            per_device_train_batch_size=4,
            save_steps=save_steps,
            logging_steps=LOG_EVERY,
        )
        handshake = [] if at is None else [_Handshake(at, out, inp)]
        trainer = fixtures.trainer(settings, callbacks=[*handshake, callback])
        fixtures.train(trainer, "training with your callback")
        handler = signal.getsignal(signal.SIGTERM)
        logged = [entry["step"] for entry in trainer.state.log_history if "loss" in entry]
        report.update(
            step=trainer.state.global_step, restored=handler is _dies, handler=_handler_name(handler), logged=logged
        )
    except Wrong as error:
        report["error"] = str(error)
    except SystemExit as error:
        report["exit"] = f"SystemExit({error.code!r})"
    except BaseException as error:  # noqa: BLE001 (reported by the parent, the learner's signal handler raised it)
        report["error"] = f"your code raised {type(error).__name__} when the SIGTERM came: {error}"
    out.write(json.dumps(report) + "\n")
    out.flush()
    os._exit(0)


def _run_until_sigterm(
    answer: type, folder: str, at: int | None, run: tuple[int, int]
) -> tuple[int | None, dict[str, Any]]:
    """Fork the run (``run``: max_steps, save_steps), SIGTERM it during step ``at`` (never when ``at`` is None);
    (its exit code, its report)."""
    import multiprocessing
    import select

    to_child, from_parent = os.pipe()
    from_child, to_parent = os.pipe()
    child = multiprocessing.get_context("fork").Process(
        target=_child, args=(answer, folder, at, run, (to_child, to_parent))
    )
    child.start()
    os.close(to_child), os.close(to_parent)
    report: dict[str, Any] = {}
    with os.fdopen(from_child) as reading:
        deadline = time.monotonic() + SIGTERM_TIMEOUT_S
        while time.monotonic() < deadline and select.select([reading], [], [], deadline - time.monotonic())[0]:
            line = reading.readline()
            if not line:
                break
            if line.startswith("step "):
                os.kill(child.pid, signal.SIGTERM)  # what `kill <pid>`, Slurm and Kubernetes send
                time.sleep(0.05)
                try:
                    os.write(from_parent, b"go\n")
                except BrokenPipeError:  # the child is gone already (died of the signal, or ended itself)
                    pass
            else:
                report = json.loads(line)
    os.close(from_parent)
    child.join(timeout=10)
    if child.is_alive():
        child.kill()
        child.join()
        raise RuntimeError(f"the run with the callback did not end within {SIGTERM_TIMEOUT_S} s")
    return child.exitcode, report


def _events_before_step_end(answer: type) -> list[str]:
    """The events that run before on_step_end in a step which ``answer`` (or a class of its own above it) defines:
    acting on the request in one of them acts one step late (the SIGTERM came during the step, after them)."""
    own = [cls for cls in answer.__mro__ if cls is not TrainerCallback and issubclass(cls, TrainerCallback)]
    events = ("on_step_begin", "on_pre_optimizer_step", "on_optimizer_step", "on_substep_end")
    return [event for event in events if any(event in vars(cls) for cls in own)]


def _check_save_on_sigterm(answer: Any) -> None:
    if not (isinstance(answer, type) and issubclass(answer, TrainerCallback)):
        raise Wrong(f"SaveOnSigterm must be a class that subclasses transformers.TrainerCallback, got {answer!r}.")
    at, max_steps = signal_case()
    _check_sigterm_run(answer, at, (max_steps, save_every(at)))
    due = due_case()  # a log and a save due at the SIGTERM's step
    _check_sigterm_run(answer, due, (due + 6, due))
    _check_quiet_run(answer)


def _check_quiet_run(answer: type) -> None:
    """A run without a SIGTERM: it trains to max_steps and puts the handler back when training ends."""
    with tempfile.TemporaryDirectory() as folder:
        code, report = _run_until_sigterm(answer, folder, None, (QUIET_STEPS, QUIET_STEPS + 1))
    if code or not report or "exit" in report or "error" in report:
        ended = f"the process ended (exit code {code}, {report.get('exit', 'no report')})"
        raise Wrong(f"in a run without a SIGTERM, {report.get('error', ended)}")
    if report["step"] != QUIET_STEPS:
        raise Wrong(
            f"in a run without a SIGTERM your callback stopped the run at step {report['step']} of {QUIET_STEPS}: "
            "stop only once the signal has come."
        )
    if not report["restored"]:
        raise Wrong(
            f"in a run without a SIGTERM, after train() returned, the process's SIGTERM handler was still yours "
            f"({report['handler']}): put back the handler that was there before when training ends "
            "(on_train_end), whether a SIGTERM came or not."
        )


def _check_sigterm_run(answer: type, at: int, run: tuple[int, int]) -> None:
    """A run of ``run`` (max_steps, save_steps) that gets a SIGTERM during step ``at``: it saves and stops there,
    keeps the Trainer's own logs and saves, and puts the handler back."""
    from helpers.lessons.lesson_11 import require_resumable

    max_steps, every = run
    with tempfile.TemporaryDirectory() as folder:
        code, report = _run_until_sigterm(answer, folder, at, run)
        saved = sorted(int(path.name.split("-")[1]) for path in Path(folder).glob("checkpoint-*"))
        if code in (KILLED, -signal.SIGTERM) or not report:
            raise Wrong(
                f"the run died of the SIGTERM sent during step {at} (exit code {code}), as a process without a "
                "handler does: install yours with signal.signal when training begins."
            )
        if "exit" in report:
            raise Wrong(
                f"your code ended the process ({report['exit']}) when the SIGTERM came during step {at}, with no "
                "checkpoint: let the handler only note the request, and the callback act on it at the end of a step."
            )
        if "error" in report:
            raise Wrong(report["error"])
        step = report["step"]
        if step == at + 1 and at + 1 in saved:
            events = _events_before_step_end(answer)
            where = f"in {' or '.join(events)} of the next one" if events else "in an event of the next one"
            raise Wrong(
                f"the SIGTERM came during step {at}, and your callback saved and stopped at step {step}: one step "
                "late, the run trained a step it then had to save. Act on the request at the end of the step under "
                f"way (on_step_end), not {where}: {', '.join(events) or 'those events'} run before a step's end."
            )
        if step > at:
            raise Wrong(
                f"the SIGTERM came during step {at}, and the run went on to step {step} (max_steps={max_steps}): "
                "once it has come, stop the run (should_training_stop) at the end of the step under way."
            )
        periodic = list(range(every, at + 1, every))
        lost_saves = [number for number in periodic if number not in saved]
        lost_logs = [number for number in range(LOG_EVERY, at + 1, LOG_EVERY) if number not in report["logged"]]
        if lost_saves or lost_logs:
            raise Wrong(
                f"the run logs every {LOG_EVERY} steps and saves every {every} steps, but up to the SIGTERM (step "
                f"{at}) it left "
                f"no checkpoint at steps {lost_saves or 'none missing'} and no log at steps "
                f"{lost_logs or 'none missing'}: your callback throws away the flags the Trainer set for them. "
                "Change the control you receive (or return that one), never a new TrainerControl."
            )
        kept = [number for number in saved if number == at]
        if not kept:
            due = (at // every + 1) * every
            raise Wrong(
                f"the run stopped at step {step}, after the SIGTERM of step {at}, without a checkpoint of where it "
                f"stood (checkpoints: {saved or 'none'}; the next one was due at step {due}): ask for a save "
                "(should_save) together with the stop."
            )
        try:
            require_resumable(Path(folder) / f"checkpoint-{kept[-1]}")
        except ValueError as error:
            raise Wrong(f"the checkpoint the run left cannot resume it: {error}") from None
        if not report["restored"] and report["handler"] in ("SIG_DFL", "SIG_IGN"):
            raise Wrong(
                f"after train() returned, the process's SIGTERM handler was {report['handler']}, not the handler that "
                "was there before training (the check's own): put back what signal.signal returned when you "
                "installed yours, not a default."
            )
        if not report["restored"]:
            raise Wrong(
                f"after train() returned, the process's SIGTERM handler was still yours ({report['handler']}): when "
                "training ends, put back the handler that was there before (signal.signal returns it when you "
                "install yours)."
            )


q1 = Exercise(
    answer_name="latest_checkpoint",
    checker=_check_latest_checkpoint,
    hint_text=(
        "List the folder and keep the folders named checkpoint- and digits only; compare their steps as numbers "
        "(checkpoint-10 comes after checkpoint-9), and return the whole path, or None when there is none."
    ),
    solution_obj=solutions.latest_checkpoint,
)

q2 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="EvalCounter",
    checker=_check_eval_counter,
    hint_text=(
        "Count in on_evaluate. On resume the Trainer builds a new instance from what the checkpoint kept of the old "
        "one: inherit ExportableState and let state() hand the count over (as an argument of __init__ or as an "
        "attribute), so it comes back."
    ),
    solution_obj=solutions.EvalCounter,
)

q3 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="SaveOnSigterm",
    checker=_check_save_on_sigterm,
    hint_text=(
        "A signal handler runs between two lines of the training loop: let it only note that the signal came. "
        "The callback acts on the note at the end of a step, with the two flags that make the Trainer save and stop "
        "there, as JITCheckpointCallback does. Install the handler when training begins and keep what "
        "signal.signal returns, to put it back when training ends."
    ),
    solution_obj=solutions.SaveOnSigterm,
)

bind_exercises(globals())
