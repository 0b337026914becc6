"""Small readings of Python syntax trees that every check shares: names, ``super()``, class bodies, dataclass
fields, the statements of a block and the values an expression can come to.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache

from check_old_code.release_facts import call_shape


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


def _reads_kwargs_tokenizer(node: ast.AST) -> bool:
    """``kwargs.get("tokenizer")``, ``kwargs.pop("tokenizer")`` or ``kwargs["tokenizer"]``: in a callback on 5.x the
    key is never there (the Trainer passes ``processing_class``), so the value is None or a KeyError."""
    if isinstance(node, ast.Subscript):
        return _is_constant(node.slice, "tokenizer")
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("get", "pop")
        and bool(node.args)
        and _is_constant(node.args[0], "tokenizer")
    )


def _is_dataclasses_replace(node: ast.AST) -> bool:
    """``dataclasses.replace`` (or ``replace`` imported from it): it builds a copy through the class's __init__, so a
    keyword the class no longer has is a TypeError."""
    return (isinstance(node, ast.Name) and node.id == "replace") or (
        isinstance(node, ast.Attribute) and node.attr == "replace" and _is_name(node.value, "dataclasses")
    )


def _container(node: ast.Subscript | ast.Call) -> ast.AST:
    """What a read takes its key from: ``kwargs`` in ``kwargs["tokenizer"]`` and in ``kwargs.get("tokenizer")``."""
    return node.value if isinstance(node, ast.Subscript) else node.func.value


def _processing_class_read(node: ast.Subscript | ast.Call) -> str:
    """The same read as ``node`` (``kwargs.get("tokenizer")``, ``kwargs["tokenizer"]``, ``kwargs.pop("tokenizer",
    None)``) of the key the installed Trainer passes: ``processing_class``."""
    if isinstance(node, ast.Subscript):
        return f'{ast.unparse(node.value)}["processing_class"]'
    rest = "".join(f", {ast.unparse(argument)}" for argument in node.args[1:])
    return f'{ast.unparse(node.func)}("processing_class"{rest})'


def _exclusive(scope: ast.AST, first: ast.AST, second: ast.AST) -> bool:
    """Whether two nodes sit on the two branches of one ``if`` (``d["k"] = v`` on the branch that passes ``d`` to
    RewardConfig, and ``TrainingArguments(**d)`` on the other): then what the first sets never reaches the second."""
    for node in ast.walk(scope):
        if isinstance(node, ast.If) and node.orelse:
            body = {id(n) for statement in node.body for n in ast.walk(statement)}
            orelse = {id(n) for statement in node.orelse for n in ast.walk(statement)}
            if (id(first) in body and id(second) in orelse) or (id(first) in orelse and id(second) in body):
                return True
    return False


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
