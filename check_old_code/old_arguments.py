"""The fate of every ``TrainingArguments`` parameter of transformers 4.8.2 in the installed 5.x, as data.

:data:`TRAINING_ARGUMENTS_4_8_2` maps each of the 74 public fields of 4.8.2's ``TrainingArguments`` (read from the
4.8.2 wheel by :func:`wheel_fields` and kept in ``tests/data/training_arguments_4_8_2.txt``; the Convenient-Trainer
guide, a source of the course, prints 64 of them) to a :class:`Fate`: ``kept`` (same name), ``renamed`` (the same
setting under a new name, value unchanged) or ``removed`` (what replaces it, if anything). :func:`check_fates`
compares the table with ``dataclasses.fields(TrainingArguments)`` of the installed version, so an upgrade that adds
back, renames or drops one of them makes the tests fail. :func:`port_kwargs` applies the table to old keyword
arguments. ``python -m tools.wheel_fields WHEEL`` prints a wheel's field names, one a line.
"""

from __future__ import annotations

import ast
import dataclasses
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from course_facts.pins import SOURCE_RELEASE

KEPT, RENAMED, REMOVED = "kept", "renamed", "removed"
_UNSET = object()


@dataclass(frozen=True)
class Fate:
    """What became of one old parameter.

    Attributes:
        status: ``kept``, ``renamed`` or ``removed``.
        new_name: the 5.x field that now carries the setting (the new name for ``renamed``; for ``removed``,
            the field that replaces it, if there is one).
        new_value: for ``removed`` parameters replaced by a choice of another field (``adafactor=True``
            becomes ``optim="adafactor"``), that choice; ``None`` means the old value carries over.
        note: one line for the learner: what changed or what to use instead.
    """

    status: str
    new_name: str | None = None
    new_value: Any = None
    note: str = ""

    def __post_init__(self) -> None:
        """Refuse a fate that does not say what became of the argument (a clear error names what is missing)."""
        if self.status not in (KEPT, RENAMED, REMOVED):
            raise ValueError(f"status must be {KEPT!r}, {RENAMED!r} or {REMOVED!r}, got {self.status!r}.")
        if self.status == RENAMED and not self.new_name:
            raise ValueError("a renamed parameter needs new_name (the field that carries it now).")
        if self.status == KEPT and self.new_name:
            raise ValueError("a kept parameter keeps its name; leave new_name empty.")
        if self.status == REMOVED and not self.note:
            raise ValueError("a removed parameter needs a note that says what replaces it.")


def _kept(note: str = "") -> Fate:
    """The fate of an argument that 5.x still has under its name (``note``: what changed about it, if anything)."""
    return Fate(KEPT, note=note)


# The 4.8.2 fields, in the order of 4.8.2's training_args.py.
TRAINING_ARGUMENTS_4_8_2: dict[str, Fate] = {
    "output_dir": _kept("now optional, defaults to 'trainer_output'"),
    "overwrite_output_dir": Fate(
        REMOVED,
        note="Trainer never read it (the example scripts did); "
        "pass resume_from_checkpoint to trainer.train() to resume",
    ),
    "do_train": _kept("not read by Trainer; for your own scripts"),
    "do_eval": _kept("not read by Trainer; set to True when eval_strategy is not 'no'"),
    "do_predict": _kept("not read by Trainer; for your own scripts"),
    "evaluation_strategy": Fate(RENAMED, "eval_strategy", note="same values: 'no', 'steps', 'epoch'"),
    "prediction_loss_only": _kept(),
    "per_device_train_batch_size": _kept(),
    "per_device_eval_batch_size": _kept(),
    "per_gpu_train_batch_size": Fate(REMOVED, "per_device_train_batch_size", note="use per_device_train_batch_size"),
    "per_gpu_eval_batch_size": Fate(REMOVED, "per_device_eval_batch_size", note="use per_device_eval_batch_size"),
    "gradient_accumulation_steps": _kept(),
    "eval_accumulation_steps": _kept(),
    "learning_rate": _kept(),
    "weight_decay": _kept(),
    "adam_beta1": _kept(),
    "adam_beta2": _kept(),
    "adam_epsilon": _kept(),
    "max_grad_norm": _kept(),
    "num_train_epochs": _kept(),
    "max_steps": _kept(),
    "lr_scheduler_type": _kept("more types: see lesson 03"),
    "warmup_ratio": Fate(REMOVED, "warmup_steps", note="pass the ratio as warmup_steps, a float in [0, 1)"),
    "warmup_steps": _kept("an int is a count, a float in [0, 1) a fraction of the training steps"),
    "log_level": _kept(),
    "log_level_replica": _kept(),
    "log_on_each_node": _kept(),
    "logging_dir": Fate(
        REMOVED,
        note="TensorBoard writes under output_dir; set the TENSORBOARD_LOGGING_DIR "
        "environment variable to choose the folder",
    ),
    "logging_strategy": _kept(),
    "logging_first_step": _kept("logs the first step; it no longer evaluates (see eval_on_start)"),
    "logging_steps": _kept("an int, or a float in [0, 1) as a fraction of the training steps"),
    "save_strategy": _kept("adds 'best'"),
    "save_steps": _kept(),
    "save_total_limit": _kept(),
    "save_on_each_node": _kept(),
    "no_cuda": Fate(RENAMED, "use_cpu", note="use_cpu=True also leaves out Apple MPS"),
    "seed": _kept(),
    "fp16": _kept(),
    "fp16_opt_level": Fate(REMOVED, note="Apex AMP is gone; fp16 uses torch.amp, which has no opt levels"),
    "fp16_backend": Fate(REMOVED, note="only native torch.amp remains; there is no backend to choose"),
    "fp16_full_eval": _kept(),
    "local_rank": _kept("set by the launcher (torchrun, accelerate)"),
    "tpu_num_cores": Fate(REMOVED, note="the TPU launcher sets the number of cores"),
    "tpu_metrics_debug": Fate(REMOVED, "debug", "tpu_metrics_debug", note="use debug='tpu_metrics_debug'"),
    "debug": _kept("a string or list of DebugOption, no longer a bool"),
    "dataloader_drop_last": _kept(),
    "eval_steps": _kept(),
    "dataloader_num_workers": _kept(),
    "past_index": Fate(
        REMOVED, note="Trainer no longer feeds model memories (mems) back; the models keep their own cache"
    ),
    "run_name": _kept(),
    "disable_tqdm": _kept(),
    "remove_unused_columns": _kept(),
    "label_names": _kept(),
    "load_best_model_at_end": _kept(),
    "metric_for_best_model": _kept(),
    "greater_is_better": _kept(),
    "ignore_data_skip": _kept(),
    "sharded_ddp": Fate(REMOVED, "fsdp", note="FairScale sharding is gone; use fsdp (PyTorch FSDP) or deepspeed"),
    "deepspeed": _kept(),
    "label_smoothing_factor": _kept(),
    "adafactor": Fate(REMOVED, "optim", "adafactor", note="use optim='adafactor'"),
    "group_by_length": Fate(
        REMOVED, "train_sampling_strategy", "group_by_length", note="use train_sampling_strategy='group_by_length'"
    ),
    "length_column_name": _kept(),
    "report_to": _kept("defaults to 'none' now (it was 'all')"),
    "ddp_find_unused_parameters": _kept(),
    "dataloader_pin_memory": _kept(),
    "skip_memory_metrics": _kept("defaults to True now (it was False)"),
    "use_legacy_prediction_loop": Fate(
        REMOVED, note="the legacy prediction_loop is gone; evaluation_loop is the Trainer's only loop"
    ),
    "push_to_hub": _kept(),
    "resume_from_checkpoint": _kept("not read by Trainer; pass it to trainer.train() to resume"),
    "push_to_hub_model_id": Fate(
        REMOVED, "hub_model_id", note="hub_model_id takes the whole repository id, 'organization/name'"
    ),
    "push_to_hub_organization": Fate(
        REMOVED, note="put the organization in hub_model_id, which takes the whole id: 'organization/name'"
    ),
    "push_to_hub_token": Fate(RENAMED, "hub_token", note="the same token"),
    "mp_parameters": Fate(
        REMOVED,
        note="SageMaker model parallelism reads SM_HP_MP_PARAMETERS from the environment; "
        "elsewhere use accelerate or parallelism_config",
    ),
}

# Parameters added after 4.8.2 and removed again by 5.x, which tutorials from 2022 to 2024 still pass.
LATER_ARGUMENTS: dict[str, Fate] = {
    "include_inputs_for_metrics": Fate(
        REMOVED, "include_for_metrics", ["inputs"], note="use include_for_metrics=['inputs']"
    ),
}


# Values of enum-valued fields that 4.x took and 5.x refuses (the ladder's inventory, ``argument_choices``, finds
# them and bisects when each went; this says what to write instead): (field, old value) -> (new value, why).
OLD_VALUES: dict[tuple[str, str], tuple[str, str]] = {
    ("optim", "adamw_hf"): (
        "adamw_torch",
        "torch.optim.AdamW: with the Trainer's adam_beta1, adam_beta2, adam_epsilon and weight_decay, the same update "
        "as the transformers AdamW that adamw_hf named",
    ),
    ("optim", "adamw_apex_fused"): ("adamw_torch_fused", "torch's own fused AdamW, with no NVIDIA apex to install"),
}


def wheel_fields(wheel: str | Path) -> list[str]:
    """The public fields of ``TrainingArguments`` in a transformers wheel, in the order its source declares them.

    Reads ``transformers/training_args.py`` from the wheel (a zip file) without installing or importing it; fields
    declared with ``init=False`` or a leading underscore (``_n_gpu``) are not parameters, and are left out.

    Raises:
        ValueError: the file is not a transformers wheel with a ``TrainingArguments`` class.
    """
    try:
        with zipfile.ZipFile(wheel) as archive:
            source = archive.read("transformers/training_args.py").decode("utf-8")
    except (OSError, KeyError, zipfile.BadZipFile) as error:
        raise ValueError(f"{wheel}: not a transformers wheel with transformers/training_args.py ({error}).") from error
    for node in ast.parse(source).body:
        if isinstance(node, ast.ClassDef) and node.name == "TrainingArguments":
            return [
                item.target.id
                for item in node.body
                if isinstance(item, ast.AnnAssign)
                and isinstance(item.target, ast.Name)
                and not item.target.id.startswith("_")
                and not (
                    isinstance(item.value, ast.Call)
                    and any(
                        k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
                        for k in item.value.keywords
                    )
                )
            ]
    raise ValueError(f"{wheel}: transformers/training_args.py has no TrainingArguments class.")


def installed_field_names() -> set[str]:
    """Names of the fields of the installed ``transformers.TrainingArguments``."""
    from transformers import TrainingArguments

    return {field.name for field in dataclasses.fields(TrainingArguments)}


def check_fates(
    fates: Mapping[str, Fate] = TRAINING_ARGUMENTS_4_8_2, field_names: Iterable[str] | None = None
) -> list[str]:
    """Compare a table of fates with the installed fields; return one line per disagreement (empty = all true).

    A ``kept`` name must be a field; a ``renamed`` or ``removed`` name must not be, and its ``new_name``
    (where given) must be.

    Args:
        fates: the table to check (:data:`TRAINING_ARGUMENTS_4_8_2` by default).
        field_names: the field names to check against; ``None`` reads the installed ``TrainingArguments``.
    """
    if not isinstance(fates, Mapping):
        raise TypeError(f"fates must map parameter names to Fate, got {type(fates).__name__}.")
    fields = set(field_names) if field_names is not None else installed_field_names()
    problems = []
    for name, fate in fates.items():
        if not isinstance(fate, Fate):
            raise TypeError(f"the fate of {name!r} must be a Fate, got {type(fate).__name__}.")
        if fate.status == KEPT and name not in fields:
            problems.append(f"{name}: marked kept, but TrainingArguments has no such field")
        if fate.status != KEPT and name in fields:
            problems.append(f"{name}: marked {fate.status}, but TrainingArguments still has it")
        if fate.new_name and fate.new_name not in fields:
            problems.append(f"{name}: points to {fate.new_name!r}, which TrainingArguments does not have")
    return problems


def fates_with_status(status: str, fates: Mapping[str, Fate] = TRAINING_ARGUMENTS_4_8_2) -> dict[str, Fate]:
    """The entries of ``fates`` whose status is ``status`` (``kept``, ``renamed`` or ``removed``)."""
    if status not in (KEPT, RENAMED, REMOVED):
        raise ValueError(f"status must be {KEPT!r}, {RENAMED!r} or {REMOVED!r}, got {status!r}.")
    return {name: fate for name, fate in fates.items() if fate.status == status}


def port_kwargs(old_kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Translate 4.x ``TrainingArguments`` keyword arguments to the installed 5.x names.

    Kept names pass through; renamed ones move to their new name; removed ones with a replacement field are
    translated (``adafactor=True`` -> ``optim="adafactor"``, ``warmup_ratio=0.1`` -> ``warmup_steps=0.1``);
    removed ones without a replacement are dropped. Every change is reported in the returned notes.

    Returns:
        ``(new_kwargs, notes)``.

    Raises:
        ValueError: a name is in no table (a typo, or an argument this module does not know), or two old
            names land on the same new one.
    """
    known = {**TRAINING_ARGUMENTS_4_8_2, **LATER_ARGUMENTS}
    fields = installed_field_names()
    new_kwargs: dict[str, Any] = {}
    notes: list[str] = []
    for name, value in old_kwargs.items():
        fate = known.get(name)
        if fate is None:
            if name in fields:
                target, new = name, value
            else:
                raise ValueError(
                    f"{name!r} is neither a {SOURCE_RELEASE} parameter nor a field of the installed "
                    "TrainingArguments; check the spelling."
                )
        elif fate.status == KEPT:
            target, new = name, value
        elif fate.new_name is None:
            notes.append(f"dropped {name}={value!r}: {fate.note}")
            continue
        elif fate.new_value is not None and isinstance(value, bool):
            if not value:
                notes.append(f"dropped {name}=False: it was off; {fate.note}")
                continue
            target, new = fate.new_name, fate.new_value
            notes.append(f"{name}={value!r} -> {target}={new!r}")
        else:
            target, new = fate.new_name, value if fate.new_value is None else fate.new_value
            notes.append(f"{name}={value!r} -> {target}={new!r}")
        if target in new_kwargs:
            raise ValueError(f"two arguments set {target!r}; pass only one of them.")
        new_kwargs[target] = new
    return new_kwargs, notes
