"""Small readings of Python syntax trees that every check shares: names, ``super()``, class bodies, dataclass
fields, the statements of a block and the values an expression can come to.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache

from helpers.release_facts import call_shape


def _terminal(node: ast.AST) -> str | None:
    """``Trainer`` for ``Trainer``, ``transformers.Trainer`` or ``Trainer[...]``."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return _terminal(node.value)
    return None


def _is_name(node: ast.AST, name: str) -> bool:
    """Whether ``node`` is the name ``name``."""
    return isinstance(node, ast.Name) and node.id == name


def _is_super(node: ast.AST | None) -> bool:
    """Whether ``node`` is a ``super()`` call."""
    return isinstance(node, ast.Call) and _is_name(node.func, "super")


def _is_other_class(node: ast.AST) -> bool:
    """``Trainer`` in ``Trainer.training_step(self, ...)``: a name, not ``self``."""
    return isinstance(node, ast.Name) and node.id != "self"


def _is_constant(node: ast.AST, value: str) -> bool:
    """Whether ``node`` is the constant ``value``."""
    return isinstance(node, ast.Constant) and node.value == value


def _unpacks(node: ast.Call) -> bool:
    """Whether a call unpacks ``*args`` or ``**kwargs`` (it has no shape: :func:`call_shape`)."""
    return call_shape(node) is None


def _dotted_node(parts: list[str]) -> ast.AST:
    """The expression ``a.b.c`` for ``["a", "b", "c"]``."""
    node: ast.AST = ast.Name(parts[0])
    for part in parts[1:]:
        node = ast.Attribute(node, part)
    return node


def _method(node: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    """The method ``name`` a class body defines, or ``None``."""
    for item in node.body:
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name == name:
            return item
    return None


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


def _assigns_self(node: ast.ClassDef, name: str) -> bool:
    """Whether a class sets ``self.name = ...`` somewhere."""
    return name in _class_facts(node)[0]


def _defines(node: ast.ClassDef, name: str) -> bool:
    """Whether a class defines ``name`` (a method, a class attribute, or ``self.name = ...``)."""
    assigned, defined = _class_facts(node)
    return name in assigned or name in defined


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


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt | ast.excepthandler]:
    """The statements of a body and of its blocks, not of the functions and classes it defines."""
    for statement in body:
        yield statement
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody", "handlers"):
            inner = getattr(statement, name, None)
            if isinstance(inner, list):
                yield from _statements([s for s in inner if isinstance(s, ast.stmt | ast.excepthandler)])


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
