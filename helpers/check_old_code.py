"""Find Trainer code that the installed transformers no longer runs: ``python -m helpers.check_old_code PATH...``.

It reads Python files and notebooks (``.py``, ``.ipynb``, or folders of them) **without running them** and
reports, with file and line, each thing a 4.x script, subclass or callback does that the installed release refuses
or silently ignores:

- ``TrainingArguments`` arguments that were renamed or removed, each ``*TrainingArguments`` class (and a subclass
  of one) checked against its own fields (the course's map, ``helpers.old_arguments``, and the release ladder,
  ``docs/ladder/results.json``, say when each went); fields a subclass still declares although the Trainer no
  longer reads them; attributes read from an arguments object (``training_args.overwrite_output_dir``);
- ``Trainer(tokenizer=...)``, ``super().__init__(..., tokenizer=...)``, positional arguments that land in another
  parameter, and for TRL's trainers the arguments that moved into their config class (``SFTConfig``);
- overrides whose signature the installed ``Trainer`` no longer calls correctly, judged by how its own code calls
  them (by position, by keyword, passed on as a function, or not at all); ``super()`` calls that no longer fit;
  overrides of methods that do not exist; ``self.tokenizer`` and removed methods read in a subclass;
- callback methods named ``on_...`` that are not events, and ``kwargs["tokenizer"]`` in a callback;
- names imported from transformers or trl that the installed releases no longer have.

A class imported from the project itself is read from its file when that file is found next to the importing one
(``from llava.train.llava_trainer import LLaVATrainer``); a class the checker cannot read is not judged.

Each finding says how to fix it and which lesson teaches it (lesson numbers and sections come from
``lessons.toml``). The exit status is 1 when something was found, 0 when nothing was, 2 when a path does not
exist or a file cannot be read or parsed (the other files are still checked and reported).

A finding on code that deliberately reproduces an error is not counted when it sits inside a ``try`` block that
catches that error (``TypeError``) or on a line (or in a class or function) marked ``# migrate: expected``.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import difflib
import importlib
import inspect
import json
import re
import sys
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from pathlib import Path

from helpers.old_arguments import LATER_ARGUMENTS, OLD_VALUES, REMOVED, RENAMED, TRAINING_ARGUMENTS_4_8_2, Fate
from helpers.registry import ROOT, lessons
from helpers.release_facts import (
    CHOICE_FIELDS,
    argument_choices,
    call_shape,
    describe,
    self_attributes,
    self_call_sites,
)

LADDER_RESULTS = ROOT / "docs" / "ladder" / "results.json"
MARKER = "migrate: expected"
SKIPPED_FOLDERS = {".git", "__pycache__", ".ipynb_checkpoints", "runs", "node_modules", "_build"}
LIBRARIES = ("transformers", "trl")

# Methods that 4.x tutorials override but that no Trainer release ever had: what to override instead.
NEVER_TRAINER_METHODS = {
    "evaluation_step": "prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None)",
    "validation_step": "prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None)",
    "eval_step": "prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None)",
    "train_step": "training_step(self, model, inputs, num_items_in_batch=None)",
}

# TRL renamed these config fields; the installed trl has only the new name. From trl's own history:
# `max_seq_length` became `max_length` in SFTConfig (huggingface/trl #2895 and #2947, v0.16.0; the old name was
# removed in #3704).
TRL_RENAMED = {"max_seq_length": "max_length"}

# Which lesson teaches each kind of finding: (where to look in lessons.toml, the text to find there).
KIND_LESSONS = {
    "renamed-argument": ("pitfall", "renamed or removed"),
    "removed-argument": ("pitfall", "renamed or removed"),
    "unknown-argument": ("pitfall", "renamed or removed"),
    "removed-field": ("pitfall", "renamed or removed"),
    "removed-attribute": ("pitfall", "renamed or removed"),
    "removed-value": ("pitfall", "renamed or removed"),
    "trainer-tokenizer": ("pitfall", "processing_class"),
    "tokenizer-attribute": ("pitfall", "processing_class"),
    "callback-tokenizer": ("pitfall", "processing_class"),
    "trainer-argument": ("goal", "every constructor argument"),
    "trainer-positional": ("goal", "every constructor argument"),
    "trl-argument": ("title", "Reading real subclasses"),
    "compute-loss-signature": ("pitfall", "`compute_loss` override"),
    "training-step-signature": ("pitfall", "`training_step` override"),
    "method-signature": ("title", "other methods to override"),
    "call-signature": ("title", "other methods to override"),
    "missing-method": ("title", "other methods to override"),
    "removed-method": ("title", "other methods to override"),
    "not-an-event": ("pitfall", "misspelt event"),
    "removed-import": ("title", "Start here"),
}


class MigrateError(ValueError):
    """A path that does not exist or a file that cannot be read; the message says which and what to do."""


@dataclass(frozen=True)
class Finding:
    """One thing the installed transformers will refuse or ignore.

    Attributes:
        path: the file, as given (or found under a given folder).
        line: the line in the file, or in the notebook cell.
        kind: a short key (``renamed-argument``, ``compute-loss-signature``, ...).
        message: what is wrong, on the installed release.
        fix: what to write instead.
        lesson: the lesson (and section) that teaches it, from ``lessons.toml``.
        cell: for a notebook, the cell's number (1-based, counting every cell); ``None`` for a Python file.
    """

    path: str
    line: int
    kind: str
    message: str
    fix: str
    lesson: str
    cell: int | None = None

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}" if self.cell is None else f"{self.path} cell {self.cell}:{self.line}"

    def format(self) -> str:
        return f"{self.location}: {self.message}\n    fix: {self.fix}\n    taught in: {self.lesson}"


@dataclass
class Report:
    """What :func:`check_paths` found: the findings, the ones left out on purpose (expected errors), the files read,
    the notebook cells skipped (not Python) and the paths that could not be read (``errors``, one message each)."""

    findings: list[Finding] = field(default_factory=list)
    expected: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped_cells: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def exit_status(self) -> int:
        """2 when a path could not be read, else 1 when something was found, else 0."""
        return 2 if self.errors else 1 if self.findings else 0


# ---------------------------------------------------------------------------------------------------------------
# What the installed release offers, and what the ladder knows about earlier ones
# ---------------------------------------------------------------------------------------------------------------
@cache
def installed_version() -> str:
    import transformers

    return transformers.__version__


@cache
def _class_fields(cls: type) -> frozenset[str]:
    return frozenset(item.name for item in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else frozenset()


def installed_fields() -> frozenset[str]:
    from transformers import TrainingArguments

    return _class_fields(TrainingArguments)


@cache
def _init_parameters(cls: type) -> tuple[str, ...]:
    return tuple(describe(p) for p in list(inspect.signature(cls.__init__).parameters.values())[1:])


def installed_trainer_init() -> frozenset[str]:
    from transformers import Trainer

    return frozenset(_names(_init_parameters(Trainer)))


@cache
def _methods(cls: type) -> dict[str, inspect.Signature | None]:
    """Every method of ``cls`` (public and private), with its signature where it has one."""
    found: dict[str, inspect.Signature | None] = {}
    for name in dir(cls):
        if name.startswith("__") or isinstance(inspect.getattr_static(cls, name), property):
            continue
        value = getattr(cls, name, None)
        if callable(value):
            try:
                found[name] = inspect.signature(value)
            except (TypeError, ValueError):
                found[name] = None
    return found


def installed_methods() -> dict[str, inspect.Signature | None]:
    """Every method of the installed ``Trainer`` (public and private), with its signature where it has one."""
    from transformers import Trainer

    return _methods(Trainer)


@cache
def installed_events() -> tuple[str, ...]:
    from transformers import TrainerCallback

    return tuple(name for name in vars(TrainerCallback) if name.startswith("on_"))


@cache
def installed_callback_kwargs() -> frozenset[str]:
    """The keyword arguments the installed ``CallbackHandler.call_event`` passes to every event."""
    from transformers.trainer_callback import CallbackHandler

    tree = ast.parse(inspect.getsource(CallbackHandler.call_event).strip())
    return frozenset(k.arg for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords if k.arg)


@cache
def ladder() -> dict:
    """The ladder's results (``docs/ladder/results.json``), or an empty ladder when the file is not there."""
    if not LADDER_RESULTS.is_file():
        return {"releases": [], "results": {}}
    return json.loads(LADDER_RESULTS.read_text(encoding="utf-8"))


def _adjacent(older: str, newer: str) -> bool:
    """Whether ``newer`` is the final release right after ``older`` (the bisection's list of final releases)."""
    finals = ladder().get("bisection", {}).get("finals", [])
    return older in finals and newer in finals and finals.index(newer) == finals.index(older) + 1


def _since(newer: str, older: str) -> str:
    """``"since 5.2.0; 5.1.0 still ..."`` when the two are adjacent releases, else ``"by 5.2.0"`` (not bisected)."""
    return f"since {newer}" if _adjacent(older, newer) else f"by {newer} (the releases between were not run)"


def ladder_history(probe_id: str) -> str:
    """What the ladder's probe ``probe_id`` (a claim that something is accepted) saw happen to it, as
    ``" (the ladder: deprecated from 4.41.2; accepted on 4.50.3, refused on 4.51.0)"``, or ``""``. A change the
    bisection narrowed (``results.json`` ``changes``) is given between its two adjacent releases."""
    data = ladder()
    if probe_id not in data.get("probes", {}):
        return ""
    warned = last_accepted = refused = None
    for version in data["releases"]:
        result = data["results"][version]["probes"][probe_id]
        if result["verdict"] == "holds":
            last_accepted, refused = version, None
            if warned is None and "warns" in result["evidence"]:
                warned = version
        elif result["verdict"] == "does not hold" and last_accepted and refused is None:
            refused = version
    for change in data.get("changes", []):
        if change["probe"] == probe_id and change.get("old") == "holds" and change.get("new") == "does not hold":
            last_accepted, refused = change["last_old"], change["first_new"]
    parts = [f"deprecated (it warns) from {warned} or earlier"] if warned else []
    if refused:
        gap = "" if _adjacent(last_accepted, refused) else " (the releases between were not run)"
        parts.append(f"accepted on {last_accepted}, refused on {refused}{gap}")
    return f" (the ladder: {'; '.join(parts)})" if parts else ""


def _bisected_removal(probe_id: str) -> dict | None:
    """The bisected change (``results.json`` ``changes``) where the probe ``probe_id`` stopped holding, or ``None``."""
    return next(
        (c for c in ladder().get("changes", []) if c["probe"] == probe_id and c.get("new") == "does not hold"), None
    )


def ladder_removal(name: str) -> str:
    """When the ladder saw ``TrainingArguments.name`` go: ``" (gone since 5.15.0; 5.14.1 still had it)"``, or ``""``."""
    if change := _bisected_removal(f"argument_{name}"):  # the probe that passes it, bisected
        return f" (gone since {change['first_new']}; {change['last_old']} still had it)"
    return _went(name, lambda inventory: name in inventory.get("training_arguments", ()))


def ladder_method_removal(name: str) -> str:
    """When the ladder saw ``Trainer.name`` go, in the same words as :func:`ladder_removal`."""
    return _went(name, lambda inventory: name in inventory.get("trainer_methods", {}))


def _went(name: str, present) -> str:
    data = ladder()
    previous = None
    last_present = None
    gone_after = None
    for version in data["releases"]:
        here = present(data["results"][version]["inventory"])
        if here:
            last_present, gone_after = version, None
        elif previous is not None and present(data["results"][previous]["inventory"]):
            gone_after = version
        previous = version
    if last_present is None and data["releases"]:
        return f" (the ladder never saw it: gone before {data['releases'][0]}, its oldest release)"
    if gone_after:
        return f" (gone {_since(gone_after, last_present)}; {last_present} still had it)"
    return ""


def _release_calls(version: str, name: str, replaced: frozenset[str], caller: str | None = None) -> list | None:
    """How the ladder release ``version`` called ``self.name(...)``, leaving out the calls made by the ``replaced``
    methods (a subclass's own versions of them never make those calls), or only the calls ``caller`` makes; ``None``
    when the release's inventory does not say which method makes which call."""
    inventory = ladder()["results"][version]["inventory"]
    if not replaced and caller is None:
        return inventory.get("trainer_calls", {}).get(name)
    sites = inventory.get("trainer_call_sites")
    if sites is None:
        return None
    return sites.get(name, {}).get(caller) if caller is not None else _merged(sites.get(name, {}), replaced)


def _ladder_changed_caller(name: str, fits, callers: Iterable[str]) -> str | None:
    """One of ``callers`` (methods whose installed calls of ``self.name`` the override cannot take) whose calls some
    ladder release made only in ways the override takes: the change 5.x made, even where another caller's call
    never fitted (a ``compute_loss`` without ``return_outputs`` trained on 4.x; only its evaluation failed)."""
    for caller in callers:
        for version in ladder()["releases"]:
            shapes = _release_calls(version, name, frozenset(), caller)
            if shapes and all(fits(shape) for shape in shapes):
                return caller
    return None


def ladder_call_change(name: str, fits, replaced: frozenset[str] = frozenset(), caller: str | None = None) -> str:
    """The first ladder release whose Trainer calls ``self.name(...)`` in a way ``fits`` rejects, after one that fit
    (only the calls ``caller`` makes, when it is given)."""
    fitted = None
    for version in ladder()["releases"]:
        shapes = _release_calls(version, name, replaced, caller)
        if not shapes:
            continue
        if all(fits(shape) for shape in shapes):
            fitted = version
        elif fitted is not None:
            changed = f"in {version}" if _adjacent(fitted, version) else f"by {version} (releases between not run)"
            return f" (the call changed {changed}; {fitted} still called it in a way this override takes)"
    return ""


def _ladder_ever_fitted(name: str, fits, replaced: frozenset[str] = frozenset()) -> bool:
    """Whether some ladder release called ``self.name`` only in ways ``fits`` accepts, or the ladder never saw it
    called (then it cannot tell, and the override is judged on the installed calls alone)."""
    recorded = [shapes for version in ladder()["releases"] if (shapes := _release_calls(version, name, replaced))]
    return not recorded or any(all(fits(shape) for shape in shapes) for shapes in recorded)


def _ladder_accepted_call(name: str, count: int, keywords: Sequence[str]) -> bool:
    """Whether some ladder release's ``Trainer.name`` took a call with ``count`` positional arguments (after self)
    and these keywords; true when the ladder does not know the method."""
    lists = [
        params
        for version in ladder()["releases"]
        if (params := ladder()["results"][version]["inventory"].get("trainer_methods", {}).get(name))
    ]
    return not lists or any(_bind_described(params[1:], count, keywords) is None for params in lists)


@cache
def _ladder_old_fields() -> frozenset[str]:
    """TrainingArguments fields that some ladder release had and the installed one does not."""
    data = ladder()
    seen = {name for v in data["releases"] for name in data["results"][v]["inventory"].get("training_arguments", ())}
    return frozenset(seen - installed_fields())


@cache
def installed_choices() -> dict[str, frozenset[str]]:
    """The values each enum-valued TrainingArguments field of the installed release accepts (``optim``...)."""
    import transformers.training_args as module

    choices = argument_choices(module, set(installed_fields()))
    return {name: frozenset(values) for name, values in choices.items()}


def _choices_in(inventory: dict, field_name: str) -> tuple[str, ...]:
    """The values a ladder release's inventory lists for an enum-valued field."""
    choices = inventory.get("argument_choices", {})
    if field_name == "eval_strategy":  # the same values under its 4.x name
        return (*choices.get("eval_strategy", ()), *choices.get("evaluation_strategy", ()))
    return tuple(choices.get(field_name, ()))


def ladder_value_removal(field_name: str, value: str) -> str | None:
    """When the ladder saw ``field_name=value`` stop being accepted, as ``" (gone since 5.0.0; 4.57.6 still took
    it)"``; ``None`` when no ladder release took it (a typo, not a removal: the installed error says so)."""
    data = ladder()
    inventories = [data["results"][version]["inventory"] for version in data["releases"]]
    if not any(value in _choices_in(inventory, field_name) for inventory in inventories):
        return None
    if change := _bisected_removal(f"value_{field_name}_{value}"):  # the value's own probe, bisected
        return f" (gone since {change['first_new']}; {change['last_old']} still took it)"
    return _went(value, lambda inventory: value in _choices_in(inventory, field_name))


def _enum_field(enum: str) -> str | None:
    """The TrainingArguments field whose values an enum lists (``OptimizerNames``: ``optim``)."""
    return next((name for name, enums in CHOICE_FIELDS.items() if enum in enums), None)


def ladder_enum_value(enum: str, member: str) -> str | None:
    """The value the newest ladder release that had ``enum.member`` gave it (``OptimizerNames.ADAMW_HF``:
    ``"adamw_hf"``), or ``None`` if no release on the ladder had that member."""
    data = ladder()
    for version in reversed(data["releases"]):
        members = data["results"][version]["inventory"].get("enum_members", {}).get(enum, {})
        if member in members:
            return members[member]
    return None


@cache
def _old_trainer_init() -> tuple[str, ...]:
    """The oldest ladder release's ``Trainer.__init__`` parameters (``tokenizer=`` included), in order."""
    data = ladder()
    for version in data["releases"]:
        init = data["results"][version]["inventory"].get("trainer_init")
        if init:
            return tuple(init)
    return ()


def lesson_for(kind: str) -> str:
    """The lesson (and section) of ``lessons.toml`` that teaches a kind of finding."""
    return _lesson_for(kind)


@cache
def _lesson_for(kind: str) -> str:
    place, needle = KIND_LESSONS[kind]
    for entry in lessons():
        if place == "pitfall":
            for pitfall in entry.pitfalls:
                if needle in pitfall.text:
                    return f"lesson {entry.number}, section {pitfall.section}"
        elif place == "goal" and any(needle in goal for goal in entry.goals):
            return f"lesson {entry.number} ({entry.title})"
        elif place == "title" and needle in entry.title:
            return f"lesson {entry.number} ({entry.title})"
    raise LookupError(f"lessons.toml has no {place} that mentions {needle!r} (for {kind} findings).")


# ---------------------------------------------------------------------------------------------------------------
# Signatures, as the ladder writes them: ``name``, ``name=`` (a default), ``^name`` (keyword-only), ``*a``, ``**k``
# ---------------------------------------------------------------------------------------------------------------
def _names(described: Sequence[str]) -> list[str]:
    return [p.strip("^*=") for p in described if not p.startswith("*")]


def _described_function(function: ast.FunctionDef | ast.AsyncFunctionDef, skip_self: bool = True) -> list[str]:
    arguments = function.args
    positional = [*arguments.posonlyargs, *arguments.args]
    first_default = len(positional) - len(arguments.defaults)
    described = [a.arg + ("=" if i >= first_default else "") for i, a in enumerate(positional)]
    if arguments.vararg:
        described.append("*" + arguments.vararg.arg)
    described += [
        "^" + a.arg + ("" if d is None else "=")
        for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    ]
    if arguments.kwarg:
        described.append("**" + arguments.kwarg.arg)
    return described[1:] if skip_self and positional else described


def _bind_described(params: Sequence[str], count: int, keywords: Sequence[str]) -> str | None:
    """Why a call with ``count`` positional arguments and these keywords cannot reach a function with these
    (described) parameters, ``self`` left out; ``None`` if it can."""
    positional = [p.rstrip("=") for p in params if not p.startswith(("*", "^"))]
    keyword_only = [p.strip("^=") for p in params if p.startswith("^")]
    var_positional = any(p.startswith("*") and not p.startswith("**") for p in params)
    var_keyword = any(p.startswith("**") for p in params)
    required = [p for p in params if not p.startswith("*") and not p.endswith("=")]
    if count > len(positional) and not var_positional:
        return f"it takes {len(positional)} positional argument(s) after self"
    filled = set(positional[:count])
    for keyword in keywords:
        if keyword in filled:
            return f"`{keyword}` would get two values"
        if keyword in positional or keyword in keyword_only:
            filled.add(keyword)
        elif not var_keyword:
            return f"it has no parameter `{keyword}`"
    unfilled = [p.lstrip("^") for p in required if p.lstrip("^") not in filled]
    if unfilled:
        return f"it requires {', '.join(f'`{name}`' for name in unfilled)}, which this call does not pass"
    return None


def _bind(function: ast.FunctionDef | ast.AsyncFunctionDef, shape: Sequence) -> str | None:
    """Why a call ``self.name(<n positional>, <keywords>)`` cannot reach the override, or ``None`` if it can."""
    count, keywords = shape
    return _bind_described(_described_function(function), count, keywords)


def _widened(
    function: ast.FunctionDef | ast.AsyncFunctionDef, calls: list, signature: inspect.Signature | None
) -> str | None:
    """The override's own parameters with what the Trainer's calls pass and it lacks added as ``=None``
    (``(self, model, inputs, return_logits=False, num_items_in_batch=None)``), when that takes every call; ``None``
    otherwise. Its own names stay, so the file's own calls of the method keep working."""
    if signature is None or not calls:
        return None
    own = _described_function(function)
    arguments = function.args
    names = {p.strip("*^=") for p in own}
    own_positional = [*arguments.posonlyargs, *arguments.args][1:]
    installed = [
        p.name
        for p in list(signature.parameters.values())[1:]
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    needed = max(count for count, _ in calls)
    extra = installed[len(own_positional) : needed] if not arguments.vararg else []
    if extra and [a.arg for a in own_positional] != installed[: len(own_positional)]:
        return None  # its parameters are not the installed ones in order: which goes where is not ours to say
    order = list(signature.parameters)
    keywords = {k for _, keywords in calls for k in keywords if k not in names and k not in extra}
    extra += sorted(keywords, key=lambda k: (order.index(k) if k in order else len(order), k))
    if not extra or names & set(extra) or arguments.kwarg:
        return None
    keyword_only = bool(arguments.vararg or arguments.kwonlyargs)
    described = [*own, *(f"^{name}=" if keyword_only else f"{name}=" for name in extra)]
    if any(_bind_described(described, count, keywords) for count, keywords in calls):
        return None
    widened = ast.parse(f"def f({ast.unparse(arguments)}): pass").body[0].args
    for name in extra:
        parameter = signature.parameters.get(name)
        default = parameter.default if parameter is not None else None
        value = ast.Constant(default if isinstance(default, bool | int | float | str | None) else None)
        if keyword_only:
            widened.kwonlyargs.append(ast.arg(name))
            widened.kw_defaults.append(value)
        else:
            widened.args.append(ast.arg(name))
            widened.defaults.append(value)
    return f"({ast.unparse(widened)})"


def _call_text(name: str, shape: Sequence, signature: inspect.Signature | None) -> str:
    """``self.training_step(model, inputs, num_items_in_batch)`` for a call shape, named from the signature."""
    count, keywords = shape
    names = [p.name for p in list(signature.parameters.values())[1:]] if signature is not None else []
    positional = [names[i] if i < len(names) else f"arg{i + 1}" for i in range(count)]
    return f"self.{name}({', '.join([*positional, *(f'{k}=...' for k in keywords)])})"


def _trainer_calls_in(modules) -> dict[str, dict[str, list]]:
    """How the Trainer's own code calls its methods, by calling method:
    ``{name: {caller: [[positional count, [keywords]], ...]}}``.

    The same reading as ``tools/ladder/probes.py`` makes of each release on the ladder (``trainer_call_sites``), and
    one more: a method handed on as a function (``sampler_fn=self._get_train_sampler``) is called the way the
    receiving method calls that parameter (``sampler_fn(dataset)``)."""
    sites: dict[str, dict[str, list]] = {}
    parameter_calls: dict[tuple[str, str], list] = {}
    handed: list[tuple[str, ...]] = []

    def add(name: str, caller: str, shapes: list) -> None:
        known = sites.setdefault(name, {}).setdefault(caller, [])
        known += [shape for shape in shapes if shape not in known]

    for module in sorted(modules, key=lambda item: item.__name__):
        own_sites, own_parameter_calls, own_handed = _module_calls(module.__name__)
        for name, callers in own_sites.items():
            for caller, shapes in callers.items():
                add(name, caller, shapes)
        for key, found in own_parameter_calls.items():
            parameter_calls.setdefault(key, []).extend(found)
        handed += own_handed
    for caller, receiver, parameter, method in handed:  # made when `caller` runs: a subclass may replace it
        add(method, caller, parameter_calls.get((receiver, parameter), []))
    return {
        name: {caller: sorted(shapes) for caller, shapes in callers.items() if shapes}
        for name, callers in sites.items()
        if any(callers.values())
    }


@cache
def _module_calls(name: str) -> tuple[dict[str, dict[str, list]], dict[tuple[str, str], list], list[tuple[str, ...]]]:
    """For one library module: how each method calls ``self.<method>(...)`` (:func:`self_call_sites`), how each
    function calls its parameters (``sampler_fn(dataset)``), and which ``self.<method>`` each method hands on as a
    keyword argument: ``(handing method, receiving method, keyword, method handed on)``."""
    tree = ast.parse(inspect.getsource(sys.modules[name]))
    parameter_calls: dict[tuple[str, str], list] = {}
    handed: list[tuple[str, ...]] = []
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        parameters = {a.arg for a in [*function.args.args, *function.args.kwonlyargs]}
        for node in ast.walk(function):
            if not isinstance(node, ast.Call) or (shape := call_shape(node)) is None:
                continue
            if isinstance(node.func, ast.Name) and node.func.id in parameters:
                parameter_calls.setdefault((function.name, node.func.id), []).append(shape)
    methods = [item for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for item in node.body]
    for method in [*tree.body, *methods]:
        if not isinstance(method, ast.FunctionDef):
            continue
        for node in ast.walk(method):
            on_self = isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            if on_self and _is_name(node.func.value, "self"):
                for keyword in node.keywords:
                    value = keyword.value
                    if keyword.arg and isinstance(value, ast.Attribute) and _is_name(value.value, "self"):
                        handed.append((method.name, node.func.attr, keyword.arg, value.attr))
    return self_call_sites(tree), parameter_calls, handed


def _unpacks(node: ast.Call) -> bool:
    return any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords)


def _is_name(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


@cache
def _library_modules(cls: type) -> tuple:
    """The library modules that define ``cls`` (a Trainer, or a library's subclass of it) and its methods."""
    modules = set()
    for klass in cls.__mro__:
        module = sys.modules.get(klass.__module__)
        if module is not None and klass.__module__.split(".")[0] in LIBRARIES:
            modules.add(module)
    for name in dir(cls):
        value = getattr(cls, name, None)
        module = getattr(value, "__module__", None) or ""
        if callable(value) and module.split(".")[0] in LIBRARIES and module in sys.modules:
            modules.add(sys.modules[module])
    return tuple(sorted(modules, key=lambda item: item.__name__))


@cache
def _instance_attributes(cls: type) -> frozenset[str]:
    """What an instance of ``cls`` has: the class's names and the attributes its modules set on ``self``."""
    names = set(dir(cls))
    for module in _library_modules(cls):
        names |= set(self_attributes(ast.parse(inspect.getsource(module))))
    return frozenset(names)


def ladder_attribute_removal(name: str, seq2seq: bool = False) -> str | None:
    """When the ladder saw the Trainer (or the Seq2SeqTrainer) stop setting ``self.name`` (``self.fsdp``,
    ``self._max_length``), or ``None`` if no release set it."""
    kind = "Seq2SeqTrainer" if seq2seq else "Trainer"
    present = lambda inventory: name in inventory.get("trainer_attributes", {}).get(kind, ())  # noqa: E731
    if not any(present(ladder()["results"][version]["inventory"]) for version in ladder()["releases"]):
        return None
    return _went(name, present)


@cache
def _call_sites(cls: type) -> dict[str, dict[str, list]]:
    """How ``cls`` (a Trainer, or a library's subclass of it) calls its own methods, by calling method, read from its
    modules (see :func:`_trainer_calls_in`)."""
    sites = _trainer_calls_in(_library_modules(cls))
    methods = _methods(cls)
    return {name: sites[name] for name in sites if name in methods}


def _merged(callers: dict[str, list], replaced: frozenset[str] = frozenset()) -> list:
    """The call shapes of every caller but the ``replaced`` ones, once each."""
    shapes: list = []
    for caller, found in callers.items():
        if caller not in replaced:
            shapes += [shape for shape in found if shape not in shapes]
    return sorted(shapes)


@cache
def _calls(cls: type) -> dict[str, list]:
    """How ``cls`` calls its own methods, all callers together: ``{name: [[positional count, [keywords]], ...]}``."""
    return {name: _merged(callers) for name, callers in _call_sites(cls).items()}


def installed_calls() -> dict[str, list]:
    """How the installed Trainer calls each of its methods (see :func:`_trainer_calls_in`)."""
    from transformers import Trainer

    return _calls(Trainer)


def _plain(signature: inspect.Signature, skip_self: bool = False) -> str:
    parts = []
    for parameter in list(signature.parameters.values())[1 if skip_self else 0 :]:
        text = parameter.name
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            text = "*" + text
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            text = "**" + text
        elif parameter.default is not inspect.Parameter.empty:
            text += f"={parameter.default!r}" if isinstance(parameter.default, bool | int | str | None) else "=..."
        parts.append(text)
    return f"({', '.join(parts)})"


def _library_release(cls: type) -> str:
    """``transformers 5.24.0`` or ``trl 1.16.0``: the library and release that ``cls`` comes from."""
    library = cls.__module__.split(".")[0]
    return f"{library} {importlib.import_module(library).__version__}"


# ---------------------------------------------------------------------------------------------------------------
# Reading files
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class _Unit:
    """One piece of source to parse: a Python file, or one code cell of a notebook."""

    path: str
    source: str
    cell: int | None = None
    tree: ast.Module | None = None


def _read(path: Path) -> list[_Unit]:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise MigrateError(f"{path}: not UTF-8 text ({error.reason}); give a Python file or a notebook.") from error
    except OSError as error:
        raise MigrateError(f"{path}: cannot be read ({error.strerror}); check its permissions.") from error
    if path.suffix != ".ipynb":
        return [_Unit(str(path), text)]
    try:
        notebook = json.loads(text)
        cells = notebook["cells"]
    except (json.JSONDecodeError, KeyError, TypeError) as error:
        raise MigrateError(f"{path}: not a valid notebook (JSON with a 'cells' list): {error}.") from error
    units = []
    for index, cell in enumerate(cells, start=1):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if source.lstrip().startswith("%%"):
            continue  # a cell magic: not Python
        lines, magic = [], False
        for line in source.split("\n"):
            magic = magic or _is_magic(line)
            lines.append(("pass  # " + line) if magic else line)
            magic = magic and line.rstrip().endswith("\\")  # a magic goes on after a trailing backslash
        units.append(_Unit(str(path), "\n".join(lines), cell=index))
    return units


def _is_magic(line: str) -> bool:
    """An IPython line magic (``%pip install x``) or shell escape (``!ls``), which is not Python; ``!=`` is."""
    stripped = line.lstrip()
    return (stripped.startswith("!") and not stripped.startswith("!=")) or (
        stripped.startswith("%") and stripped[1:2].isalpha()
    )


def _files(paths: Sequence[str | Path], errors: list[str]) -> list[Path]:
    found = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            errors.append(f"{given}: no such file or folder.")
        elif path.is_dir():
            for candidate in sorted(path.rglob("*")):
                parts = set(candidate.relative_to(path).parts[:-1])
                hidden = any(part.startswith(".") for part in parts)
                if candidate.suffix in (".py", ".ipynb") and candidate.is_file() and not hidden:
                    if not parts & SKIPPED_FOLDERS:
                        found.append(candidate)
        elif path.suffix in (".py", ".ipynb"):
            found.append(path)
        else:
            errors.append(f"{given}: not a Python file (.py) or a notebook (.ipynb).")
    return found


# ---------------------------------------------------------------------------------------------------------------
# Modules, imports and classes: what a name in a file refers to
# ---------------------------------------------------------------------------------------------------------------
@dataclass(eq=False)
class _Module:
    """The classes, functions and imports of one file (every cell of a notebook together)."""

    path: Path | None
    trees: list[ast.Module]
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None, int]] = field(default_factory=dict)  # local: (module, name, level)
    stars: list[tuple[str, int]] = field(default_factory=list)  # from module import *: (module, level)
    attributes_used: set[str] = field(default_factory=set)
    _cached: dict = field(default_factory=dict)

    def patched(self) -> dict[str, tuple[type, str]]:
        if "patched" not in self._cached:
            self._cached["patched"] = _patched_functions(self)
        return self._cached["patched"]

    def patched_events(self) -> dict[str, tuple[type, str]]:
        """Functions of the file assigned onto a callback class (``DEFAULT_PROGRESS_CALLBACK.on_log = f``)."""
        if "events" not in self._cached:
            self._cached["events"] = _patched_functions(self, _classes()[1])
        return self._cached["events"]

    def declared_argument_fields(self) -> frozenset[str]:
        if "declared" not in self._cached:
            self._cached["declared"] = frozenset(_all_declared_argument_fields(self))
        return self._cached["declared"]

    def __post_init__(self) -> None:
        for tree in self.trees:
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self.classes[node.name] = node
                elif isinstance(node, ast.FunctionDef):
                    self.functions[node.name] = node
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    for alias in node.names:
                        if alias.name == "*":
                            self.stars.append((node.module or "", node.level))
                        else:
                            self.imports[alias.asname or alias.name] = (node.module or "", alias.name, node.level)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        local = alias.asname or alias.name.split(".")[0]
                        self.imports[local] = (alias.name if alias.asname else local, None, 0)
                elif isinstance(node, ast.Attribute):
                    self.attributes_used.add(node.attr)
                elif isinstance(node, ast.ClassDef) and node.name not in self.classes:
                    self.classes[node.name] = node  # a class defined inside a function


@cache
def _project_module(path: Path) -> _Module | None:
    try:
        return _Module(path, [ast.parse(path.read_text(encoding="utf-8"))])
    except (OSError, UnicodeDecodeError, SyntaxError):
        return None  # a project file the checker cannot read is not judged; the file itself is checked if given


@cache
def _find_module(origin: Path | None, dotted: str, level: int) -> Path | None:
    """The project file that ``from <dotted> import ...`` (``level`` dots) in ``origin`` reads, if it is there."""
    if origin is None:
        return None
    parts = dotted.split(".") if dotted else []
    if level:
        bases = [origin.parents[level - 1]] if level <= len(origin.parents) else []
    else:
        ancestors = list(origin.parents)[:8]
        bases = ancestors + [ancestor / "src" for ancestor in ancestors]  # and a project's src/ layout
    for base in bases:
        candidate = base.joinpath(*parts) if parts else base
        for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if parts and path.is_file() and path.resolve() != origin.resolve():
                return path
    return None


@cache
def _library_object(dotted: str):
    """The object ``transformers.X.Y`` names in the installed library, or ``None`` if there is none (or the library
    is not installed)."""
    parts = dotted.split(".")
    if parts[0] not in LIBRARIES:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = importlib.import_module(parts[0])
            for index, part in enumerate(parts[1:], start=1):
                try:
                    value = getattr(value, part)
                except AttributeError:
                    value = importlib.import_module(".".join(parts[: index + 1]))
    except (ImportError, AttributeError):
        return None
    return value


@dataclass(frozen=True)
class _Local:
    """A class defined in a file the checker read."""

    module: _Module
    node: ast.ClassDef


def _star_exports(dotted: str) -> frozenset[str]:
    """The names ``from <dotted> import *`` binds in the installed library (its ``__all__``, or its public names)."""
    value = _library_object(dotted)
    if value is None:
        return frozenset()
    names = getattr(value, "__all__", None)
    return frozenset(names if names is not None else (n for n in vars(value) if not n.startswith("_")))


def _resolve(module: _Module, node: ast.AST, depth: int = 0, shadowed: str | None = None):
    """What a class expression refers to: a library object, a :class:`_Local` class, or ``None`` (unknown).
    ``shadowed`` is the name of a class whose bases are being read: ``class TrainingArguments(TrainingArguments)``
    names the imported class in its bases, not itself."""
    if depth > 6:
        return None
    if isinstance(node, ast.Subscript):
        return _resolve(module, node.value, depth, shadowed)
    dotted = []
    while isinstance(node, ast.Attribute):
        dotted.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    name = node.id
    if not dotted and name in module.classes and name != shadowed:
        return _Local(module, module.classes[name])
    if name not in module.imports:
        for source, level in module.stars:  # from transformers.trainer import *
            if level == 0 and source.split(".")[0] in LIBRARIES and name in _star_exports(source):
                return _library_object(".".join([source, name, *dotted]))
        return None
    source, imported, level = module.imports[name]
    if level == 0 and source.split(".")[0] in LIBRARIES:
        return _library_object(".".join([source, *([imported] if imported else []), *dotted]))
    target = _find_module(module.path, source if imported else source, level)
    other = _project_module(target) if target else None
    if other is None:
        return None
    if imported is None:  # `import project.module` then `project.module.Class`
        return _resolve(other, ast.Name(dotted[-1]), depth + 1) if dotted else None
    return _resolve(other, _dotted_node([imported, *dotted]), depth + 1)


def _dotted_node(parts: list[str]) -> ast.AST:
    node: ast.AST = ast.Name(parts[0])
    for part in parts[1:]:
        node = ast.Attribute(node, part)
    return node


@dataclass
class _Chain:
    """A class and what it derives from: its classes read from files (most derived first), the first library
    class reached through them (``transformers.Trainer``, ``trl.SFTTrainer``, ``TrainingArguments``...), and
    whether some base could not be read."""

    locals: list[_Local]
    root: type | None
    unknown: list[str]

    def subclass_of(self, cls: type) -> bool:
        return isinstance(self.root, type) and issubclass(self.root, cls)


def _chain(module: _Module, node: ast.AST) -> _Chain:
    chain = _Chain([], None, [])
    pending: list[tuple[_Module, ast.AST, str | None]] = [(module, node, None)]
    seen = set()
    while pending:
        where, expression, shadowed = pending.pop(0)
        target = _resolve(where, expression, shadowed=shadowed)
        if isinstance(target, _Local):
            if id(target.node) in seen:
                continue
            seen.add(id(target.node))
            chain.locals.append(target)
            pending += [(target.module, base, target.node.name) for base in target.node.bases]
        elif isinstance(target, type):
            if chain.root is None:
                chain.root = target
        else:
            chain.unknown.append(ast.unparse(expression) if isinstance(expression, ast.AST) else str(expression))
    return chain


def _classes():
    from transformers import Trainer, TrainerCallback, TrainingArguments

    return Trainer, TrainerCallback, TrainingArguments


def _is_trainer(chain: _Chain) -> bool:
    trainer = _classes()[0]
    return chain.subclass_of(trainer) or (
        chain.root is None and bool(chain.locals) and any(name.endswith("Trainer") for name in chain.unknown)
    )


def _declared_fields(chain: _Chain) -> set[str]:
    return {
        item.target.id
        for local in chain.locals
        for item in local.node.body
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
    }


@dataclass(frozen=True)
class _Arguments:
    """An arguments object's class: its fields, whether they are all known, and the library class it builds on."""

    fields: frozenset[str]
    closed: bool
    root: type
    name: str


def _arguments(module: _Module, node: ast.AST) -> _Arguments | None:
    """The arguments class a class expression names (``TrainingArguments``, ``Seq2SeqTrainingArguments``, a trl
    config, a subclass of one), or ``None``."""
    training_arguments = _classes()[2]
    chain = _chain(module, node)
    name = ast.unparse(node)
    if chain.subclass_of(training_arguments):
        root = chain.root
        return _Arguments(_class_fields(root) | _declared_fields(chain), not chain.unknown, root, name.split(".")[-1])
    if chain.root is None and chain.unknown and name.endswith("TrainingArguments"):
        fields = _class_fields(training_arguments) | _declared_fields(chain)
        return _Arguments(fields, False, training_arguments, name.split(".")[-1])
    return None


# ---------------------------------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------------------------------
def _terminal(node: ast.AST) -> str | None:
    """``Trainer`` for ``Trainer``, ``transformers.Trainer`` or ``Trainer[...]``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _terminal(node.value)
    return None


def _old_fate(name: str) -> Fate | None:
    return {**TRAINING_ARGUMENTS_4_8_2, **LATER_ARGUMENTS}.get(name)


def _is_old_argument(name: str) -> bool:
    """A TrainingArguments name that 4.x had and the installed release does not."""
    fate = _old_fate(name)
    return name not in installed_fields() and (
        (fate is not None and fate.status in (RENAMED, REMOVED)) or name in _ladder_old_fields()
    )


@cache
def _field_default(name: str):
    from transformers import TrainingArguments

    for item in dataclasses.fields(TrainingArguments):
        if item.name == name and item.default is not dataclasses.MISSING:
            return item.default
    return None


def _argument_finding(name: str, value: str, fields: frozenset[str] | None = None) -> tuple[str, str, str]:
    """(kind, message, fix) for a TrainingArguments keyword the installed release does not have."""
    fields = installed_fields() if fields is None else fields
    release = installed_version()
    fate = _old_fate(name)
    when = ladder_history(f"argument_{name}") or ladder_removal(name)
    if fate is not None and fate.status == RENAMED and fate.new_name in fields:
        return (
            "renamed-argument",
            f"TrainingArguments has no `{name}` on {release}: it was renamed `{fate.new_name}`{when}",
            f"{fate.new_name}={value}" + (f" ({fate.note})" if fate.note else ""),
        )
    if fate is not None and fate.status == REMOVED:
        return (
            "removed-argument",
            f"TrainingArguments has no `{name}` on {release}: it was removed{when}",
            _fix(name, value, fate),
        )
    close = difflib.get_close_matches(name, sorted(fields), n=1, cutoff=0.75)
    if when and "never saw" not in when:
        return (
            "removed-argument",
            f"TrainingArguments has no `{name}` on {release}: it was removed{when}",
            f"use `{close[0]}` if that is what it set; otherwise delete it" if close else "delete it",
        )
    return (
        "unknown-argument",
        f"TrainingArguments has no `{name}` on {release} (a typo, or an argument from another library)",
        f"did you mean `{close[0]}`?" if close else "check the name against `dataclasses.fields(TrainingArguments)`",
    )


def _fix(name: str, value: str, fate: Fate) -> str:
    """The replacement for a removed argument ``name=value``; for a choice (``group_by_length=x`` becomes a
    ``train_sampling_strategy``) a value that is not a literal keeps its condition, so nothing else changes."""
    note = "" if fate.note.startswith("use ") else f" ({fate.note})"
    if not fate.new_name:
        return f"delete it: {fate.note}"
    if fate.new_value is None:
        return f"{fate.new_name}={value}{note}"
    if value == "False":
        return f"delete it: {value} was the default"
    if value == "True":
        return f"{fate.new_name}={fate.new_value!r} in place of {name}={value}{note}"
    default = _field_default(fate.new_name)
    return (
        f"{fate.new_name}={fate.new_value!r} if {value} else {default!r} in place of {name}={value} "
        f"(the same choice: {fate.new_value!r} only when {value} is true){note}"
    )


@dataclass
class _Scope:
    """Names bound to arguments objects in one function (or at module level), names bound to the file's own
    dataclasses that hold arguments objects in their fields (``args.reward_config``), and the names it assigns."""

    arguments: dict[str, _Arguments] = field(default_factory=dict)
    holders: dict[str, dict[str, _Arguments]] = field(default_factory=dict)
    instances: dict[str, _Local] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)
    aliases: dict[str, list[ast.AST]] = field(default_factory=dict)  # Cls = PeftTrainer if lora else Trainer


class _Checker(ast.NodeVisitor):
    def __init__(self, unit: _Unit, module: _Module, lines: list[str], module_scope: _Scope):
        self.unit, self.module, self.lines = unit, module, lines
        self.found: list[tuple[Finding, bool]] = []
        self.try_stack: list[set[str]] = []
        self.marked_stack: list[bool] = []
        self.class_stack: list[tuple[ast.ClassDef, _Chain]] = []
        self.function_stack: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.scopes: list[_Scope] = [module_scope]
        self.reported_tokenizer: set[int] = set()
        self.reported_values: set[int] = set()
        self.reported_keys: set[int] = set()
        self.fallbacks = 0  # inside `except ImportError:` after imports the installed release has: never runs
        self.patched = module.patched()
        self.patched_events = module.patched_events()

    # -- bookkeeping ----------------------------------------------------------------------------------------------
    def _marked(self, line: int) -> bool:
        return 0 < line <= len(self.lines) and MARKER in self.lines[line - 1]

    def _add(self, node: ast.AST, kind: str, message: str, fix: str, catches: str = "TypeError") -> None:
        line = getattr(node, "lineno", 1)
        finding = Finding(self.unit.path, line, kind, message, fix, lesson_for(kind), self.unit.cell)
        if any(f.line == line and f.kind == kind and f.message == message for f, _ in self.found):
            return  # the same name read twice on one line: one finding
        caught = any(catches in handled or "Exception" in handled for handled in self.try_stack)
        expected = caught or self._marked(line) or any(self.marked_stack)
        self.found.append((finding, expected))

    def visit_Try(self, node: ast.Try) -> None:
        handled = set()
        for handler in node.handlers:
            if handler.type is None:
                handled.add("Exception")
            for item in handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]:
                if item is not None and (name := _terminal(item)):
                    handled.add(name)
        self.try_stack.append(handled)
        for statement in node.body:
            self.visit(statement)
        self.try_stack.pop()
        fallback = bool(handled & {"ImportError", "ModuleNotFoundError", "Exception"}) and _imports_work(node.body)
        self.fallbacks += fallback
        for handler in node.handlers:
            self.visit(handler)
        self.fallbacks -= fallback
        for part in (*node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try

    def _trainer_context(self) -> tuple[str, _Chain] | None:
        """The Trainer class (name and chain) whose method is being read, or a function patched onto a Trainer."""
        if self.class_stack and self.function_stack:
            owner, chain = self.class_stack[-1]
            if _is_trainer(chain):
                return owner.name, chain
        for function in self.function_stack:
            if function.name in self.patched and not self.class_stack:
                cls = self.patched[function.name][0]
                return f"{cls.__name__} (patched)", _Chain([], cls, [])
        return None

    # -- imports ----------------------------------------------------------------------------------------------------
    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level == 0 and any(alias.name == "*" for alias in node.names) and not self.fallbacks:
            self._star_import(node, module)
        if node.level == 0 and module.split(".")[0] in LIBRARIES and not self.fallbacks:
            problem = _import_problem(module, tuple(alias.name for alias in node.names if alias.name != "*"))
            if problem:
                self._add(node, "removed-import", problem[0], problem[1], catches="ImportError")
        self.generic_visit(node)

    def _star_import(self, node: ast.ImportFrom, module: str) -> None:
        """``from transformers.trainer import *`` in a file that uses names the installed module no longer gives
        (``is_torch_tpu_available``, ``ShardedDDPOption``, and the ``typing`` names 4.x's trainer.py imported):
        names the file never binds itself, so each use raises NameError. Judged only when every star import of the
        file is from transformers or trl."""
        if module.split(".")[0] not in LIBRARIES or any(
            source.split(".")[0] not in LIBRARIES or level for source, level in self.module.stars
        ):
            return
        exports = set().union(*(_star_exports(source) for source, _ in self.module.stars))
        if not exports:
            return
        missing = sorted(_unbound_names(self.module) - exports)
        if missing:
            shown = ", ".join(f"`{name}`" for name in missing[:8]) + (", ..." if len(missing) > 8 else "")
            self._add(
                node,
                "removed-import",
                f"`from {module} import *` no longer gives {shown}, which this file uses and never defines, on "
                f"{installed_version()}: each use raises NameError",
                f"import each name from where it is now (the typing names from typing), or write the code another "
                f"way; names the installed {module} lacks: {', '.join(missing)}",
                catches="NameError",
            )

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name.split(".")[0] in LIBRARIES and "." in alias.name and not self.fallbacks:
                problem = _import_problem(alias.name, ())
                if problem:
                    self._add(node, "removed-import", problem[0], problem[1], catches="ImportError")
        self.generic_visit(node)

    # -- functions and scopes -----------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.marked_stack.append(self._marked(node.lineno))
        scope = _function_scope(self.module, node, self.class_stack[-1][1] if self.class_stack else None)
        if node.name in self.patched and not self.class_stack:
            cls, attribute = self.patched[node.name]
            self._override(f"{cls.__name__} (patched)", node, cls, attribute)
        event = self.patched_events.get(node.name, (None, ""))[1]
        parameters = [*node.args.posonlyargs, *node.args.args]
        if event.startswith("on_") and len(parameters) > 1 and not self.class_stack:
            scope.arguments.setdefault(parameters[1].arg, _trainer_arguments(self.module))  # (self, args, state, ...)
        self.function_stack.append(node)
        self.scopes.append(scope)
        self.generic_visit(node)
        self.scopes.pop()
        self.function_stack.pop()
        self.marked_stack.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _arguments_of(self, node: ast.AST) -> _Arguments | None:
        """The arguments class of an expression: a bound name, ``self.args`` in a Trainer, or a field of one of the
        file's dataclasses that holds an arguments object (``script_args.reward_config``)."""
        if isinstance(node, ast.Name):
            for scope in reversed(self.scopes):
                if node.id in scope.arguments:
                    return scope.arguments[node.id]
                if node.id in scope.assigned:
                    return None
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            for scope in reversed(self.scopes):
                if node.value.id in scope.holders:
                    return scope.holders[node.value.id].get(node.attr)
                if node.value.id in scope.arguments or node.value.id in scope.assigned:
                    break
        if _is_self_args(node) and self._trainer_context() is not None:
            return _trainer_arguments(self.module)
        return None

    # -- attributes: removed TrainingArguments fields, self.tokenizer, removed methods -----------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        arguments = self._arguments_of(node.value)
        if arguments is not None:
            self._argument_attribute(node, arguments)
        elif isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name | ast.Attribute):
            self._enum_member(node)
        context = self._trainer_context()
        if context is not None:
            if _is_name(node.value, "self") and node.attr == "tokenizer" and isinstance(node.ctx, ast.Load):
                self._tokenizer_attribute(node, *context)
            elif isinstance(node.ctx, ast.Load) and (_is_name(node.value, "self") or _is_super(node.value)):
                self._removed_method(node, *context)
        self.generic_visit(node)

    def _argument_attribute(self, node: ast.Attribute, arguments: _Arguments) -> None:
        name = node.attr
        if name in arguments.fields or hasattr(arguments.root, name) or not _is_old_argument(name):
            return
        if name in _instance_attributes(arguments.root):
            return  # no longer a field, but the installed class still sets it on the instance (``_n_gpu``)
        fate = _old_fate(name)
        owner = ast.unparse(node.value)
        verb = "read" if isinstance(node.ctx, ast.Load) else "set"
        if fate is not None and fate.status == RENAMED:
            fix = f"{verb} `{owner}.{fate.new_name}`"
        elif fate is not None and fate.new_name and fate.new_value is not None:
            test = "test it for" if verb == "read" else "set it to"
            fix = f"{verb} `{owner}.{fate.new_name}` and {test} {fate.new_value!r} ({fate.note})"
        elif fate is not None and fate.new_name:
            fix = f"{verb} `{owner}.{fate.new_name}` ({fate.note})"
        elif fate is not None:
            fix = f"delete it: {fate.note}"
        else:
            fix = "delete it, or declare the field in your own TrainingArguments subclass"
        reading = isinstance(node.ctx, ast.Load)
        self._add(
            node,
            "removed-attribute",
            f"`{ast.unparse(node)}`: {arguments.name} has no `{name}` on {installed_version()}"
            f"{ladder_removal(name)}: "
            + ("reading it raises AttributeError" if reading else "setting it changes nothing the Trainer reads"),
            fix,
            catches="AttributeError",
        )

    def _enum_member(self, node: ast.Attribute) -> None:
        """``OptimizerNames.ADAMW_HF``: a member of an option's enum that a ladder release had and the installed
        release has not (reading it raises AttributeError). A name no release had is a typo: not a finding."""
        enum = _resolve(self.module, node.value)
        if not isinstance(enum, type) or not issubclass(enum, Enum) or hasattr(enum, node.attr):
            return
        field_name = _enum_field(enum.__name__)
        value = ladder_enum_value(enum.__name__, node.attr) if field_name else None
        removal = ladder_value_removal(field_name, value) if field_name and value else None
        if removal is None:
            return
        replacement = OLD_VALUES.get((field_name, value))
        member = next((m.name for m in enum if replacement and m.value == replacement[0]), None)
        self._add(
            node,
            "removed-value",
            f"`{ast.unparse(node)}`: {enum.__name__} has no `{node.attr}` on {installed_version()}, so reading it "
            f"raises AttributeError; it stood for {field_name}={value!r}{removal}",
            f"{ast.unparse(node.value)}.{member} ({replacement[1]})"
            if member and replacement
            else f"one of {', '.join(sorted(m.name for m in enum))}",
            catches="AttributeError",
        )

    def _tokenizer_attribute(self, node: ast.Attribute, owner: str, chain: _Chain) -> None:
        if chain.root is None or chain.unknown or hasattr(chain.root, "tokenizer"):
            return
        if any(_assigns_self(local.node, "tokenizer") for local in chain.locals):
            return
        key = id(chain.locals[0].node) if chain.locals else id(chain.root)
        if key in self.reported_tokenizer:
            return
        self.reported_tokenizer.add(key)
        self._add(
            node,
            "tokenizer-attribute",
            f"`self.tokenizer` in `{owner}`: {chain.root.__name__} ({_library_release(chain.root)}) has no "
            "`tokenizer` attribute, so reading it raises AttributeError (this class reads it on other lines too "
            "where it says self.tokenizer)",
            "self.processing_class",
            catches="AttributeError",
        )

    def _removed_method(self, node: ast.Attribute, owner: str, chain: _Chain) -> None:
        name = node.attr
        if chain.root is None or name.startswith("__") or hasattr(chain.root, name):
            return
        if any(_defines(local.node, name) or _assigns_self(local.node, name) for local in chain.locals):
            return
        removed = ladder_method_removal(name)
        if not removed or "never saw" in removed:
            self._removed_trainer_attribute(node, owner, chain)
            return
        self._add(
            node,
            "removed-method",
            f"`{owner}` uses `{ast.unparse(node)}`, which {_library_release(chain.root)} no longer has{removed}",
            "find the method that replaced it in the installed trainer.py (prediction_loop: evaluation_loop)",
            catches="AttributeError",
        )

    def _removed_trainer_attribute(self, node: ast.Attribute, owner: str, chain: _Chain) -> None:
        """``self.fsdp`` in a Trainer subclass: an attribute a ladder release's Trainer set and the installed one
        neither sets nor has; or a name nothing sets at all, neither the installed class nor this file
        (``self._max_length`` of a 4.1x Seq2SeqTrainer, ``self._get_batch_logps`` of an older trl)."""
        name = node.attr
        if chain.unknown or not _is_name(node.value, "self") or name in _instance_attributes(chain.root):
            return
        from transformers import Seq2SeqTrainer

        release = _library_release(chain.root)
        removed = ladder_attribute_removal(name, issubclass(chain.root, Seq2SeqTrainer))
        if removed is not None and "never saw" not in removed:
            message = f"{chain.root.__name__} ({release}) does not set `{name}`{removed}"
        elif name.startswith("__") or name in _attributes_set(self.module):
            return  # set somewhere in this file (or a mangled name): not ours to judge
        else:
            message = (
                f"neither {chain.root.__name__} ({release}) nor this file defines or sets `{name}` (the ladder, "
                f"from {ladder()['releases'][0]}, never saw the Trainer have it: it belongs to an older release)"
            )
        self._add(
            node,
            "removed-attribute",
            f"`self.{name}` in `{owner}`: {message}: reading it raises AttributeError",
            f"find what replaced `{name}` in the installed {chain.root.__module__} (or set it yourself in __init__)",
            catches="AttributeError",
        )

    # -- calls: TrainingArguments(...), Trainer(...), super() ----------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        callee = node.func
        if _is_super(callee.value if isinstance(callee, ast.Attribute) else None):
            self._super_call(node)
        else:
            arguments = _arguments(self.module, callee)
            if arguments is not None:
                self._arguments_call(node, arguments)
            else:
                self._library_call(node)
                for target in self._aliased(callee):
                    chain = _chain(self.module, target)
                    if chain.subclass_of(_classes()[0]) and not chain.unknown:
                        self._trainer_call(node, ast.unparse(callee), chain)
        self._callback_tokenizer(node)
        self.generic_visit(node)

    def _keywords(self, node: ast.Call) -> list[tuple[ast.keyword, str | None]]:
        """The call's keywords, with ``**kwargs`` opened where the file builds that dict itself: each keyword
        comes with the dict's name (``None`` for a keyword written in the call)."""
        keywords: list[tuple[ast.keyword, str | None]] = []
        for keyword in node.keywords:
            if keyword.arg is not None:
                keywords.append((keyword, None))
                continue
            opened = self._dict_keywords(keyword.value, node)
            keywords.extend((item, ast.unparse(keyword.value)) for item in opened)
        return keywords

    def _dict_keywords(self, value: ast.AST, call: ast.Call) -> list[ast.keyword]:
        """The string keys (as keywords) of ``**value``: a dict written in the call (``**{"k": v}``,
        ``**dict(k=v)``), or a name that the enclosing function (or the module) binds only to such a dict and
        fills before the call with ``name["k"] = v`` or ``name.update(...)``. A name bound to anything else, or
        given as a parameter, is not opened: its keys cannot be read."""
        opened = _dict_items(value)
        if opened is not None or not isinstance(value, ast.Name):
            return opened or []
        function = self.function_stack[-1] if self.function_stack else None
        if function is not None and value.id in {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}:
            return []
        body = function.body if function is not None else self.unit.tree.body
        keywords: list[ast.keyword] = []
        bound = False
        for statement in _statements(body):
            if getattr(statement, "lineno", 0) >= call.lineno:
                break
            if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for target in targets:
                    if _is_name(target, value.id):
                        items = _dict_items(statement.value) if isinstance(statement, ast.Assign) else None
                        if items is None:
                            return []  # bound to something whose keys this file does not show
                        keywords, bound = items, True
                    elif (
                        isinstance(target, ast.Subscript)
                        and _is_name(target.value, value.id)
                        and isinstance(target.slice, ast.Constant)
                        and isinstance(target.slice.value, str)
                    ):
                        keywords.append(ast.keyword(arg=target.slice.value, value=statement.value))
                    elif any(_is_name(part, value.id) for part in ast.walk(target)):
                        return []
            elif (
                isinstance(statement, ast.Expr)
                and isinstance(call_ := statement.value, ast.Call)
                and isinstance(call_.func, ast.Attribute)
                and call_.func.attr == "update"
                and _is_name(call_.func.value, value.id)
            ):
                items = _dict_items(call_.args[0]) if call_.args else []
                if items is None:
                    return []
                keywords += items + [k for k in call_.keywords if k.arg is not None]
        return keywords if bound else []

    def _library_call(self, node: ast.Call) -> None:
        """A call of a transformers or trl function (``deepspeed_init(self, ..., resume_from_checkpoint=None)``)
        that the installed function's signature does not take: a TypeError when the line runs."""
        if not isinstance(node.func, ast.Name | ast.Attribute) or _unpacks(node):
            return
        function = _resolve(self.module, node.func)
        library = (getattr(function, "__module__", None) or "").split(".")[0]
        if not inspect.isfunction(function) or library not in LIBRARIES:
            return
        try:
            signature = inspect.signature(function)
            signature.bind(*node.args, **{keyword.arg: keyword.value for keyword in node.keywords})
        except TypeError as error:
            self._add(
                node,
                "call-signature",
                f"`{ast.unparse(node.func)}(...)` does not fit {library} {_installed_library(library)}'s "
                f"`{function.__name__}{signature}`: {error}",
                f"call it as {function.__name__}{signature}",
            )
        except ValueError:
            return  # no signature to read

    def _aliased(self, callee: ast.AST) -> list[ast.AST]:
        """The classes a called name stands for: itself, or each class the function assigned to it
        (``FinetuningTrainer = PeftTrainer`` and ``FinetuningTrainer = Trainer``); reported once for all of them."""
        if isinstance(callee, ast.Name):
            for scope in reversed(self.scopes):
                if callee.id in scope.aliases:
                    return scope.aliases[callee.id]
                if callee.id in scope.assigned:
                    return []
        return [callee]

    def _arguments_call(self, node: ast.Call, arguments: _Arguments) -> None:
        for keyword, holder in self._keywords(node):
            if keyword.arg in arguments.fields:
                self._choice(keyword.arg, keyword.value, arguments.name)
                continue
            if not arguments.closed and not _is_old_argument(keyword.arg):
                continue  # a subclass from elsewhere may declare it
            if id(keyword.value) in self.reported_keys:
                continue  # the same dict given to a second call
            self.reported_keys.add(id(keyword.value))
            value = ast.get_source_segment(self.unit.source, keyword.value) or "..."
            kind, message, fix = _argument_finding(keyword.arg, value, arguments.fields)
            message = message.replace("TrainingArguments has", f"{arguments.name} has", 1)
            if holder is not None:
                message += f" (the key {keyword.arg!r} of `{holder}`, passed to {arguments.name} with **)"
                fix = _key_fix(keyword.arg, fix, holder)
            self._add(keyword.value, kind, message, fix)

    def _literals(self, node: ast.AST) -> list[tuple[str, ast.AST, bool]]:
        """:meth:`_literal` for each value an expression can come to: both branches of ``a if c else b`` and
        each operand of ``a or b``."""
        if isinstance(node, ast.IfExp):
            return self._literals(node.body) + self._literals(node.orelse)
        if isinstance(node, ast.BoolOp):
            return [found for value in node.values for found in self._literals(value)]
        found = self._literal(node)
        return [found] if found is not None else []

    def _literal(self, node: ast.AST) -> tuple[str, ast.AST, bool] | None:
        """The string an argument's value comes to, where it is written, and whether that is in this cell or file:
        a literal (``optim="adamw_hf"``), or the default of a field of the file's own dataclass that the value
        reads (``optim=script_args.optim`` with ``optim: str = field(default="adamw_hf")``)."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value, node, True
        if not (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)):
            return None
        local = None
        for scope in reversed(self.scopes):
            if node.value.id in scope.arguments or node.value.id in scope.holders:
                return None
            if node.value.id in scope.instances:
                local = scope.instances[node.value.id]
            if node.value.id in scope.instances or node.value.id in scope.assigned:
                break
        if local is None:
            default = _argparse_defaults(self.module).get(node.attr)  # optim=args.optimizer, an argparse option
            if default is None:
                return None
            return default.value, default, any(part is default for part in ast.walk(self.unit.tree))
        for owner in _chain(local.module, ast.Name(local.node.name)).locals:
            for item in owner.node.body:
                if _declares(item, node.attr):
                    default = _declared_default(item)
                    if isinstance(default, ast.Constant) and isinstance(default.value, str):
                        here = any(part is owner.node for part in ast.walk(self.unit.tree))  # only once found
                        return default.value, default, here
                    return None
        return None

    def _choice(self, name: str, node: ast.AST, owner: str) -> None:
        """``name=value`` for an enum-valued field (``optim``, ``lr_scheduler_type``...): a value that a ladder release
        took and the installed release refuses."""
        choices = installed_choices().get(name)
        for value, written, here in self._literals(node) if choices else []:
            if value in choices:
                continue
            removal = ladder_value_removal(name, value)
            if removal is None:
                continue  # no release took it: a typo, which the installed ValueError already names
            where = written if here else node
            if id(where) not in self.reported_values:
                self.reported_values.add(id(where))
                self._removed_value(name, value, node, where, owner, removal, choices)

    def _removed_value(
        self, name: str, value: str, node: ast.AST, where: ast.AST, owner: str, removal: str, choices: frozenset[str]
    ) -> None:
        replacement = OLD_VALUES.get((name, value))
        self._add(
            where,
            "removed-value",
            f"`{name}={value!r}`"
            + ("" if where is node else f" (given to {owner} as `{ast.unparse(node)}`)")
            + f": {installed_version()}'s TrainingArguments refuses it with a ValueError{removal}",
            f"{name}={replacement[0]!r} ({replacement[1]})" if replacement else f"one of {sorted(choices)}",
            catches="ValueError",
        )

    def _trainer_call(self, node: ast.Call, name: str, chain: _Chain) -> None:
        """``Trainer(...)`` (or a subclass, or TRL's trainers): keywords and positions the class no longer takes."""
        declared: set[str] = set()
        reaches_root = not chain.locals
        own_positional: list[str] | None = None
        for local in chain.locals:  # keywords a subclass's own __init__ declares are its business
            init = _method(local.node, "__init__")
            if init is None:
                continue
            described = _described_function(init)
            declared |= set(_names(described))
            if own_positional is None:
                own_positional = [p for p in described if not p.startswith(("*", "^"))]
            if not any(p.startswith("**") for p in described):
                break  # its keywords stop here
        else:
            reaches_root = True
        root = chain.root
        accepted = set(_names(_init_parameters(root))) if reaches_root else set()
        config = _trl_config(root) if root.__module__.split(".")[0] == "trl" else None
        self._check_trainer_arguments(node, name, root, accepted | declared, config)
        if config is not None and all(_method(local.node, "__init__") is None for local in chain.locals):
            self._trl_config_argument(node, name, root, config)  # the trl trainer's own __init__ reads args
        if own_positional is None and reaches_root:
            self._check_positions(node, name, root)

    def _check_trainer_arguments(
        self, node: ast.Call, name: str, root: type, accepted: set[str], config: type | None
    ) -> None:
        """Keywords the class does not take; ``config`` is a trl trainer's config class (``None`` otherwise)."""
        release = _library_release(root)
        library = root.__module__.split(".")[0]
        for keyword, holder in self._keywords(node):
            if keyword.arg in accepted or id(keyword.value) in self.reported_keys:
                continue
            self.reported_keys.add(id(keyword.value))
            value = ast.get_source_segment(self.unit.source, keyword.value) or "..."
            if keyword.arg == "tokenizer" and "processing_class" in accepted:
                kind, message, fix = (
                    "trainer-tokenizer",
                    f"`{name}(tokenizer=...)`: {root.__name__} ({release}) has no `tokenizer` argument"
                    f"{ladder_history('tokenizer_argument') if library == 'transformers' else ''}",
                    f"processing_class={value}",
                )
            elif config is not None:
                kind, (message, fix) = "trl-argument", _trl_argument(name, root, config, keyword.arg, value)
            else:
                close = difflib.get_close_matches(keyword.arg, sorted(accepted), n=1, cutoff=0.6)
                kind, message, fix = (
                    "trainer-argument",
                    f"`{name}(..., {keyword.arg}=...)`: {root.__name__} ({release}) takes no `{keyword.arg}`",
                    f"did you mean `{close[0]}`?" if close else "move it to TrainingArguments or delete it",
                )
            if holder is not None:
                message += f" (the key {keyword.arg!r} of `{holder}`, passed to {name} with **)"
                fix = _key_fix(keyword.arg, fix, holder)
            self._add(keyword.value, kind, message, fix)

    def _trl_config_argument(self, node: ast.Call, name: str, root: type, config: type) -> None:
        """``DPOTrainer(args=TrainingArguments(...))``: a trl trainer whose ``args`` must be its own config class
        (4.x-era trl took a TrainingArguments and the trainer's options as keywords)."""
        if _takes_training_arguments(root):
            return
        value = next((keyword.value for keyword in node.keywords if keyword.arg == "args"), None)
        names = list(_names(_init_parameters(root)))
        if value is None and "args" in names:
            index = names.index("args")
            if index < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
                value = node.args[index]
        if value is None:
            return
        arguments = _arguments(self.module, value.func) if isinstance(value, ast.Call) else self._arguments_of(value)
        if arguments is None or not arguments.closed or issubclass(arguments.root, config):
            return
        read = _config_fields_read(root, config)
        self._add(
            value,
            "trl-argument",
            f"`{name}(args={ast.unparse(value)})`: that is a {arguments.name}, and {root.__name__} "
            f"({_library_release(root)}) takes a {config.__name__}"
            + (f": it reads {', '.join(f'`args.{field}`' for field in read)} from it" if read else ""),
            f"build it as {config.__name__}(...) with the same arguments ({config.__name__} is a TrainingArguments "
            "subclass), and pass it as args=",
            catches="AttributeError",
        )

    def _check_positions(self, node: ast.Call, name: str, root: type) -> None:
        """Positional arguments beyond the place where 4.x's Trainer and the installed one part ways."""
        trainer = _classes()[0]
        if root is not trainer and root.__init__ is not trainer.__init__:
            return  # another __init__ (Seq2SeqTrainer's is the Trainer's order; trl's are their own)
        old = [p.rstrip("=").replace("tokenizer", "processing_class") for p in _old_trainer_init()]
        new = list(_names(_init_parameters(root)))
        for index, argument in enumerate(node.args):
            if isinstance(argument, ast.Starred):
                return
            if index < len(old) and index < len(new) and old[index] != new[index]:
                self._add(
                    argument,
                    "trainer-positional",
                    f"`{name}(...)`: positional argument {index + 1} was `{old[index]}` on the 4.x Trainer, and "
                    f"{root.__name__} ({_library_release(root)}) takes it as `{new[index]}`: every later "
                    "positional argument moves too",
                    f"pass it and the ones after it by keyword: {old[index]}={ast.unparse(argument)}, ...",
                )
                return

    def _super_call(self, node: ast.Call) -> None:
        """``super().name(...)`` in a Trainer subclass: does the installed method still take this call?"""
        context = self._trainer_context()
        if context is None or not isinstance(node.func, ast.Attribute) or not self.class_stack:
            return
        owner, chain = context
        name = node.func.attr
        parents = chain.locals[1:]
        if any(_method(local.node, name) is not None for local in parents) or chain.root is None:
            return
        if name == "__init__":
            if chain.unknown:
                return
            parent = _Chain(parents, chain.root, [])
            self._trainer_call(node, "super().__init__", parent)
            return
        signature = _methods(chain.root).get(name)
        if signature is None or _unpacks(node):
            return
        params = [describe(p) for p in list(signature.parameters.values())[1:]]
        keywords = [k.arg for k in node.keywords]
        why = _bind_described(params, len(node.args), keywords)
        if why is None or not _ladder_accepted_call(name, len(node.args), keywords):
            return
        self._add(
            node,
            "call-signature",
            f"`{ast.unparse(node.func)}(...)` in `{owner}` no longer fits {_library_release(chain.root)}: "
            f"{name}{_plain(signature)} is what it takes, and {why}",
            f"call it as {ast.unparse(node.func)}{_plain(signature, skip_self=True)}",
        )

    def _callback_tokenizer(self, node: ast.Call) -> None:
        """``kwargs.get("tokenizer")`` in a callback; subscripts are handled in :meth:`visit_Subscript`."""
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and _is_constant(node.args[0], "tokenizer")
        ):
            self._callback_key(node, node.func.value)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if _is_constant(node.slice, "tokenizer") and isinstance(node.ctx, ast.Load):
            self._callback_key(node, node.value)
        self.generic_visit(node)

    def _callback_key(self, node: ast.AST, container: ast.AST) -> None:
        if not (self.class_stack and self.function_stack and isinstance(container, ast.Name)):
            return
        owner, chain = self.class_stack[-1]
        if not chain.subclass_of(_classes()[1]):
            return
        function = self.function_stack[-1]
        kwargs = {function.args.kwarg.arg} if function.args.kwarg else set()
        kwargs |= {a.arg for a in function.args.args if a.arg == "kwargs"}
        if container.id not in kwargs or "tokenizer" in installed_callback_kwargs():
            return
        self._add(
            node,
            "callback-tokenizer",
            f"`{ast.unparse(node)}` in `{owner.name}`: the installed Trainer ({installed_version()}) passes callbacks "
            "`processing_class`, not `tokenizer`",
            f'{container.id}["processing_class"]',
            catches="KeyError",
        )

    # -- class definitions: Trainer overrides, callback events, arguments fields --------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.marked_stack.append(self._marked(node.lineno))
        chain = _chain(self.module, ast.Name(node.name)) if node.name in self.module.classes else _Chain([], None, [])
        if chain.locals and chain.locals[0].node is not node:
            chain = _Chain([_Local(self.module, node)], None, [])
        trainer, callback, _ = _classes()
        if _is_trainer(chain):
            root = chain.root if chain.root is not None else trainer
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    self._override(node.name, item, root, item.name, chain)
        elif chain.subclass_of(callback):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    self._event(node, item)
        else:
            arguments = _arguments(self.module, ast.Name(node.name)) if node.name in self.module.classes else None
            if arguments is not None:
                self._fields(node, arguments)
        self.class_stack.append((node, chain))
        self.generic_visit(node)
        self.class_stack.pop()
        self.marked_stack.pop()

    def _fields(self, node: ast.ClassDef, arguments: _Arguments) -> None:
        """Fields of a TrainingArguments subclass that 4.x read and the installed Trainer no longer does."""
        for item in node.body:
            if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
                continue
            name = item.target.id
            default = _declared_default(item)
            if name in installed_choices() and default is not None:
                self._choice(name, default, node.name)
            if name in _class_fields(arguments.root) or not _is_old_argument(name):
                continue
            fate = _old_fate(name)
            value = _field_value(item)
            if fate is not None and fate.status == RENAMED:
                fix = f"delete the field and use `{fate.new_name}` (give it the default {value} if you need it)"
            elif fate is not None and fate.new_name and fate.new_value is not None:
                fix = (
                    "delete the field: False was the default"
                    if value == "False"
                    else f"delete the field and default `{fate.new_name}` to {fate.new_value!r}"
                    + ("" if value == "True" else f" when {value} is true")
                )
            elif fate is not None and fate.new_name:
                fix = f"delete the field and default `{fate.new_name}` to {value} ({fate.note})"
            elif fate is not None:
                fix = f"delete it: {fate.note}"
            else:
                fix = "delete it, or read it yourself: the Trainer no longer does"
            self._add(
                item,
                "removed-field",
                f"`{node.name}` declares `{name}`, which {installed_version()}'s TrainingArguments no longer has"
                f"{ladder_removal(name)}: the field is accepted, but the Trainer never reads it",
                fix,
            )

    def _event(self, owner: ast.ClassDef, function: ast.FunctionDef) -> None:
        events = installed_events()
        if not function.name.startswith("on_") or function.name in events:
            return
        close = difflib.get_close_matches(function.name, events, n=1, cutoff=0.5)
        self._add(
            function,
            "not-an-event",
            f"`{owner.name}.{function.name}` is not a TrainerCallback event on {installed_version()}: the Trainer "
            "never calls it, and says nothing",
            f"rename it `{close[0]}`" if close else f"use one of the events: {', '.join(events)}",
        )

    def _override(
        self,
        owner: str,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        root: type,
        name: str,
        chain: _Chain | None = None,
    ) -> None:
        if name.startswith("__"):
            return
        methods = _methods(root)
        if name not in methods:
            self._missing_method(owner, function, root, chain)
            return
        signature = methods[name]
        replaced = _replaced(chain) - {name}  # callers the file's classes replace: their calls never happen
        sites = _call_sites(root).get(name, {})
        calls = _merged(sites, replaced)
        failures = [(shape, why) for shape in calls if (why := _bind(function, shape))]
        fits = lambda shape: _bind(function, shape) is None  # noqa: E731
        caller = None
        if failures and not _ladder_ever_fitted(name, fits, replaced):
            failing = [c for c, shapes in sorted(sites.items()) if c not in replaced and not all(map(fits, shapes))]
            caller = _ladder_changed_caller(name, fits, failing)
            if caller is None:
                return  # no release on the ladder called it in a way this override takes: not something 5.x changed
            failures = [(shape, why) for shape in sites[caller] if (why := _bind(function, shape))]
        if failures:
            shape, why = failures[0]
            problem = f"its {root.__name__} calls `{_call_text(name, shape, signature)}`, and {why}"
        else:
            moved = self._moved(function, signature, calls)
            if not moved:
                return
            problem = f"{moved}: the Trainer passes its arguments by position, so they land in the wrong parameters"
        change = ladder_call_change(name, fits, replaced, caller) if failures else ""
        kind = {"compute_loss": "compute-loss-signature", "training_step": "training-step-signature"}.get(
            name, "method-signature"
        )
        wanted = _plain(signature) if signature is not None else "(...)"
        if failures and (widened := _widened(function, calls, signature)):
            wanted = widened  # its own parameters kept: the file's own calls of it go on working
        self._add(
            function,
            kind,
            f"`{owner}.{name}` no longer fits {_library_release(root)}: {problem}{change}",
            f"def {name}{wanted}: ..."
            + (" (and pass every argument on to super())" if name in ("training_step", "compute_loss") else ""),
        )

    @staticmethod
    def _moved(function: ast.FunctionDef, signature: inspect.Signature | None, calls: list) -> str:
        """``"`model` is parameter 2 here but 3 in the Trainer"`` when a name sits at another position that the
        Trainer fills by position."""
        if signature is None or not calls:
            return ""
        filled = max(count for count, _ in calls)
        installed = [
            p.name
            for p in list(signature.parameters.values())[1:]
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        positional = [p.rstrip("=") for p in _described_function(function) if not p.startswith(("*", "^"))]
        for index, name in enumerate(positional[: min(len(installed), filled)]):
            if name != installed[index] and name in installed:
                return f"`{name}` is parameter {index + 1} here but {installed.index(name) + 1} in the Trainer"
        return ""

    def _missing_method(self, owner: str, function: ast.FunctionDef, root: type, chain: _Chain | None) -> None:
        name = function.name
        release = _library_release(root)
        if _referenced(self.module, name, function):
            return  # the file calls it itself: a helper of its own, not a hook the Trainer should call
        if name in NEVER_TRAINER_METHODS:
            self._add(
                function,
                "missing-method",
                f"`{owner}.{name}` overrides nothing: no Trainer release has `{name}`, so evaluation and "
                "training never call it",
                f"override {NEVER_TRAINER_METHODS[name]}",
            )
            return
        removed = ladder_method_removal(name)
        if removed and "never saw" not in removed and root.__module__.startswith("transformers"):
            self._add(
                function,
                "missing-method",
                f"`{owner}.{name}` overrides `Trainer.{name}`, which {release} no longer has{removed}: "
                "nothing calls it",
                "find the method that replaced it in the installed trainer.py, and override that",
            )
            return
        called = sorted(_calls(root))
        close = difflib.get_close_matches(name, called, n=1, cutoff=0.85)
        if close and close[0] != name and close[0].startswith("_") == name.startswith("_"):
            self._add(
                function,
                "missing-method",
                f"`{owner}.{name}` is not a method of {root.__name__} ({release}), and nothing calls it; "
                f"the Trainer calls `{close[0]}`",
                f"rename it `{close[0]}` if it was meant to replace that method",
            )


def _replaced(chain: _Chain | None) -> frozenset[str]:
    """The methods that the file's own classes in ``chain`` define without handing on to the class above
    (``super().name(...)`` or ``Trainer.name(self, ...)``): the library's versions of them never run."""
    names: set[str] = set()
    for local in chain.locals if chain is not None else []:
        for item in local.node.body:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and not any(
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == item.name
                and (_is_super(node.func.value) or _is_other_class(node.func.value))
                for node in ast.walk(item)
            ):
                names.add(item.name)
    return frozenset(names)


def _is_other_class(node: ast.AST) -> bool:
    """``Trainer`` in ``Trainer.training_step(self, ...)``: a name, not ``self``."""
    return isinstance(node, ast.Name) and node.id != "self"


def _is_super(node: ast.AST | None) -> bool:
    return isinstance(node, ast.Call) and _is_name(node.func, "super")


def _is_constant(node: ast.AST, value: str) -> bool:
    return isinstance(node, ast.Constant) and node.value == value


def _method(node: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == name:
            return item
    return None


def _assigns_self(node: ast.ClassDef, name: str) -> bool:
    return name in _class_facts(node)[0]


def _defines(node: ast.ClassDef, name: str) -> bool:
    """Whether a class defines ``name`` (a method, a class attribute, or ``self.name = ...``)."""
    assigned, defined = _class_facts(node)
    return name in assigned or name in defined


@cache
def _class_facts(node: ast.ClassDef) -> tuple[frozenset[str], frozenset[str]]:
    """(names the class assigns as ``self.name = ...``, names its body defines), read once per class."""
    assigned = set()
    for item in ast.walk(node):
        if isinstance(item, ast.Assign | ast.AnnAssign | ast.AugAssign):
            for target in item.targets if isinstance(item, ast.Assign) else [item.target]:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and _is_name(part.value, "self"):
                        assigned.add(part.attr)
    defined = set()
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(item.name)
        elif isinstance(item, ast.Assign):
            defined |= {target.id for target in item.targets if isinstance(target, ast.Name)}
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            defined.add(item.target.id)
    return frozenset(assigned), frozenset(defined)


def _referenced(module: _Module, name: str, function: ast.AST) -> bool:
    """Whether the file uses ``<something>.name`` anywhere (the function's own definition aside)."""
    return name in module.attributes_used


def _declares(item: ast.stmt, name: str) -> bool:
    """Whether a class-body statement declares the field ``name`` (``name: type = ...``)."""
    return isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and item.target.id == name


def _declared_default(item: ast.AnnAssign) -> ast.AST | None:
    """The default of a dataclass field: ``x: str = "a"`` and ``x: str = field(default="a")``."""
    value = item.value
    if isinstance(value, ast.Call) and _terminal(value.func) == "field":
        return next((keyword.value for keyword in value.keywords if keyword.arg == "default"), None)
    return value


def _field_value(item: ast.AnnAssign) -> str:
    """``True`` for ``x: bool = True`` and ``x: bool = field(default=True)``."""
    default = _declared_default(item)
    if default is None:
        return ast.unparse(item.value) if item.value is not None else "..."
    return ast.unparse(default)


def _patched_functions(module: _Module, base: type | None = None) -> dict[str, tuple[type, str]]:
    """Functions of the file assigned onto a Trainer class (``transformers.Trainer._get_train_sampler = f``), or onto
    a subclass of ``base`` (``DEFAULT_PROGRESS_CALLBACK.on_train_begin = f``, for TrainerCallback)."""
    trainer = base if base is not None else _classes()[0]
    patched = {}
    for tree in module.trees:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)):
                continue
            if node.value.id not in module.functions:
                continue
            for target in node.targets:
                if isinstance(target, ast.Attribute):
                    cls = _resolve(module, target.value)
                    if isinstance(cls, type) and issubclass(cls, trainer):
                        patched[node.value.id] = (cls, target.attr)
    return patched


def _all_declared_argument_fields(module: _Module) -> set[str]:
    """Fields declared by the TrainingArguments subclasses the file defines or imports from the project."""
    declared: set[str] = set()
    for name in [*module.classes, *module.imports]:
        arguments = _arguments(module, ast.Name(name)) if name[:1].isupper() else None
        if arguments is not None:
            declared |= arguments.fields
    return declared


def _annotation_arguments(module: _Module, annotation: ast.AST | None) -> _Arguments | None:
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Subscript) and _terminal(annotation.value) in {"Optional", "Union"}:
        inner = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        found = [_annotation_arguments(module, part) for part in inner]
        return next((arguments for arguments in found if arguments is not None), None)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _annotation_arguments(module, annotation.left) or _annotation_arguments(module, annotation.right)
    if isinstance(annotation, ast.Name | ast.Attribute):
        return _arguments(module, annotation)
    return None


def _held_arguments(module: _Module, node: ast.AST) -> dict[str, _Arguments]:
    """The fields of one of the file's (or project's) own classes whose annotation is an arguments class:
    ``reward_config: RewardConfig = field(...)`` gives ``{"reward_config": RewardConfig's fields}``. Empty for an
    arguments class itself and for a class the checker cannot read."""
    if not isinstance(node, ast.Name | ast.Attribute) or _arguments(module, node) is not None:
        return {}
    held = {}
    for local in reversed(_chain(module, node).locals):  # the most derived class's annotation wins
        for item in local.node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                arguments = _annotation_arguments(local.module, item.annotation)
                if arguments is not None:
                    held[item.target.id] = arguments
                else:
                    held.pop(item.target.id, None)
    return held


def _function_scope(module: _Module, function: ast.FunctionDef | ast.AsyncFunctionDef, chain: _Chain | None) -> _Scope:
    scope = _Scope()
    parameters = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    for parameter in parameters:
        scope.assigned.add(parameter.arg)
        if parameter.annotation is not None:
            _bind_object(module, scope, ast.Name(parameter.arg), parameter.annotation)
        arguments = _annotation_arguments(module, parameter.annotation)  # also Optional[...] and "quoted"
        if arguments is not None:
            scope.arguments[parameter.arg] = arguments
    callback = _classes()[1]
    if chain is not None and chain.subclass_of(callback) and function.name.startswith("on_") and len(parameters) > 1:
        first = parameters[1].arg  # (self, args, state, control, **kwargs): args is the TrainingArguments
        if first not in scope.arguments:
            training_arguments = _classes()[2]
            scope.arguments[first] = _Arguments(
                module.declared_argument_fields(), False, training_arguments, "TrainingArguments"
            )
    if chain is not None and parameters and chain.locals and chain.subclass_of(_classes()[2]):
        own = _arguments(module, ast.Name(chain.locals[0].node.name))  # self in a TrainingArguments subclass
        if own is not None:
            scope.arguments[parameters[0].arg] = own
    elif chain is not None and parameters and chain.locals:
        held = _held_arguments(module, ast.Name(chain.locals[0].node.name))  # self.training_args in a holder
        if held:
            scope.holders[parameters[0].arg] = held
    _bind_names(module, function.body, scope)
    if chain is not None and _is_trainer(chain):
        for statement in _statements(function.body):  # args = self.args
            if isinstance(statement, ast.Assign) and _is_self_args(statement.value):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        scope.arguments[target.id] = _trainer_arguments(module)
    return scope


def _is_self_args(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "args" and _is_name(node.value, "self")


def _trainer_arguments(module: _Module) -> _Arguments:
    """What ``self.args`` is in a Trainer: a TrainingArguments with the fields the file's subclasses declare."""
    return _Arguments(module.declared_argument_fields(), False, _classes()[2], "TrainingArguments")


def _module_scope(module: _Module) -> _Scope:
    scope = _Scope()
    for tree in module.trees:
        _bind_names(module, tree.body, scope)
    return scope


def _statements(body: list[ast.stmt]):
    """The statements of a body and of its blocks, not of the functions and classes it defines."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list):
                yield from _statements([s for s in inner if isinstance(s, ast.stmt | ast.excepthandler)])


def _bind_object(module: _Module, scope: _Scope, target: ast.AST, cls: ast.AST) -> None:
    """Record that the name ``target`` holds an instance of the class expression ``cls``: an arguments object, or
    one of the file's dataclasses whose fields hold arguments objects."""
    if not isinstance(target, ast.Name):
        return
    arguments = _arguments(module, cls)
    if arguments is not None:
        scope.arguments[target.id] = arguments
    elif held := _held_arguments(module, cls):
        scope.holders[target.id] = held
    if isinstance(local := _resolve(module, cls), _Local):
        scope.instances[target.id] = local  # its fields' defaults can be read (``optim=script_args.optim``)


def _parser_classes(parser: ast.AST | None, parsers: dict[str, list[ast.AST]]) -> list[ast.AST]:
    """The dataclasses an argument parser was built from: a name bound to ``HfArgumentParser((A, B))``, or the
    call itself (``HfArgumentParser(A).parse_args_into_dataclasses()``)."""
    if isinstance(parser, ast.Name):
        return parsers.get(parser.id, [])
    if isinstance(parser, ast.Call) and parser.args and (_terminal(parser.func) or "").endswith("ArgumentParser"):
        first = parser.args[0]
        return list(first.elts) if isinstance(first, ast.Tuple | ast.List) else [first]
    return []


def _bind_names(module: _Module, body: list[ast.stmt], scope: _Scope) -> None:
    """Names an arguments object (or a dataclass holding one) is bound to: ``args = TrainingArguments(...)``,
    ``model_args, data_args, training_args = parser.parse_args_into_dataclasses()``,
    ``training_args = parser.parse_args_into_dataclasses()[0]`` and ``script_args = tyro.cli(ScriptArguments)``."""
    parsers: dict[str, list[ast.AST]] = {}
    poisoned: set[str] = set()
    assignments = [s for s in _statements(body) if isinstance(s, ast.Assign | ast.AnnAssign)]
    for statement in assignments:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Name):
                    scope.assigned.add(part.id)
        value = statement.value
        if isinstance(value, ast.Call) and _terminal(value.func) == "cast" and len(value.args) == 2:
            value = value.args[1]  # typing.cast(tuple[...], parser.parse_args_into_dataclasses())
        for target in targets:
            options = _options(value) if isinstance(target, ast.Name) else []
            if options and all(isinstance(o, ast.Name | ast.Attribute) and _resolve(module, o) for o in options):
                scope.aliases.setdefault(target.id, []).extend(options)  # a name for a class
            elif isinstance(target, ast.Name):
                poisoned.add(target.id)  # also bound to something else: not a name for a class
        index = None
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
            index, value = value.slice.value, value.value  # parser.parse_args_into_dataclasses()[0]
        if not isinstance(value, ast.Call):
            continue
        function = _terminal(value.func) or ""
        if value.args and isinstance(value.args[0], ast.Tuple | ast.List) and function:
            for target in targets:
                if isinstance(target, ast.Name):
                    parsers[target.id] = list(value.args[0].elts)
        elif value.args and function.endswith("ArgumentParser") and isinstance(value.args[0], ast.Name | ast.Attribute):
            for target in targets:
                if isinstance(target, ast.Name):
                    parsers[target.id] = [value.args[0]]  # HfArgumentParser(TrainingArguments)
        if index is None:
            for target in targets:
                _bind_object(module, scope, target, value.func)
        if function == "cli" and value.args and isinstance(value.args[0], ast.Name | ast.Attribute):
            for target in targets:
                _bind_object(module, scope, target, value.args[0])  # tyro.cli(ScriptArguments)
        parser = value.func.value if isinstance(value.func, ast.Attribute) else None
        classes = _parser_classes(parser, parsers)
        if classes and value.func.attr.startswith("parse"):
            for target in targets:
                if isinstance(target, ast.Tuple) and index is None:
                    for element, cls in zip(target.elts, classes, strict=False):
                        _bind_object(module, scope, element, cls)
                elif isinstance(index, int) and -len(classes) <= index < len(classes):
                    _bind_object(module, scope, target, classes[index])
    for name in poisoned:
        scope.aliases.pop(name, None)


def _argparse_defaults(module: _Module) -> dict[str, ast.Constant]:
    """The string defaults of the file's argparse options, by destination (``parser.add_argument("--optimizer",
    default="adamw_hf")``: ``{"optimizer": <"adamw_hf">}``), when the file parses its command line; an option given
    twice with different defaults is left out."""
    if "argparse" not in module._cached:
        defaults: dict[str, ast.Constant | None] = {}
        parses = False
        for tree in module.trees:
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                if node.func.attr in ("parse_args", "parse_known_args", "parse_intermixed_args"):
                    parses = True
                if node.func.attr != "add_argument":
                    continue
                keywords = {k.arg: k.value for k in node.keywords if k.arg}
                default = keywords.get("default")
                if not (isinstance(default, ast.Constant) and isinstance(default.value, str)):
                    continue
                names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                dest = keywords.get("dest")
                if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
                    key = dest.value
                else:
                    long = [n for n in names if n.startswith("--")] or names
                    key = long[0].lstrip("-").replace("-", "_") if long else None
                if key:
                    known = defaults.get(key, default)
                    defaults[key] = default if known is not None and known.value == default.value else None
        module._cached["argparse"] = {k: v for k, v in defaults.items() if v is not None} if parses else {}
    return module._cached["argparse"]


def _attributes_set(module: _Module) -> frozenset[str]:
    """Every attribute name the file assigns on anything (``x.name = ...``, ``setattr(x, "name", ...)``)."""
    if "set" not in module._cached:
        names = set()
        for tree in module.trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
                    names.add(node.attr)
                elif isinstance(node, ast.Call) and _is_name(node.func, "setattr") and len(node.args) > 1:
                    if isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                        names.add(node.args[1].value)
        module._cached["set"] = frozenset(names)
    return module._cached["set"]


def _unbound_names(module: _Module) -> set[str]:
    """Names a file reads and never binds anywhere (no assignment, import, definition, parameter or builtin)."""
    import builtins

    read, bound = set(), set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__"}
    for tree in module.trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.alias) and node.name != "*":
                bound.add(node.asname or node.name.split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                bound.update(node.names)
            elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
                bound.add(node.name)
    return read - bound


def _options(node: ast.AST | None) -> list[ast.AST]:
    """The values an expression can come to: both sides of ``a if c else b`` and of ``a or b``, or itself."""
    if isinstance(node, ast.IfExp):
        return [*_options(node.body), *_options(node.orelse)]
    if isinstance(node, ast.BoolOp):
        return [option for value in node.values for option in _options(value)]
    return [node] if node is not None else []


def _dict_items(node: ast.AST | None) -> list[ast.keyword] | None:
    """The string keys of a dict expression as keywords (``{"k": v}``, ``dict(k=v)``), or ``None`` when ``node`` is
    not one; keys that are not written as strings (``{**base}``, ``{name: v}``) are left out."""
    if isinstance(node, ast.Dict):
        return [
            ast.keyword(arg=key.value, value=value)
            for key, value in zip(node.keys, node.values, strict=True)
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value.isidentifier()
        ]
    if isinstance(node, ast.Call) and _is_name(node.func, "dict"):
        return [keyword for keyword in node.keywords if keyword.arg is not None]
    return None


def _key_fix(key: str, fix: str, holder: str) -> str:
    """A keyword's fix (``eval_strategy="no"``) said for the key of a dict that is passed on with ``**``."""
    new = re.match(r"(\w+)=", fix)
    if new and new.group(1) != key:
        return f"{fix}: write the key {new.group(1)!r} in `{holder}` in place of {key!r}"
    return f"{fix} (the key {key!r} in `{holder}`)"


def _trl_config(trainer: type) -> type | None:
    """TRL's config class for one of its trainers: ``SFTConfig`` for ``SFTTrainer``."""
    if not trainer.__name__.endswith("Trainer"):
        return None
    config = _library_object(f"trl.{trainer.__name__[: -len('Trainer')]}Config")
    return config if isinstance(config, type) else None


def _takes_training_arguments(trainer: type) -> bool:
    """Whether a trl trainer's ``args`` may be a plain TrainingArguments (``SFTTrainer``: ``SFTConfig |
    TrainingArguments``), read from its signature's annotation; true when the signature does not say."""
    parameter = inspect.signature(trainer.__init__).parameters.get("args")
    if parameter is None or parameter.annotation is inspect.Parameter.empty:
        return True
    annotation = parameter.annotation
    return (
        re.search(r"\bTrainingArguments\b", annotation if isinstance(annotation, str) else repr(annotation)) is not None
    )


@cache
def _config_fields_read(trainer: type, config: type) -> tuple[str, ...]:
    """The first three of ``config``'s own fields (not TrainingArguments') that the trainer's source reads as
    ``args.<field>``, in the order it reads them."""
    try:
        source = inspect.getsource(trainer)
    except (OSError, TypeError):
        return ()
    own = _class_fields(config) - installed_fields()
    read = dict.fromkeys(m[1] for m in re.finditer(r"\bargs\.(\w+)", source) if m[1] in own)
    return tuple(read)[:3]


def _trl_argument(name: str, root: type, config: type, keyword: str, value: str) -> tuple[str, str]:
    release = _library_release(root)
    fields = _class_fields(config)
    if keyword in fields:
        return (
            f"`{name}(..., {keyword}=...)`: {root.__name__} ({release}) takes no `{keyword}`; it is a field of "
            f"{config.__name__} now",
            f"{config.__name__}(..., {keyword}={value}), passed as args=",
        )
    if TRL_RENAMED.get(keyword) in fields:
        new = TRL_RENAMED[keyword]
        return (
            f"`{name}(..., {keyword}=...)`: {root.__name__} ({release}) takes no `{keyword}`; {config.__name__} "
            f"calls it `{new}`",
            f"{config.__name__}(..., {new}={value}), passed as args=",
        )
    return (
        f"`{name}(..., {keyword}=...)`: neither {root.__name__} nor {config.__name__} ({release}) has `{keyword}`",
        f"delete it (see the {config.__name__} fields of the installed trl for what replaced it)",
    )


def _imports_work(body: list[ast.stmt]) -> bool:
    """Whether a ``try:`` body imports from transformers or trl, all of it there on the installed releases: then its
    ``except ImportError:`` branch (an import for older releases, ``from transformers.deepspeed import ...``) never
    runs."""
    wanted: list[tuple[str, tuple[str, ...]]] = []
    for statement in _statements(body):
        if isinstance(statement, ast.ImportFrom) and not statement.level:
            wanted.append((statement.module or "", tuple(a.name for a in statement.names if a.name != "*")))
        elif isinstance(statement, ast.Import):
            wanted += [(alias.name, ()) for alias in statement.names]
    wanted = [(module, names) for module, names in wanted if module.split(".")[0] in LIBRARIES]
    return bool(wanted) and all(_import_problem(module, names) is None for module, names in wanted)


@cache
def _import_problem(module: str, names: tuple[str, ...]) -> tuple[str, str] | None:
    """(message, fix) when ``from module import names`` fails on the installed libraries, or ``None``."""
    library = module.split(".")[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            imported = importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is None or error.name.split(".")[0] != library:
            return None  # an optional dependency is missing here: not the library's doing
        release = _installed_library(library)
        if release is None:
            return None
        return f"`{module}` does not exist in {library} {release}", "find where its contents went (or delete it)"
    except ImportError:
        return None
    missing = []
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                present = hasattr(imported, name)
            except Exception:  # a lazy attribute that needs an optional dependency: cannot tell here
                present = True
        if present:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                importlib.import_module(f"{module}.{name}")
        except ModuleNotFoundError as error:
            if error.name is not None and error.name.startswith(library):
                missing.append(name)
        except ImportError:
            missing.append(name)
    if not missing:
        return None
    listed = ", ".join(f"`{name}`" for name in missing)
    return (
        f"`from {module} import {', '.join(names)}`: {library} {_installed_library(library)} has no {listed}",
        "delete the import, or import it from where it moved (search the installed package for the name)",
    )


@cache
def _installed_library(library: str) -> str | None:
    with contextlib.suppress(ImportError):
        return importlib.import_module(library).__version__
    return None


def check_source(source: str, path: str = "<string>") -> list[Finding]:
    """The findings in one piece of Python source (expected ones left out)."""
    report = _check_units([_Unit(path, source)], None)
    if report.errors:
        raise MigrateError(report.errors[0])
    return report.findings


def _check_units(units: list[_Unit], path: Path | None = None) -> Report:
    report = Report()
    parsed = []
    for unit in units:
        try:
            unit.tree = ast.parse(unit.source)
        except SyntaxError as error:
            if unit.cell is None:
                report.errors.append(
                    f"{unit.path}:{error.lineno}: cannot parse it as Python ({error.msg}); "
                    "the checker reads code, it does not run it"
                )
                return report
            report.skipped_cells.append(f"{unit.path} cell {unit.cell}: {error.msg} at line {error.lineno}")
            continue
        parsed.append(unit)
    module = _Module(path, [unit.tree for unit in parsed])
    module_scope = _module_scope(module)
    for unit in parsed:
        checker = _Checker(unit, module, unit.source.split("\n"), module_scope)
        checker.visit(unit.tree)
        for finding, expected in checker.found:
            (report.expected if expected else report.findings).append(finding)
    return report


def check_paths(paths: Iterable[str | Path]) -> Report:
    """Check every ``.py`` and ``.ipynb`` file given, or found under a given folder.

    A path that does not exist, or a file that cannot be read or parsed, is reported in ``Report.errors`` and the
    other files are checked all the same.

    Raises:
        MigrateError: no path was given.
    """
    paths = list(paths)
    if not paths:
        raise MigrateError("give at least one Python file, notebook or folder.")
    total = Report()
    for path in _files(paths, total.errors):
        try:
            units = _read(path)
        except MigrateError as error:
            total.errors.append(str(error))
            continue
        report = _check_units(units, path.resolve())
        total.findings += report.findings
        total.expected += report.expected
        total.skipped_cells += report.skipped_cells
        total.errors += report.errors
        total.files.append(str(path))
    return total


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] in ("-h", "--help"):
        print(__doc__.strip().split("\n\n")[0])
        print("usage: python -m helpers.check_old_code PATH [PATH...]   (Python files, notebooks or folders)")
        return 0 if arguments else 2
    report = check_paths(arguments)
    for finding in report.findings:
        print(finding.format())
    for skipped in report.skipped_cells:
        print(f"note: skipped {skipped} (not Python)", file=sys.stderr)
    for error in report.errors:
        print(f"check_old_code: {error}", file=sys.stderr)
    expected = (
        f"; {len(report.expected)} expected (in a try that catches the error, or marked)" if report.expected else ""
    )
    unread = f"; {len(report.errors)} path(s) could not be read (see above)" if report.errors else ""
    print(
        f"{len(report.findings)} finding(s) in {len(report.files)} file(s) for transformers {installed_version()}"
        f"{expected}{unread}."
    )
    return report.exit_status


if __name__ == "__main__":
    sys.exit(main())
