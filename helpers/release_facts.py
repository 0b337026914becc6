"""How the course reads a transformers release: the same rules for the ladder's probes and for the old-code checker.

Two readers describe releases: ``tools/ladder/probes.py`` runs inside each ladder environment (transformers 4.23 to
5.24, no course packages there) and records an inventory of the release; ``helpers.check_old_code`` compares a
learner's code with the installed release and with those inventories. Both must describe a release in the same
words, so the rules live here, once. This module imports only the standard library: the probes load it by path
(``importlib``) in any ladder environment.
"""

from __future__ import annotations

import inspect
from types import ModuleType

# The TrainingArguments fields that take one of an enum's values, and the enum's names across releases: 4.23 types
# ``optim`` as ``str`` and checks it against OptimizerNames in __post_init__, so the annotation cannot be read;
# SaveStrategy came in 4.45 (IntervalStrategy before it).
CHOICE_FIELDS: dict[str, tuple[str, ...]] = {
    "optim": ("OptimizerNames",),
    "lr_scheduler_type": ("SchedulerType",),
    "eval_strategy": ("IntervalStrategy",),
    "evaluation_strategy": ("IntervalStrategy",),
    "logging_strategy": ("IntervalStrategy",),
    "save_strategy": ("SaveStrategy", "IntervalStrategy"),
    "hub_strategy": ("HubStrategy",),
}


def argument_choices(training_args: ModuleType, fields: set[str]) -> dict[str, list[str]]:
    """The values each enum-valued field accepts, read from the release's ``transformers.training_args`` module:
    ``{"optim": ["adafactor", ...], ...}``, for the fields in ``fields`` (the release's TrainingArguments)."""
    choices = {}
    for name, enums in CHOICE_FIELDS.items():
        found = [getattr(training_args, enum) for enum in enums if hasattr(training_args, enum)]
        if name in fields and found:
            choices[name] = sorted(str(member.value) for member in found[0])
    return choices


def describe(parameter: inspect.Parameter) -> str:
    """A parameter in one short word: ``name``, ``name=`` (has a default), ``^name`` (keyword-only), ``*name`` or
    ``**name``."""
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        return f"*{parameter.name}"
    if parameter.kind is inspect.Parameter.VAR_KEYWORD:
        return f"**{parameter.name}"
    prefix = "^" if parameter.kind is inspect.Parameter.KEYWORD_ONLY else ""
    return prefix + parameter.name + ("=" if parameter.default is not inspect.Parameter.empty else "")
