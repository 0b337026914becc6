"""The checker: one visitor made of every kind of check, which dispatches each node to them, and the runs over
source, files and folders.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from .arguments import ArgumentChecks
from .attributes import AttributeChecks
from .callbacks import CallbackChecks
from .findings import CheckOldCodeError, Finding, Report
from .imports import ImportChecks
from .installed import _classes
from .overrides import OverrideChecks
from .resolve import _arguments, _Chain, _chain, _is_trainer, _Local, _Module
from .scopes import _function_scope, _module_scope, _trainer_arguments
from .sources import _files, _read, _Unit
from .syntax import _is_constant, _is_dataclasses_replace, _is_name, _is_super


class _Checker(ImportChecks, ArgumentChecks, OverrideChecks, AttributeChecks, CallbackChecks):
    """Every check, in one walk over a file's syntax tree."""

    # -- functions and scopes -----------------------------------------------------------------------------------
    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        """A function: its scope, and, when the file assigns it onto a Trainer or a callback, its checks as a method."""
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

    # -- attributes: removed TrainingArguments fields, self.tokenizer, removed methods -----------------------------
    def visit_Attribute(self, node: ast.Attribute) -> None:
        """``x.name``: arguments fields, enum members, ``self.tokenizer`` and removed methods in a Trainer."""
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

    # -- calls: TrainingArguments(...), Trainer(...), super() ----------------------------------------------------
    def visit_Call(self, node: ast.Call) -> None:
        """A call: ``super()``, an arguments class, a library function, a Trainer, and a callback's ``kwargs.get``."""
        callee = node.func
        if _is_super(callee.value if isinstance(callee, ast.Attribute) else None):
            self._super_call(node)
        else:
            if isinstance(callee, ast.Attribute) and _is_name(callee.value, "self"):
                self._self_call(node)  # an inherited method, called as super() would
            # a name bound to one arguments class or another (arg_class = Seq2SeqTrainingArguments / TrainingArguments)
            found = (_arguments(self.module, target) for target in self._aliased(callee))
            arguments = next((item for item in found if item is not None), None)
            if arguments is None and _is_dataclasses_replace(callee) and node.args:
                arguments = self._arguments_of(node.args[0])  # dataclasses.replace(args, old_field=...): TypeError
            if arguments is not None:
                self._arguments_call(node, arguments)
            elif isinstance(callee, ast.Attribute) and callee.attr == "parse_dict":
                self._parse_dict(node)
            else:
                self._library_call(node)
                for target in self._aliased(callee):
                    chain = _chain(self.module, target)
                    if chain.subclass_of(_classes()[0]) and not chain.unknown:
                        self._trainer_call(node, ast.unparse(callee), chain)
        self._len_call(node)
        self._setattr_call(node)
        self._callback_tokenizer(node)
        self.generic_visit(node)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        """``kwargs["tokenizer"]`` in a callback."""
        if _is_constant(node.slice, "tokenizer") and isinstance(node.ctx, ast.Load):
            self._callback_key(node, node.value)
        self.generic_visit(node)

    # -- class definitions: Trainer overrides, callback events, arguments fields --------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        """A class: a Trainer's overrides, a callback's events, or an arguments class's fields."""
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


def check_source(source: str, path: str = "<string>") -> list[Finding]:
    """The findings in one piece of Python source (expected ones left out)."""
    report = _check_units([_Unit(path, source)], None)
    if report.errors:
        raise CheckOldCodeError(report.errors[0])
    return report.findings


def _check_units(units: list[_Unit], path: Path | None = None) -> Report:
    """Check the units of one file (a Python file, or a notebook's code cells) together, as one module."""
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
        CheckOldCodeError: no path was given.
    """
    paths = list(paths)
    if not paths:
        raise CheckOldCodeError("give at least one Python file, notebook or folder.")
    total = Report()
    for path in _files(paths, total.errors):
        try:
            units = _read(path)
        except CheckOldCodeError as error:
            total.errors.append(str(error))
            continue
        report = _check_units(units, path.resolve())
        total.findings += report.findings
        total.expected += report.expected
        total.skipped_cells += report.skipped_cells
        total.errors += report.errors
        total.files.append(str(path))
    return total
