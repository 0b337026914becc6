"""Findings on TrainingArguments: renamed, removed and unknown arguments, fields a subclass still declares, and
attributes read from an arguments object.
"""

from __future__ import annotations

import ast
import difflib

from check_old_code.old_arguments import LATER_ARGUMENTS, REMOVED, RENAMED, TRAINING_ARGUMENTS_4_8_2, Fate

from .installed import (
    _class_fields,
    _field_default,
    _library_release,
    installed_choices,
    installed_fields,
    installed_version,
)
from .ladder_results import _ladder_old_fields, ladder_history, ladder_removal
from .library_calls import _instance_attributes
from .resolve import _Arguments, _arguments
from .scopes import _is_self_args, _parser_classes
from .syntax import _declared_default, _dict_items, _field_value, _is_name, _statements
from .trl_history import TRL_FIELD_RELEASE, TRL_OLD_RELEASE, TRL_REMOVED_ADVICE, TRL_REMOVED_FIELDS, TRL_RENAMED
from .values import ValueChecks
from .visitor import _from_dict


def _old_fate(name: str) -> Fate | None:
    """What became of a 4.x TrainingArguments name (the course's map, ``check_old_code.old_arguments``), or ``None``."""
    return {**TRAINING_ARGUMENTS_4_8_2, **LATER_ARGUMENTS}.get(name)


def _is_old_argument(name: str) -> bool:
    """A TrainingArguments name that 4.x had and the installed release does not."""
    fate = _old_fate(name)
    return name not in installed_fields() and (
        (fate is not None and fate.status in (RENAMED, REMOVED)) or name in _ladder_old_fields()
    )


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


def _trl_field_finding(config: type, name: str, value: str, found: tuple[str, str, str]) -> tuple[str, str, str]:
    """(kind, message, fix) for a keyword a trl config class does not take: a field trl renamed or removed is said
    so (not called a typo); a 4.x TrainingArguments name keeps the finding ``found`` of :func:`_argument_finding`."""
    release = _library_release(config)
    if _is_old_argument(name):
        return found
    if TRL_RENAMED.get(name) in _class_fields(config):
        new = TRL_RENAMED[name]
        return (
            "renamed-argument",
            f"{config.__name__} has no `{name}` on {release}: trl renamed it `{new}`",
            f"{new}={value}",
        )
    old = next((c.__name__ for c in config.__mro__ if name in TRL_REMOVED_FIELDS.get(c.__name__, ())), None)
    if old is not None:
        advice = TRL_REMOVED_ADVICE.get((old, name))
        return (
            "removed-argument",
            f"{config.__name__} has no `{name}` on {release}: it was a field of trl "
            f"{TRL_FIELD_RELEASE.get(old, TRL_OLD_RELEASE)}'s {old}, removed from trl since",
            f"delete it: {advice}"
            if advice
            else f"delete it; see the fields of the installed {config.__name__} (dataclasses.fields) for what "
            "replaced it",
        )
    kind, message, fix = found
    if kind == "unknown-argument":
        message = message.replace(f"on {installed_version()}", f"on {release}", 1)
        fix = fix.replace("dataclasses.fields(TrainingArguments)", f"dataclasses.fields({config.__name__})")
    return kind, message, fix


class ArgumentChecks(ValueChecks):
    """TrainingArguments(...) keywords, declared fields and attributes the installed release lacks."""

    def _arguments_call(self, node: ast.Call, arguments: _Arguments) -> None:
        """``TrainingArguments(...)`` (or a subclass, or a trl config): keywords the class no longer has, and
        removed values."""
        for keyword, holder in self._keywords(node):
            if keyword.arg in arguments.fields:
                self._choice(keyword.arg, keyword.value, arguments.name)
                self._changed_keyword(keyword.arg, keyword.value, arguments.name)
                continue
            shared = holder is not None and holder.startswith("self.")  # filled by methods that may not all run
            if (not arguments.closed or shared) and not _is_old_argument(keyword.arg):
                continue  # a subclass from elsewhere may declare it, or the key is for another call
            if id(keyword.value) in self.reported_keys:
                continue  # the same dict given to a second call
            self.reported_keys.add(id(keyword.value))
            value = ast.get_source_segment(self.unit.source, keyword.value) or "..."
            kind, message, fix = _argument_finding(keyword.arg, value, arguments.fields)
            if arguments.root.__module__.split(".")[0] == "trl":
                kind, message, fix = _trl_field_finding(arguments.root, keyword.arg, value, (kind, message, fix))
            message = message.replace("TrainingArguments has", f"{arguments.name} has", 1)
            if holder is not None:
                message, fix = _from_dict(message, fix, keyword.arg, holder, arguments.name)
            self._add(keyword.value, kind, message, fix)

    def _named_parser_classes(self, parser: ast.AST, call: ast.Call) -> list[ast.AST]:
        """The dataclasses of ``parser`` in ``parser.parse_dict(...)``: the call ``HfArgumentParser((A, B))`` itself,
        or the last name bound to one before the call in the enclosing function (or the module)."""
        if not isinstance(parser, ast.Name):
            return _parser_classes(parser, {})
        function = self.function_stack[-1] if self.function_stack else None
        found: list[ast.AST] = []
        for statement in _statements(function.body if function is not None else self.unit.tree.body):
            if getattr(statement, "lineno", 0) >= call.lineno:
                break
            if isinstance(statement, ast.Assign) and any(_is_name(t, parser.id) for t in statement.targets):
                found = _parser_classes(statement.value, {})
        return found

    def _parser_fields(self, classes: list[ast.AST]) -> tuple[set[str], bool, str | None]:
        """The keys a parser's dataclasses take, whether all of them are known, and the arguments class's name."""
        fields: set[str] = set()
        closed, name = True, None
        for cls in classes:
            arguments = _arguments(self.module, cls)
            if arguments is not None:
                fields |= arguments.fields
                closed, name = closed and arguments.closed, name or arguments.name
            elif isinstance(cls, ast.Name) and cls.id in self.module.classes:
                body = self.module.classes[cls.id].body
                fields |= {i.target.id for i in body if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name)}
            else:
                closed = False  # a dataclass this file does not show may take any key
        return fields, closed, name

    def _parse_dict(self, node: ast.Call) -> None:
        """``parser.parse_dict(settings, allow_extra_keys=True)``: each key the file writes into the dict is a keyword
        of the parser's dataclasses. A key the installed TrainingArguments no longer has is refused (ValueError), or
        with ``allow_extra_keys=True`` dropped without a word: the setting is lost and nothing says so."""
        fields, closed, name = self._parser_fields(self._named_parser_classes(node.func.value, node))
        source = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "args"), None)
        if name is None or source is None:
            return
        extra = next((k.value for k in node.keywords if k.arg == "allow_extra_keys"), None)
        extra = node.args[1] if extra is None and len(node.args) > 1 else extra
        dropped = isinstance(extra, ast.Constant) and extra.value is True
        holder = ast.unparse(source)
        for keyword in _dict_items(source) or self._dict_keywords(source, node, written=True):
            if keyword.arg in fields or ((dropped or not closed) and not _is_old_argument(keyword.arg)):
                continue  # with allow_extra_keys=True, a key no release ever had was dropped on 4.x too
            if id(keyword.value) in self.reported_keys:
                continue
            self.reported_keys.add(id(keyword.value))
            value = ast.get_source_segment(self.unit.source, keyword.value) or "..."
            kind, message, fix = _argument_finding(keyword.arg, value, frozenset(fields))
            message, fix = _from_dict(
                message.replace("TrainingArguments has", f"{name} has", 1),
                fix,
                keyword.arg,
                holder,
                f"{ast.unparse(node.func)}()",
            )
            if dropped:
                message += ": `parse_dict(..., allow_extra_keys=True)` drops the key silently, so the setting is lost"
                self._add(keyword.value, kind, message, fix, catches="parse_dict")
            else:
                self._add(
                    keyword.value, kind, message + ": `parse_dict` refuses it (ValueError)", fix, catches="ValueError"
                )

    def _setattr_call(self, node: ast.Call) -> None:
        """``setattr(args, "evaluation_strategy", "no")``: judged as ``args.evaluation_strategy = "no"`` is."""
        if not (_is_name(node.func, "setattr") and len(node.args) == 3):
            return
        target, name = node.args[0], node.args[1]
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return
        arguments = self._arguments_of(target)
        if arguments is not None:
            stored = ast.copy_location(ast.Attribute(value=target, attr=name.value, ctx=ast.Store()), node)
            self._argument_attribute(stored, arguments)

    def _argument_attribute(self, node: ast.Attribute, arguments: _Arguments) -> None:
        """``training_args.overwrite_output_dir``: a field read or set on an arguments object that no longer has it."""
        name = node.attr
        if name in arguments.fields or hasattr(arguments.root, name) or not _is_old_argument(name):
            return
        if _is_self_args(node.value) and self._foreign_args():
            return  # self.args of a class from elsewhere that declares fields no release had: it may declare this
        if name in _instance_attributes(arguments.root):
            return  # no longer a field, but the installed class still sets it on the instance (``_n_gpu``)
        fate = _old_fate(name)
        owner = ast.unparse(node.value)
        verb = "read" if isinstance(node.ctx, ast.Load) else "set"
        if name in self.module.declared_argument_fields():
            fix = (
                f"`{owner}` is a class without `{name}`: use the file's own arguments class, which declares it (the "
                f"Trainer itself reads only `{fate.new_name if fate and fate.new_name else name}`)"
            )
        elif fate is not None and fate.status == RENAMED:
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
            if name in self.module.attributes_used and fate is not None and fate.new_name:
                fix = (
                    f"keep `{name}` only for this file's own reads of it (the Trainer no longer reads it), and hand "
                    f"its value on: set `{fate.new_name}` from it in __post_init__ ({fate.note})"
                )
            self._add(
                item,
                "removed-field",
                f"`{node.name}` declares `{name}`, which {installed_version()}'s TrainingArguments no longer has"
                f"{ladder_removal(name)}: the field is accepted, but the Trainer never reads it",
                fix,
            )
