"""What the lessons rely on about the installed transformers, asserted in one place.

When an upgrade breaks one of these, the message names the lesson to update. ``make test-latest`` runs this
file against the newest transformers the registry serves (``tools/test_latest.sh``).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
from pathlib import Path

import pytest
from notebook_sources import notebook_python
from transformers import Trainer, TrainerCallback, TrainerControl, TrainerState, TrainingArguments
from transformers.trainer_utils import SchedulerType

from helpers.callback_events import callback_event_names
from helpers.trainers import make_trainer

ROOT = Path(__file__).resolve().parent.parent
TRAINING_ARGUMENT_FIELDS = {field.name for field in dataclasses.fields(TrainingArguments)}


def parameters(function: object) -> list[tuple[str, object]]:
    """(name, default) of each parameter after ``self``."""
    signature = inspect.signature(function)  # type: ignore[arg-type]
    return [(name, p.default) for name, p in signature.parameters.items() if name != "self"]


def test_compute_loss_signature() -> None:
    assert parameters(Trainer.compute_loss) == [
        ("model", inspect.Parameter.empty),
        ("inputs", inspect.Parameter.empty),
        ("return_outputs", False),
        ("num_items_in_batch", None),
    ], "Trainer.compute_loss changed: update lesson 07 (custom loss) and the compute_loss exercises"


def test_training_step_signature() -> None:
    assert parameters(Trainer.training_step) == [
        ("model", inspect.Parameter.empty),
        ("inputs", inspect.Parameter.empty),
        ("num_items_in_batch", None),
    ], "Trainer.training_step changed: update lesson 08 (training_step) and lesson 11 (RecordingTrainer)"


EXPECTED_EVENTS = [
    "on_init_end",
    "on_train_begin",
    "on_train_end",
    "on_epoch_begin",
    "on_epoch_end",
    "on_step_begin",
    "on_pre_optimizer_step",
    "on_optimizer_step",
    "on_substep_end",
    "on_step_end",
    "on_evaluate",
    "on_predict",
    "on_save",
    "on_log",
    "on_prediction_step",
    "on_push_begin",
]


def test_callback_events() -> None:
    assert set(callback_event_names()) == set(EXPECTED_EVENTS), (
        f"TrainerCallback events changed (added: {sorted(set(callback_event_names()) - set(EXPECTED_EVENTS))}, "
        f"gone: {sorted(set(EXPECTED_EVENTS) - set(callback_event_names()))}): update lesson 05 (callback events)"
    )


def test_callback_event_signature() -> None:
    for event in callback_event_names():
        names = [name for name, _ in parameters(getattr(TrainerCallback, event))]
        assert names[:3] == ["args", "state", "control"] and names[-1] == "kwargs", (
            f"TrainerCallback.{event} no longer takes (args, state, control, **kwargs): update lessons 05 and 06"
        )


def test_trainer_control_fields() -> None:
    fields = {field.name for field in dataclasses.fields(TrainerControl)}
    assert fields == {"should_training_stop", "should_epoch_stop", "should_save", "should_evaluate", "should_log"}, (
        f"TrainerControl fields are now {sorted(fields)}: update lesson 06 (callback control)"
    )


def test_trainer_state_fields_the_lessons_read() -> None:
    fields = {field.name for field in dataclasses.fields(TrainerState)}
    used = {
        "global_step",
        "epoch",
        "max_steps",
        "log_history",
        "best_metric",
        "best_model_checkpoint",
        "best_global_step",
        "stateful_callbacks",
        "num_train_epochs",
        "logging_steps",
        "save_steps",
    }
    assert used <= fields, f"TrainerState lost {sorted(used - fields)}: update lessons 05, 06 and 11"


def test_scheduler_types() -> None:
    expected = {
        "linear",
        "cosine",
        "cosine_with_restarts",
        "polynomial",
        "constant",
        "constant_with_warmup",
        "inverse_sqrt",
        "reduce_lr_on_plateau",
        "cosine_with_min_lr",
        "cosine_warmup_with_min_lr",
        "warmup_stable_decay",
        "greedy",
    }
    found = {member.value for member in SchedulerType}
    assert expected <= found, f"SchedulerType lost {sorted(expected - found)}: update lesson 03 (LR schedules)"
    assert not found - expected - {"linear"}, (
        f"new SchedulerType values {sorted(found - expected)}: plot them in lesson 03 (LR schedules)"
    )


def test_checkpoint_files_and_resume_arguments() -> None:
    from transformers import trainer as trainer_module
    from transformers.trainer_callback import ExportableState

    assert (trainer_module.OPTIMIZER_NAME, trainer_module.SCHEDULER_NAME, trainer_module.TRAINER_STATE_NAME) == (
        "optimizer.pt",
        "scheduler.pt",
        "trainer_state.json",
    ), "checkpoint file names changed: update lesson 11"
    assert {
        "ignore_data_skip",
        "save_only_model",
        "save_total_limit",
        "restore_callback_states_from_checkpoint",
        "load_best_model_at_end",
        "metric_for_best_model",
    } <= TRAINING_ARGUMENT_FIELDS, "checkpoint arguments changed: update lesson 11"
    assert "save_safetensors" not in TRAINING_ARGUMENT_FIELDS, (
        "save_safetensors is back (5.x always saves safetensors): update lesson 11 and tests/test_security.py"
    )
    assert "resume_from_checkpoint" in inspect.signature(Trainer.train).parameters, "update lesson 11"
    assert callable(getattr(ExportableState, "state", None)) and hasattr(ExportableState, "from_state"), (
        "ExportableState changed: update lessons 06 and 11 (stateful callbacks)"
    )


# --- The TrainingArguments keywords used anywhere in the course -------------------------------------------


def course_sources() -> dict[str, str]:
    """``{place: python source}`` for every notebook's code cells and every helpers module."""
    sources = {}
    for notebook in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        sources[notebook.name] = notebook_python(notebook)
    for module in sorted((ROOT / "helpers").rglob("*.py")):
        if module.name != "old_arguments.py":  # a table of the *old* 4.8.2 names, checked on its own below
            sources[str(module.relative_to(ROOT))] = module.read_text()
    return sources


def _callee(node: ast.Call) -> str:
    return (
        node.func.id
        if isinstance(node.func, ast.Name)
        else node.func.attr
        if isinstance(node.func, ast.Attribute)
        else ""
    )


_EXPECTED_ERRORS = {"TypeError", "ValueError", "Exception", "BaseException"}


def _expects_an_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return handler.type is None or any(isinstance(n, ast.Name) and n.id in _EXPECTED_ERRORS for n in names)


def _nodes_outside_expected_failures(tree: ast.AST) -> list[ast.AST]:
    """Every node, except those in the body of a ``try`` that catches TypeError/ValueError: a lesson that shows
    a removed argument failing (a seed check) passes it there on purpose, and asserts the error itself."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(_expects_an_error(h) for h in node.handlers):
            skipped |= {id(inner) for statement in node.body for inner in ast.walk(statement)}
    return [node for node in ast.walk(tree) if id(node) not in skipped]


# make_trainer's own parameters and the Trainer's: a call that sets output_dir may pass them beside the arguments.
FACTORY_KEYWORDS = (
    (set(inspect.signature(make_trainer).parameters) | set(inspect.signature(Trainer.__init__).parameters))
    - TRAINING_ARGUMENT_FIELDS
    - {"self", "keywords"}
)


def argument_class(name: str) -> type | None:
    """``TrainingArguments`` or the installed subclass of it called ``name`` (``Seq2SeqTrainingArguments``, trl's
    ``SFTConfig``, ``GRPOConfig``, ...); ``None`` for any other name."""
    import transformers
    import trl

    for module in (transformers, trl):
        found = getattr(module, name, None) if name.endswith(("Arguments", "Config")) else None
        if isinstance(found, type) and issubclass(found, TrainingArguments):
            return found
    return None


def argument_keywords(source: str) -> dict[str, set[str]]:
    """Keywords passed to ``TrainingArguments(...)`` or to a subclass of it, by class name; and, under
    ``TrainingArguments``, those of any other call or dict that sets ``output_dir`` (the lessons build argument
    dicts such as ``dict(output_dir=..., ...)``)."""
    found: dict[str, set[str]] = {}
    for node in _nodes_outside_expected_failures(ast.parse(source)):
        if isinstance(node, ast.Call):
            names = {keyword.arg for keyword in node.keywords if keyword.arg}
            if argument_class(_callee(node)) is not None:
                found.setdefault(_callee(node), set()).update(names)
            elif "output_dir" in names:  # a factory call (make_trainer) also takes the Trainer's own keywords
                found.setdefault("TrainingArguments", set()).update(names - FACTORY_KEYWORDS)
        elif isinstance(node, ast.Dict):
            keys = {key.value for key in node.keys if isinstance(key, ast.Constant) and isinstance(key.value, str)}
            if "output_dir" in keys:
                found.setdefault("TrainingArguments", set()).update(keys)
    return found


def training_argument_keywords(source: str) -> set[str]:
    """Every keyword :func:`argument_keywords` finds, whatever the arguments class."""
    return set().union(*argument_keywords(source).values())


def test_keyword_scanner_finds_direct_and_indirect_uses() -> None:
    source = (
        "args = TrainingArguments(output_dir='x', eval_strategy='steps')\n"
        "settings = dict(output_dir='y', save_only_model=True)\n"
        "more = {'output_dir': 'z', 'logging_steps': 1}\n"
        "other = dict(colour='red')\n"
        "trainer = make_trainer('run', output_dir='v', model=None, callbacks=[], max_steps=2)\n"
        "try:\n    TrainingArguments(output_dir='w', warmup_ratio=0.1)\nexcept TypeError:\n    pass\n"
    )
    expected = {"output_dir", "eval_strategy", "save_only_model", "logging_steps", "max_steps"}
    assert training_argument_keywords(source) == expected


SOURCES = course_sources()


@pytest.mark.parametrize("place", sorted(SOURCES))
def test_training_arguments_used_by_the_course_exist(place: str) -> None:
    try:
        used = argument_keywords(SOURCES[place])
    except SyntaxError as error:
        pytest.fail(f"{place}: its code does not parse ({error}); fix it first")
    for name, keywords in sorted(used.items()):
        fields = {field.name for field in dataclasses.fields(argument_class(name))}
        missing = sorted(keywords - fields - {"self"})
        assert not missing, (
            f"{place} passes {missing} to {name}, which the installed transformers and trl do not have: "
            f"update {place} (see check_old_code/old_arguments.py for renamed and removed arguments)"
        )


def test_a_subclass_of_training_arguments_is_judged_by_its_own_fields() -> None:
    source = "SFTConfig(output_dir='x', packing=True)\nTrainingArguments(output_dir='y', packing=True)\n"
    used = argument_keywords(source)
    assert used == {"SFTConfig": {"output_dir", "packing"}, "TrainingArguments": {"output_dir", "packing"}}
    assert "packing" in {field.name for field in dataclasses.fields(argument_class("SFTConfig"))}
    assert "packing" not in TRAINING_ARGUMENT_FIELDS


def test_the_course_uses_training_arguments_somewhere() -> None:
    used = set().union(*(training_argument_keywords(source) for source in SOURCES.values()))
    assert {"output_dir", "report_to", "seed"} <= used, "the scan found no TrainingArguments: is the scanner broken?"


# --- The 4.8.2 -> 5.x map ------------------------------------------------------------------------------------


def test_old_arguments_map_matches_the_installed_version() -> None:
    """Each 4.8.2 argument's fate (kept, renamed, removed) in check_old_code/old_arguments.py holds on the installed
    release."""
    from check_old_code import old_arguments

    problems = old_arguments.check_fates()
    assert not problems, (
        "the 4.8.2 -> 5.x map is out of date: update check_old_code/old_arguments.py and lesson 02:\n"
        + "\n".join(problems)
    )


def test_removed_arguments_the_lessons_warn_about_are_gone() -> None:
    removed = {
        "evaluation_strategy",
        "overwrite_output_dir",
        "no_cuda",
        "per_gpu_train_batch_size",
        "warmup_ratio",
        "logging_dir",
        "include_inputs_for_metrics",
    }
    back = sorted(removed & TRAINING_ARGUMENT_FIELDS)
    assert not back, f"{back} are TrainingArguments fields again: update lessons 02 and 11 (seed checks)"


def test_processing_class_replaces_tokenizer() -> None:
    names = inspect.signature(Trainer.__init__).parameters
    assert "processing_class" in names and "tokenizer" not in names, (
        "Trainer(tokenizer=...) / processing_class changed: update lesson 01"
    )
