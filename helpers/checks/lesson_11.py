"""Exercises of lesson 11 (checkpoints and resume): ``q1`` finds the latest checkpoint, ``q2`` writes a
callback whose state survives an interrupted and resumed run."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path
from typing import Any

from helpers.checks import fixtures
from helpers.checks.core import Exercise, Wrong, bind_exercises, learner_code
from helpers.checks.lesson_05 import misspelled_events_note
from helpers.solutions import lesson_11 as solutions


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


# Evaluations every 2 steps, saves every 4: counting saves, steps or logs gives other numbers than counting
# evaluations, and each evaluation runs 3 batches, so counting prediction steps does too. The first run stops
# at step 4 (2 evaluations, 1 save so far) and the resumed one ends at step 8 (4 evaluations in all).
_EVAL_STEPS, _SAVE_STEPS, _STOP_STEP, _MAX_STEPS = 2, 4, 4, 8
_EVAL_ROWS, _EVAL_BATCH = 24, 8


def _run_eval_counter(callback_class: type, output_dir: str, stop_step: int | None, resume: bool) -> Any:
    from transformers import TrainerCallback

    class StopAt(TrainerCallback):
        def on_step_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            if stop_step is not None and state.global_step >= stop_step:
                control.should_training_stop = True

    settings = dict(
        output_dir=output_dir,
        max_steps=_MAX_STEPS,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=_EVAL_BATCH,
        eval_strategy="steps",
        eval_steps=_EVAL_STEPS,
        save_steps=_SAVE_STEPS,
        restore_callback_states_from_checkpoint=True,
    )
    with learner_code("creating EvalCounter()"):
        callback = callback_class()
    eval_set = fixtures.random_ids(_EVAL_ROWS, seed=1)
    trainer = fixtures.trainer(settings, eval_dataset=eval_set, callbacks=[callback, StopAt()])
    step = "resuming with your callback" if resume else "training (and saving checkpoints) with your callback"
    fixtures.train(trainer, step, resume_from_checkpoint=True if resume else None)
    expected_step = _MAX_STEPS if stop_step is None else stop_step
    if trainer.state.global_step != expected_step:
        raise Wrong(
            f"the run went to step {trainer.state.global_step}, not {expected_step}: an event of your callback "
            "returned a new TrainerControl, which throws away the Trainer's own flags (stop, save). Change the "
            "`control` you receive, or return None."
        )
    live = [cb for cb in trainer.callback_handler.callbacks if isinstance(cb, callback_class)]
    if not live:
        raise Wrong("after the resume no instance of your class is among trainer.callback_handler.callbacks.")
    return live[0]


def _check_eval_counter(eval_counter: Any) -> None:
    if not isinstance(eval_counter, type):
        raise Wrong(f"EvalCounter must be a class (a TrainerCallback subclass), got {type(eval_counter).__name__}.")
    from transformers import TrainerCallback

    if not issubclass(eval_counter, TrainerCallback):
        raise Wrong("EvalCounter must inherit transformers.TrainerCallback.")
    with learner_code("creating EvalCounter()"):
        fresh = eval_counter()
    if not hasattr(fresh, "evaluations"):
        raise Wrong("an EvalCounter() needs an attribute `evaluations` (set it to 0 in __init__).")
    before, total = _STOP_STEP // _EVAL_STEPS, _MAX_STEPS // _EVAL_STEPS
    with tempfile.TemporaryDirectory() as tmp:
        first = _run_eval_counter(eval_counter, tmp, stop_step=_STOP_STEP, resume=False)
        if first.evaluations != before:
            raise Wrong(
                f"{_STOP_STEP} steps with eval_steps={_EVAL_STEPS} ran {before} evaluations (of "
                f"{_EVAL_ROWS // _EVAL_BATCH} batches each; one save, at step {_SAVE_STEPS}), but your callback "
                f"counted {first.evaluations}. Count once per evaluation, in on_evaluate."
            )
        resumed = _run_eval_counter(eval_counter, tmp, stop_step=None, resume=True)
    if resumed.evaluations != total:
        raise Wrong(
            f"after the resume your callback counted {resumed.evaluations} evaluations; the whole run had {total}. "
            "Inherit transformers.trainer_callback.ExportableState and return the count from state() "
            "as {'args': {...}, 'attributes': {'evaluations': ...}}."
        )


q1 = Exercise(
    answer_name="latest_checkpoint",
    checker=_check_latest_checkpoint,
    hint_text="List the folder, keep names matching checkpoint-<digits>, and take the one with the largest int "
    "step. transformers.trainer_utils.get_last_checkpoint does the same.",
    solution_obj=solutions.latest_checkpoint,
)

q2 = Exercise(
    wrong_note=misspelled_events_note,
    answer_name="EvalCounter",
    checker=_check_eval_counter,
    hint_text="class EvalCounter(TrainerCallback, ExportableState): count in on_evaluate, and let state() return "
    "{'args': {}, 'attributes': {'evaluations': self.evaluations}}. The Trainer rebuilds the callback "
    "from that dict on resume.",
    solution_obj=solutions.EvalCounter,
)

bind_exercises(globals())
