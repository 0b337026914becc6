"""Findings on the values of enum-valued options (``optim="adamw_hf"``, ``OptimizerNames.ADAMW_HF``) that a ladder
release took and the installed one refuses (``removed-value``).
"""

from __future__ import annotations

import ast
from enum import Enum

from helpers.old_arguments import OLD_VALUES
from helpers.release_facts import CHOICE_FIELDS

from .file_facts import _argparse_defaults
from .installed import installed_choices, installed_version
from .ladder_results import ladder_enum_value, ladder_value_removal
from .resolve import _chain, _resolve
from .syntax import _declared_default, _declares, _options
from .visitor import _Visitor


def _enum_field(enum: str) -> str | None:
    """The TrainingArguments field whose values an enum lists (``OptimizerNames``: ``optim``)."""
    return next((name for name, enums in CHOICE_FIELDS.items() if enum in enums), None)


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
