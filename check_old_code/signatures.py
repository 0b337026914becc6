"""Signatures, as the ladder writes them: ``name``, ``name=`` (a default), ``^name`` (keyword-only), ``*a``,
``**k``; whether a call shape reaches a function, and how to write a signature that takes every call.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Sequence


def _names(described: Sequence[str]) -> list[str]:
    """The parameter names of a described signature, ``*args`` and ``**kwargs`` left out."""
    return [p.strip("^*=") for p in described if not p.startswith("*")]


def _described_function(function: ast.FunctionDef | ast.AsyncFunctionDef, skip_self: bool = True) -> list[str]:
    """A function's parameters in the ladder's words; ``self`` (the first) left out unless ``skip_self`` is false."""
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


def _plain(signature: inspect.Signature, skip_self: bool = False) -> str:
    """A signature as a learner writes it, short defaults shown: ``(model, inputs, return_outputs=False)``."""
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


def _merged(callers: dict[str, list], replaced: frozenset[str] = frozenset()) -> list:
    """The call shapes of every caller but the ``replaced`` ones, once each."""
    shapes: list = []
    for caller, found in callers.items():
        if caller not in replaced:
            shapes += [shape for shape in found if shape not in shapes]
    return sorted(shapes)
