"""Findings on values: those of enum-valued options (``optim="adamw_hf"``, ``OptimizerNames.ADAMW_HF``) that a
ladder release took and the installed one refuses (``removed-value``), and values whose meaning changed while the
name stayed (``changed-value``): ``report_to=None``, ``args.local_rank == 0``, ``len(args.fsdp)``.
"""

from __future__ import annotations

import ast
from enum import Enum

from check_old_code.old_arguments import OLD_VALUES
from check_old_code.release_facts import CHOICE_FIELDS

from .file_facts import _argparse_defaults
from .installed import (
    _field_default,
    installed_choices,
    installed_fields,
    installed_fields_set,
    installed_refusal,
    installed_value,
    installed_version,
)
from .ladder_results import ladder_enum_value, ladder_value_removal, old_default, old_releases_setting
from .resolve import _chain, _Module, _resolve
from .syntax import _declared_default, _declares, _is_name, _options
from .visitor import _Visitor


def _enum_field(enum: str) -> str | None:
    """The TrainingArguments field whose values an enum lists (``OptimizerNames``: ``optim``)."""
    return next((name for name, enums in CHOICE_FIELDS.items() if enum in enums), None)


def _is_none(node: ast.AST) -> bool:
    """Whether ``node`` is the constant ``None``."""
    return isinstance(node, ast.Constant) and node.value is None


def _launcher_read_beside(module: _Module) -> frozenset[int]:
    """The comparisons joined by ``and``/``or`` to a test that reads ``LOCAL_RANK`` from the environment itself
    (``args.local_rank <= 0 and int(os.environ.get("LOCAL_RANK", 0)) <= 0``): the whole test still sees the
    launcher on 5.x, so the comparison of the field alone is not reported."""
    if "launcher" not in module._cached:
        found: set[int] = set()
        for tree in module.trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.BoolOp) and any(
                    isinstance(part, ast.Constant) and part.value == "LOCAL_RANK" for part in ast.walk(node)
                ):
                    found.update(id(part) for part in ast.walk(node) if isinstance(part, ast.Compare))
        module._cached["launcher"] = frozenset(found)
    return module._cached["launcher"]


class ValueChecks(_Visitor):
    """Removed values of enum-valued TrainingArguments fields."""

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

    def _literals(self, node: ast.AST) -> list[tuple[str, ast.AST, bool]]:
        """:meth:`_literal` for each value an expression can come to: both branches of ``a if c else b`` and
        each operand of ``a or b``."""
        return [found for option in _options(node) if (found := self._literal(option)) is not None]

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
        """Report ``name=value`` (written at ``where``), which the installed TrainingArguments refuses."""
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

    # -- values whose meaning changed ------------------------------------------------------------------------------
    def _changed_keyword(self, name: str, node: ast.AST, owner: str) -> None:
        """``report_to=None`` (also as one branch of ``a if c else None``): the old default, which 4.x read as every
        installed integration, and which the installed release refuses when the Trainer is built."""
        for option in _options(node):
            if not (isinstance(option, ast.Constant) and option.value is None):
                continue
            was = old_default(name)
            refused = installed_refusal(name, None)
            if was is None or was[0] != "None" or refused is None:
                continue
            self._add(
                option,
                "changed-value",
                f"`{name}=None` in {owner}: None was the default (transformers {was[1]}'s source), so 4.x took it; "
                f"{installed_version()} refuses it when the Trainer is built ({refused})",
                f'{name}="none" to report to no integration, or name them: {name}=["tensorboard"]',
                catches="ValueError",
            )

    def visit_Compare(self, node: ast.Compare) -> None:
        """``args.local_rank == 0`` (or ``!= -1``, ``in [-1, 0]``, ``> -1``...): a field that 4.x's
        TrainingArguments set itself from the launcher (``LOCAL_RANK``) and the installed one leaves as given."""
        sides = [node.left, *node.comparators]
        for index, side in enumerate(sides):
            if not (isinstance(side, ast.Attribute) and isinstance(side.ctx, ast.Load)):
                continue
            others = [other for position, other in enumerate(sides) if position != index]
            if any(_is_none(other) for other in others) and self._arguments_of(side.value) is not None:
                self._default_no_longer_none(side)
            if not any(_int_constants(other) for other in others):
                continue
            if self._arguments_of(side.value) is None or id(node) in _launcher_read_beside(self.module):
                continue
            self._unset_field(side)
        self.generic_visit(node)

    def _default_no_longer_none(self, node: ast.Attribute) -> None:
        """``self.report_to is None`` on an arguments object: None was the field's default in 4.x (its source, read
        from the wheel) and the installed default is not, so the test is false unless the script sets None."""
        name = node.attr
        was = old_default(name)
        if was is None or was[0] != "None" or _field_default(name) is None:
            return
        self._add(
            node,
            "changed-value",
            f"`{ast.unparse(node)}` tested for None: None was its default (transformers {was[1]}'s source), "
            f"{installed_version()}'s default is {_field_default(name)!r}, so the test is false unless the script "
            "sets it and what the branch does for the default no longer happens",
            f"test for the installed default as well (`{ast.unparse(node)} in (None, {_field_default(name)!r})`), "
            f"or set `{name}` where the arguments are built",
            catches="changed-value",
        )

    def _unset_field(self, node: ast.Attribute) -> None:
        """Report a comparison of ``node`` (``args.local_rank``) when 4.x set the field itself and the installed
        release does not."""
        name = node.attr
        setting = old_releases_setting(name)
        if name not in installed_fields() or not setting or name in installed_fields_set():
            return
        value = installed_value(name)
        self._add(
            node,
            "changed-value",
            f"`{ast.unparse(node)}` compared with a number: 4.x's TrainingArguments set `{name}` itself (the source "
            f"of {setting[0]} to {setting[-1]} assigns it: from the launcher's LOCAL_RANK, later from the process "
            f"state, 0 in a one-process run); {installed_version()}'s never does, so it stays {value!r} unless the "
            f"script is given --{name}: the test now decides otherwise (a save guarded by `== 0` never happens)",
            f"use `{ast.unparse(node.value)}.process_index == 0` (or `.local_process_index`, `.world_size > 1`), or "
            "trainer.is_world_process_zero()",
            catches="changed-value",
        )

    def _len_call(self, node: ast.Call) -> None:
        """``len(args.fsdp)``: a field whose installed default is None where 4.x's was not (a string or list), so
        ``len()`` raises TypeError when the script does not give it."""
        if not (_is_name(node.func, "len") and len(node.args) == 1 and isinstance(node.args[0], ast.Attribute)):
            return
        field_node = node.args[0]
        if self._arguments_of(field_node.value) is None:
            return
        name = field_node.attr
        was = old_default(name)
        if name not in installed_fields() or installed_value(name) is not None or was is None or was[0] == "None":
            return
        self._add(
            node,
            "changed-value",
            f"`{ast.unparse(node)}`: `{name}` defaults to None on {installed_version()} (transformers {was[1]}: "
            f"{was[0]}), so len() raises TypeError when the option is not given",
            f"test it for truth instead: `if {ast.unparse(field_node)}:`",
        )


def _int_constants(node: ast.AST) -> bool:
    """Whether ``node`` is an integer, a negated one, or a list, tuple or set of them (``[-1, 0]``)."""
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return bool(node.elts) and all(_int_constants(item) for item in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int
