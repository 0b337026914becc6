"""Find Trainer code that the installed transformers no longer runs: ``python -m helpers.check_old_code PATH...``.

It reads Python files and notebooks (``.py``, ``.ipynb``, or folders of them) **without running them** and
reports, with file and line, each thing a 4.x tutorial does that the installed release refuses or silently ignores:

- ``TrainingArguments`` arguments that were renamed or removed (from the course's map, ``helpers.old_arguments``, and
  the release ladder, ``docs/ladder/results.json``, which says in which release each one went);
- ``Trainer(tokenizer=...)`` and other arguments the installed ``Trainer`` does not take;
- ``compute_loss``, ``training_step`` and other overrides whose signature the installed ``Trainer`` no longer calls
  correctly (compared with ``inspect.signature`` of the installed method; the ladder says when it changed);
- overrides of ``Trainer`` methods that do not exist (``evaluation_step``), so that nothing ever calls them;
- callback methods named ``on_...`` that are not events of the installed ``TrainerCallback``, with the closest event.

Each finding says how to fix it and which lesson teaches it (lesson numbers and sections come from
``lessons.toml``). The exit status is 1 when something was found, 0 when nothing was, 2 for a path that does not
exist or a file that cannot be read.

A finding on code that deliberately reproduces an error is not counted when it sits inside a ``try`` block that
catches that error (``TypeError``) or on a line (or in a class or function) marked ``# migrate: expected``.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import inspect
import json
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from helpers.old_arguments import LATER_ARGUMENTS, REMOVED, RENAMED, TRAINING_ARGUMENTS_4_8_2, Fate
from helpers.registry import ROOT, lessons

LADDER_RESULTS = ROOT / "docs" / "ladder" / "results.json"
MARKER = "migrate: expected"
SKIPPED_FOLDERS = {".git", "__pycache__", ".ipynb_checkpoints", "runs", "node_modules", "_build"}

# Methods that 4.x tutorials override but that no Trainer release ever had: what to override instead.
NEVER_TRAINER_METHODS = {
    "evaluation_step": "prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None)",
    "validation_step": "prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None)",
    "eval_step": "prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None)",
    "train_step": "training_step(self, model, inputs, num_items_in_batch=None)",
}

# Which lesson teaches each kind of finding: (where to look in lessons.toml, the text to find there).
KIND_LESSONS = {
    "renamed-argument": ("pitfall", "renamed or removed"),
    "removed-argument": ("pitfall", "renamed or removed"),
    "unknown-argument": ("pitfall", "renamed or removed"),
    "trainer-tokenizer": ("pitfall", "processing_class"),
    "trainer-argument": ("goal", "every constructor argument"),
    "compute-loss-signature": ("pitfall", "`compute_loss` override"),
    "training-step-signature": ("pitfall", "`training_step` override"),
    "method-signature": ("title", "other methods to override"),
    "missing-method": ("title", "other methods to override"),
    "not-an-event": ("pitfall", "misspelt event"),
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
    """What :func:`check_paths` found: the findings, and the ones left out on purpose (expected errors)."""

    findings: list[Finding] = field(default_factory=list)
    expected: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    skipped_cells: list[str] = field(default_factory=list)


# ---------------------------------------------------------------------------------------------------------------
# What the installed release offers, and what the ladder knows about earlier ones
# ---------------------------------------------------------------------------------------------------------------
@cache
def installed_version() -> str:
    import transformers

    return transformers.__version__


@cache
def installed_fields() -> frozenset[str]:
    from transformers import TrainingArguments

    return frozenset(field.name for field in dataclasses.fields(TrainingArguments))


@cache
def installed_trainer_init() -> frozenset[str]:
    from transformers import Trainer

    return frozenset(list(inspect.signature(Trainer.__init__).parameters)[1:])


@cache
def installed_methods() -> dict[str, inspect.Signature | None]:
    """Every method of the installed ``Trainer`` (public and private), with its signature where it has one."""
    from transformers import Trainer

    found: dict[str, inspect.Signature | None] = {}
    for name in dir(Trainer):
        if name.startswith("__") or isinstance(inspect.getattr_static(Trainer, name), property):
            continue
        value = getattr(Trainer, name, None)
        if callable(value):
            try:
                found[name] = inspect.signature(value)
            except (TypeError, ValueError):
                found[name] = None
    return found


@cache
def installed_events() -> tuple[str, ...]:
    from transformers import TrainerCallback

    return tuple(name for name in vars(TrainerCallback) if name.startswith("on_"))


@cache
def ladder() -> dict:
    """The ladder's results (``docs/ladder/results.json``), or an empty ladder when the file is not there."""
    if not LADDER_RESULTS.is_file():
        return {"releases": [], "results": {}}
    return json.loads(LADDER_RESULTS.read_text(encoding="utf-8"))


def ladder_history(probe_id: str) -> str:
    """What the ladder's probe ``probe_id`` (a claim that something is accepted) saw happen to it, as
    ``" (the ladder: deprecated from 4.41.2; accepted on 4.57.6, refused on 5.0.0)"``, or ``""``."""
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
    parts = [f"deprecated (it warns) from {warned}"] if warned else []
    if refused:
        parts.append(f"accepted on {last_accepted}, refused on {refused}")
    return f" (the ladder: {'; '.join(parts)})" if parts else ""


def ladder_removal(name: str) -> str:
    """When the ladder saw ``TrainingArguments.name`` go: ``" (gone since 5.15.0; 5.14.1 still had it)"``, or ``""``."""
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
        return f" (gone since {gone_after}; {last_present} still had it)"
    return ""


def ladder_call_change(name: str, fits) -> str:
    """The first ladder release whose Trainer calls ``self.name(...)`` in a way ``fits`` rejects, after one that fit."""
    data = ladder()
    fitted = None
    for version in data["releases"]:
        shapes = data["results"][version]["inventory"].get("trainer_calls", {}).get(name)
        if not shapes:
            continue
        if all(fits(shape) for shape in shapes):
            fitted = version
        elif fitted is not None:
            return f" (the call changed in {version}; {fitted} still called it in a way this override takes)"
    return ""


def lesson_for(kind: str) -> str:
    """The lesson (and section) of ``lessons.toml`` that teaches a kind of finding."""
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
        lines = [("pass  # " + line) if _is_magic(line) else line for line in source.split("\n")]
        units.append(_Unit(str(path), "\n".join(lines), cell=index))
    return units


def _is_magic(line: str) -> bool:
    """An IPython line magic (``%pip install x``) or shell escape (``!ls``), which is not Python; ``!=`` is."""
    stripped = line.lstrip()
    return (stripped.startswith("!") and not stripped.startswith("!=")) or (
        stripped.startswith("%") and stripped[1:2].isalpha()
    )


def _files(paths: Sequence[str | Path]) -> list[Path]:
    found = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise MigrateError(f"{given}: no such file or folder.")
        if path.is_dir():
            for candidate in sorted(path.rglob("*")):
                parts = set(candidate.relative_to(path).parts[:-1])
                hidden = any(part.startswith(".") for part in parts)
                if candidate.suffix in (".py", ".ipynb") and candidate.is_file() and not hidden:
                    if not parts & SKIPPED_FOLDERS:
                        found.append(candidate)
        elif path.suffix in (".py", ".ipynb"):
            found.append(path)
        else:
            raise MigrateError(f"{given}: not a Python file (.py) or a notebook (.ipynb).")
    return found


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


@dataclass
class _Classes:
    """The classes defined in the files, and which of them are Trainers or callbacks (through any base)."""

    bases: dict[str, list[str]] = field(default_factory=dict)
    inits: dict[str, ast.FunctionDef] = field(default_factory=dict)
    from_transformers: set[str] = field(default_factory=set)

    def add(self, tree: ast.Module) -> None:
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "transformers":
                self.from_transformers |= {alias.asname or alias.name for alias in node.names}
            if isinstance(node, ast.ClassDef):
                self.bases[node.name] = [name for base in node.bases if (name := _terminal(base))]
                for item in node.body:
                    if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                        self.inits[node.name] = item

    def is_a(self, name: str, suffix: str, seen: frozenset[str] = frozenset()) -> bool:
        """Whether class ``name`` is a ``...Trainer`` (any library built on it) or a transformers ``...Callback``
        (imported from transformers: a Keras ``Callback`` is not one), directly or through the file's classes."""
        if name.endswith(suffix) and name not in self.bases:
            return suffix == "Trainer" or name == "TrainerCallback" or name in self.from_transformers
        if name in seen:
            return False
        return any(self.is_a(base, suffix, seen | {name}) for base in self.bases.get(name, ()))


def _parameters(function: ast.FunctionDef | ast.AsyncFunctionDef):
    """(positional names after self, keyword-only names, has *args, has **kwargs, required names)."""
    arguments = function.args
    positional = [a.arg for a in [*arguments.posonlyargs, *arguments.args]][1:]
    defaults = len(arguments.defaults)
    required = positional[: len(positional) - defaults] if defaults else list(positional)
    keyword_only = [a.arg for a in arguments.kwonlyargs]
    required += [a.arg for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True) if d is None]
    return positional, keyword_only, arguments.vararg is not None, arguments.kwarg is not None, required


def _bind(function: ast.FunctionDef | ast.AsyncFunctionDef, shape: Sequence) -> str | None:
    """Why a call ``self.name(<n positional>, <keywords>)`` cannot reach the override, or ``None`` if it can."""
    count, keywords = shape
    positional, keyword_only, var_positional, var_keyword, required = _parameters(function)
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
    unfilled = [name for name in required if name not in filled]
    if unfilled:
        return f"it requires {', '.join(f'`{name}`' for name in unfilled)}, which this call does not pass"
    return None


def _call_text(name: str, shape: Sequence, signature: inspect.Signature | None) -> str:
    """``self.training_step(model, inputs, num_items_in_batch)`` for a call shape, named from the signature."""
    count, keywords = shape
    names = [p.name for p in list(signature.parameters.values())[1:]] if signature is not None else []
    positional = [names[i] if i < len(names) else f"arg{i + 1}" for i in range(count)]
    return f"self.{name}({', '.join([*positional, *(f'{k}=...' for k in keywords)])})"


def _trainer_calls_in(modules) -> dict[str, list]:
    """How the Trainer's own code calls its methods: ``{name: [[positional count, [keywords]], ...]}``.

    The same reading as ``tools/ladder/probes.py`` makes of each release on the ladder."""
    shapes: dict[str, list] = {}
    for module in sorted(modules, key=lambda item: item.__name__):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "self"):
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                continue
            shape = [len(node.args), sorted(k.arg for k in node.keywords)]
            known = shapes.setdefault(node.func.attr, [])
            if shape not in known:
                known.append(shape)
    return {name: sorted(found) for name, found in shapes.items()}


@cache
def installed_calls() -> dict[str, list]:
    """How the installed Trainer calls each of its methods (see :func:`_trainer_calls_in`)."""
    from transformers import Trainer

    modules = set()
    for name in dir(Trainer):
        value = getattr(Trainer, name, None)
        module = getattr(value, "__module__", None) or ""
        if callable(value) and module.startswith("transformers"):
            modules.add(sys.modules[module])
    calls = _trainer_calls_in(modules)
    return {name: calls[name] for name in calls if name in installed_methods()}


def _plain(signature: inspect.Signature) -> str:
    parts = []
    for parameter in signature.parameters.values():
        text = parameter.name
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            text = "*" + text
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            text = "**" + text
        elif parameter.default is not inspect.Parameter.empty:
            text += f"={parameter.default!r}" if isinstance(parameter.default, bool | int | str | None) else "=..."
        parts.append(text)
    return f"({', '.join(parts)})"


def _argument_finding(name: str, value: str) -> tuple[str, str, str]:
    """(kind, message, fix) for a TrainingArguments keyword the installed release does not have."""
    fields = installed_fields()
    release = installed_version()
    fate: Fate | None = {**TRAINING_ARGUMENTS_4_8_2, **LATER_ARGUMENTS}.get(name)
    when = ladder_history(f"argument_{name}") or ladder_removal(name)
    if fate is not None and fate.status == RENAMED and fate.new_name in fields:
        return (
            "renamed-argument",
            f"TrainingArguments has no `{name}` on {release}: it was renamed `{fate.new_name}`{when}",
            f"{fate.new_name}={value}" + (f" ({fate.note})" if fate.note else ""),
        )
    if fate is not None and fate.status == REMOVED:
        note = "" if fate.note.startswith("use ") else f" ({fate.note})"
        if fate.new_name and fate.new_value is not None:
            fix = (
                f"delete it: {value} was the default"
                if value == "False"
                else f"{fate.new_name}={fate.new_value!r} in place of {name}={value}{note}"
            )
        elif fate.new_name:
            fix = f"{fate.new_name}={value}{note}"
        else:
            fix = f"delete it: {fate.note}"
        return "removed-argument", f"TrainingArguments has no `{name}` on {release}: it was removed{when}", fix
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


class _Checker(ast.NodeVisitor):
    def __init__(self, unit: _Unit, classes: _Classes, lines: list[str]):
        self.unit, self.classes, self.lines = unit, classes, lines
        self.found: list[tuple[Finding, bool]] = []
        self.try_stack: list[set[str]] = []
        self.marked_stack: list[bool] = []

    # -- bookkeeping ----------------------------------------------------------------------------------------------
    def _marked(self, line: int) -> bool:
        return 0 < line <= len(self.lines) and MARKER in self.lines[line - 1]

    def _add(self, node: ast.AST, kind: str, message: str, fix: str, catches: str = "TypeError") -> None:
        line = getattr(node, "lineno", 1)
        finding = Finding(self.unit.path, line, kind, message, fix, lesson_for(kind), self.unit.cell)
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
        for part in (*node.handlers, *node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try

    # -- calls: TrainingArguments(...) and Trainer(...) ----------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        name = _terminal(node.func)
        if name and name.endswith("TrainingArguments") and (name not in self.classes.bases):
            for keyword in node.keywords:
                if keyword.arg and keyword.arg not in installed_fields():
                    value = ast.get_source_segment(self.unit.source, keyword.value) or "..."
                    kind, message, fix = _argument_finding(keyword.arg, value)
                    self._add(keyword.value, kind, message, fix)
        elif name and self.classes.is_a(name, "Trainer"):
            self._trainer_call(node, name)
        self.generic_visit(node)

    def _trainer_call(self, node: ast.Call, name: str) -> None:
        declared: set[str] = set()
        current = name
        while current in self.classes.bases:  # keywords a subclass's own __init__ declares are its business
            init = self.classes.inits.get(current)
            if init is not None:
                positional, keyword_only, _, _, _ = _parameters(init)
                declared |= set(positional) | set(keyword_only)
            parents = [base for base in self.classes.bases[current] if self.classes.is_a(base, "Trainer")]
            current = parents[0] if parents else ""
        accepted = installed_trainer_init()
        stock = current in ("Trainer", "Seq2SeqTrainer") or current in self.classes.from_transformers
        for keyword in node.keywords:
            if not keyword.arg or keyword.arg in accepted or keyword.arg in declared:
                continue
            if not stock and keyword.arg != "tokenizer":
                continue  # a Trainer subclass from another module: its __init__ may take more than the Trainer's
            value = ast.get_source_segment(self.unit.source, keyword.value) or "..."
            if keyword.arg == "tokenizer" and "processing_class" in accepted:
                self._add(
                    keyword.value,
                    "trainer-tokenizer",
                    f"`{name}(tokenizer=...)`: the installed Trainer ({installed_version()}) has no `tokenizer` "
                    f"argument{ladder_history('tokenizer_argument')}",
                    f"processing_class={value}",
                )
            else:
                close = difflib.get_close_matches(keyword.arg, sorted(accepted), n=1, cutoff=0.6)
                self._add(
                    keyword.value,
                    "trainer-argument",
                    f"`{name}(..., {keyword.arg}=...)`: the installed Trainer ({installed_version()}) takes no "
                    f"`{keyword.arg}`",
                    f"did you mean `{close[0]}`?" if close else "move it to TrainingArguments or delete it",
                )

    # -- class definitions: Trainer overrides and callback events ------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        self.marked_stack.append(self._marked(node.lineno))
        if self.classes.is_a(node.name, "Trainer"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    self._override(node, item)
        elif self.classes.is_a(node.name, "Callback"):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    self._event(node, item)
        self.generic_visit(node)
        self.marked_stack.pop()

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

    def _override(self, owner: ast.ClassDef, function: ast.FunctionDef) -> None:
        name = function.name
        if name.startswith("__"):
            return
        methods = installed_methods()
        if name not in methods:
            self._missing_method(owner, function)
            return
        signature = methods[name]
        failures = [(shape, why) for shape in installed_calls().get(name, []) if (why := _bind(function, shape))]
        if failures:
            shape, why = failures[0]
            problem = f"the installed Trainer calls `{_call_text(name, shape, signature)}`, and {why}"
        else:
            moved = self._moved(function, signature)
            if not moved:
                return
            problem = f"{moved}: the Trainer passes its arguments by position, so they land in the wrong parameters"
        change = ladder_call_change(name, lambda shape: _bind(function, shape) is None) if failures else ""
        kind = {"compute_loss": "compute-loss-signature", "training_step": "training-step-signature"}.get(
            name, "method-signature"
        )
        wanted = _plain(signature) if signature is not None else "(...)"
        self._add(
            function,
            kind,
            f"`{owner.name}.{name}` no longer fits transformers {installed_version()}: {problem}{change}",
            f"def {name}{wanted}: ..."
            + (" (and pass every argument on to super())" if name in ("training_step", "compute_loss") else ""),
        )

    @staticmethod
    def _moved(function: ast.FunctionDef, signature: inspect.Signature | None) -> str:
        """``"`model` is parameter 2 here but 3 in the Trainer"`` when a name sits at another position."""
        if signature is None:
            return ""
        installed = [
            p.name
            for p in list(signature.parameters.values())[1:]
            if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        ]
        positional = _parameters(function)[0]
        for index, name in enumerate(positional[: len(installed)]):
            if name != installed[index] and name in installed:
                return f"`{name}` is parameter {index + 1} here but {installed.index(name) + 1} in the Trainer"
        return ""

    def _missing_method(self, owner: ast.ClassDef, function: ast.FunctionDef) -> None:
        name = function.name
        release = installed_version()
        if name in NEVER_TRAINER_METHODS:
            self._add(
                function,
                "missing-method",
                f"`{owner.name}.{name}` overrides nothing: no Trainer release has `{name}`, so evaluation and "
                "training never call it",
                f"override {NEVER_TRAINER_METHODS[name]}",
            )
            return
        removed = ladder_method_removal(name)
        if removed and "never saw" not in removed:
            self._add(
                function,
                "missing-method",
                f"`{owner.name}.{name}` overrides `Trainer.{name}`, which {release} no longer has{removed}: "
                "nothing calls it",
                "find the method that replaced it in the installed trainer.py, and override that",
            )
            return
        close = difflib.get_close_matches(name, sorted(installed_methods()), n=1, cutoff=0.85)
        if close and close[0] != name:
            self._add(
                function,
                "missing-method",
                f"`{owner.name}.{name}` is not a Trainer method on {release} (nothing calls it); `{close[0]}` is",
                f"rename it `{close[0]}` if it was meant to replace that method",
            )


def check_source(source: str, path: str = "<string>") -> list[Finding]:
    """The findings in one piece of Python source (expected ones left out)."""
    report = _check_units([_Unit(path, source)])
    return report.findings


def _check_units(units: list[_Unit]) -> Report:
    report = Report()
    classes = _Classes()
    parsed = []
    for unit in units:
        try:
            unit.tree = ast.parse(unit.source)
        except SyntaxError as error:
            if unit.cell is None:
                raise MigrateError(
                    f"{unit.path}:{error.lineno}: cannot parse it as Python ({error.msg}); "
                    "the checker reads code, it does not run it"
                ) from error
            report.skipped_cells.append(f"{unit.path} cell {unit.cell}: {error.msg} at line {error.lineno}")
            continue
        classes.add(unit.tree)
        parsed.append(unit)
    for unit in parsed:
        checker = _Checker(unit, classes, unit.source.split("\n"))
        checker.visit(unit.tree)
        for finding, expected in checker.found:
            (report.expected if expected else report.findings).append(finding)
    return report


def check_paths(paths: Iterable[str | Path]) -> Report:
    """Check every ``.py`` and ``.ipynb`` file given, or found under a given folder.

    Raises:
        MigrateError: a path does not exist, or a file cannot be read or parsed.
    """
    paths = list(paths)
    if not paths:
        raise MigrateError("give at least one Python file, notebook or folder.")
    total = Report()
    for path in _files(paths):
        report = _check_units(_read(path))
        total.findings += report.findings
        total.expected += report.expected
        total.skipped_cells += report.skipped_cells
        total.files.append(str(path))
    return total


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if not arguments or arguments[0] in ("-h", "--help"):
        print(__doc__.strip().split("\n\n")[0])
        print("usage: python -m helpers.check_old_code PATH [PATH...]   (Python files, notebooks or folders)")
        return 0 if arguments else 2
    try:
        report = check_paths(arguments)
    except MigrateError as error:
        print(f"check_old_code: {error}", file=sys.stderr)
        return 2
    for finding in report.findings:
        print(finding.format())
    for skipped in report.skipped_cells:
        print(f"note: skipped {skipped} (not Python)", file=sys.stderr)
    expected = (
        f"; {len(report.expected)} expected (in a try that catches the error, or marked)" if report.expected else ""
    )
    print(
        f"{len(report.findings)} finding(s) in {len(report.files)} file(s) for transformers {installed_version()}"
        f"{expected}."
    )
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
