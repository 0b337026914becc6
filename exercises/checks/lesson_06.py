"""Exercises of lesson 06 (callback control): callbacks that steer evaluation and saving, run in a real Trainer."""

from __future__ import annotations

import inspect
import random
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from exercises.checks import fixtures
from exercises.checks.core import Exercise, Wrong, bind_exercises, learner_code
from exercises.checks.lesson_05 import misspelled_events_note
from exercises.solutions import lesson_06 as solutions


def _callback(answer: Any, name: str, **arguments: Any) -> Any:
    from transformers import TrainerCallback

    if not (inspect.isclass(answer) and issubclass(answer, TrainerCallback)):
        raise Wrong(
            f"{name} should be a class that subclasses TrainerCallback (the class, not an instance), got {answer!r}."
        )
    call = ", ".join(f"{key}={value!r}" for key, value in arguments.items())
    with learner_code(f"creating {name}({call})", f"the check builds it as {name}({call})."):
        return answer(**arguments)


CASES_SEED = 6  # the check draws its cases from this seed each time it runs; the lesson's example is not among them


def evaluation_cases(seed: int = CASES_SEED) -> list[list[int]]:
    """Two lists of optimizer steps (within 1..5 of a 6-step run) to evaluate after; never the lesson's [2, 5]."""
    rng = random.Random(seed)
    cases: list[list[int]] = []
    while len(cases) < 2:
        steps = sorted(rng.sample(range(1, 6), rng.randint(2, 3)))
        if steps != [2, 5] and steps not in cases:
            cases.append(steps)
    return cases


def checkpoint_cases(seed: int = CASES_SEED) -> list[tuple[int, int]]:
    """Two ``(first, save_steps)`` settings of a 6-step run, each with checkpoints to cancel and ones to keep; in one,
    ``first`` falls between two checkpoints, so an answer that saves at steps the arguments did not ask for shows."""
    rng = random.Random(seed)
    while True:
        cases = [(rng.randint(2, 5), rng.randint(1, 2)) for _ in range(2)]
        between = any(save_steps == 2 and first % 2 for first, save_steps in cases)
        if all(first > steps for first, steps in cases) and len(set(cases)) == 2 and between and (4, 1) not in cases:
            return cases


class _Saves(TrainerCallback):
    """The steps at which the Trainer wrote a checkpoint (on_save fires right after it writes one)."""

    def __init__(self) -> None:
        self.steps: list[int] = []

    def on_save(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self.steps.append(state.global_step)


def _run(settings: dict[str, Any], callbacks: list[Any], **kwargs: Any) -> dict[str, Any]:
    """One run of the fixture Trainer (64 rows, batches of 8: 8 steps per epoch, so only max_steps ends it)."""
    saves = _Saves()
    trainer = fixtures.train(fixtures.trainer(settings, callbacks=[*callbacks, saves], **kwargs))
    return {
        "last_step": trainer.state.global_step,
        "logs": [step for step, _ in fixtures.log_entries(trainer, "loss")],
        "evaluations": [step for step, _ in fixtures.log_entries(trainer, "eval_loss")],
        "saves": saves.steps,
        "folders": sorted(int(path.name.split("-")[1]) for path in Path(trainer.args.output_dir).glob("checkpoint-*")),
    }


_DECISIONS = {"last_step": "stopped at step", "logs": "logged at", "saves": "saved at"}


def _flags_kept(mine: dict[str, Any], baseline: dict[str, Any], name: str, keys: tuple[str, ...]) -> None:
    """The Trainer's own decisions (stop, log, save: ``keys``) must survive the learner's callback."""
    lost = [f"{_DECISIONS[key]} {mine[key]} instead of {baseline[key]}" for key in keys if mine[key] != baseline[key]]
    if lost:
        raise Wrong(
            f"with {name} the Trainer's own decisions were lost: it {'; '.join(lost)}. Change the `control` you "
            "receive (or return that one); a new TrainerControl() throws away every flag DefaultFlowCallback set."
        )


def _check_evaluate_at_steps(answer: Any) -> None:
    settings = {
        "per_device_train_batch_size": 8,
        "max_steps": 6,
        "eval_strategy": "no",
        "logging_steps": 4,
        "save_strategy": "steps",
        "save_steps": 3,
        "save_only_model": True,
    }
    baseline = _run(settings, [], eval_dataset=fixtures.random_ids(16, seed=1))
    for wanted in evaluation_cases():
        callback = _callback(answer, "EvaluateAtSteps", steps=wanted)
        run = _run(settings, [callback], eval_dataset=fixtures.random_ids(16, seed=1))
        steps = run["evaluations"]
        if steps == [step + 1 for step in wanted]:
            raise Wrong(
                f"asked for {wanted}, the evaluations came one step late, after {steps}: at on_step_begin, "
                "global_step still counts the steps already done. Raise the flag once the step is done."
            )
        if steps != wanted:
            raise Wrong(
                f"asked for steps {wanted}, the Trainer evaluated after steps {steps}. Raise "
                "control.should_evaluate in an event that fires at the end of every optimizer step, for the "
                "steps given to __init__; on_evaluate only fires during an evaluation."
            )
        _flags_kept(run, baseline, f"EvaluateAtSteps(steps={wanted})", ("last_step", "logs", "saves"))


def _check_no_early_checkpoints(answer: Any) -> None:
    for first, save_steps in checkpoint_cases():
        settings = {
            "per_device_train_batch_size": 8,
            "max_steps": 6,
            "logging_steps": 4,
            "save_steps": save_steps,
            "save_only_model": True,
        }
        baseline = _run(settings, [])
        expected = [step for step in baseline["saves"] if step >= first]
        callback = _callback(answer, "NoEarlyCheckpoints", first=first)
        run = _run(settings, [callback])
        _flags_kept(run, baseline, f"NoEarlyCheckpoints(first={first})", ("last_step", "logs"))
        if run["saves"] == baseline["saves"] and run["folders"] == expected:
            raise Wrong(
                f"with first={first} the Trainer still wrote every checkpoint (after steps {run['saves']}) and your "
                "callback removed the early ones afterwards. The exercise asks that they are never written: lower "
                "should_save before the Trainer saves."
            )
        if run["saves"] == baseline["saves"]:
            raise Wrong(
                f"with first={first}, every checkpoint was still written ({run['saves']}). If you lowered should_save "
                "in on_step_begin, DefaultFlowCallback raises it again at on_step_end, after your code ran."
            )
        if run["saves"] != expected or run["folders"] != expected:
            raise Wrong(
                f"with first={first} and save_steps={save_steps}, checkpoints were written after steps "
                f"{run['saves']} ({run['folders']} left on disk), not {expected}: cancel the checkpoints before "
                f"global_step {first}, and add none the arguments did not ask for."
            )


q1 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="EvaluateAtSteps",
    checker=_check_evaluate_at_steps,
    hint_text=(
        "At on_step_end the step just done is already counted in state.global_step: raise the evaluation flag on the "
        "control you receive, for the steps given to __init__. A new TrainerControl drops the Trainer's own flags."
    ),
    solution_obj=solutions.EvaluateAtSteps,
)

q2 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="NoEarlyCheckpoints",
    checker=_check_no_early_checkpoints,
    hint_text=(
        "DefaultFlowCallback raises the save flag at on_step_end, and your callback runs after it there: lower that "
        "flag while the step is before `first`; never raise it yourself."
    ),
    solution_obj=solutions.NoEarlyCheckpoints,
)

bind_exercises(globals())
