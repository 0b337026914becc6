"""How the installed library calls its own methods (``self.compute_loss(model, inputs, ...)``), read from its
source, the same reading the ladder's probes make of each release; and what an instance of its classes has.
"""

from __future__ import annotations

import ast
import inspect
import sys
from collections.abc import Iterable
from functools import cache
from types import ModuleType

from check_old_code.release_facts import call_shape, self_attributes, self_call_sites

from .installed import LIBRARIES, _methods
from .signatures import _merged
from .syntax import _is_name


def _trainer_calls_in(modules: Iterable[ModuleType]) -> dict[str, dict[str, list]]:
    """How the Trainer's own code calls its methods, by calling method:
    ``{name: {caller: [[positional count, [keywords]], ...]}}``.

    The same reading as ``tools/ladder/probes.py`` makes of each release on the ladder (``trainer_call_sites``), and
    one more: a method handed on as a function (``sampler_fn=self._get_train_sampler``) is called the way the
    receiving method calls that parameter (``sampler_fn(dataset)``)."""
    sites: dict[str, dict[str, list]] = {}
    parameter_calls: dict[tuple[str, str], list] = {}
    handed: list[tuple[str, ...]] = []

    def add(name: str, caller: str, shapes: list) -> None:
        """Record the call shapes ``caller`` makes of ``self.name``, once each."""
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
def _module_tree(name: str) -> ast.Module:
    """The parsed source of a loaded library module, read once for every reader here."""
    return ast.parse(inspect.getsource(sys.modules[name]))


@cache
def _module_calls(name: str) -> tuple[dict[str, dict[str, list]], dict[tuple[str, str], list], list[tuple[str, ...]]]:
    """For one library module: how each method calls ``self.<method>(...)`` (:func:`self_call_sites`), how each
    function calls its parameters (``sampler_fn(dataset)``), and which ``self.<method>`` each method hands on as a
    keyword argument: ``(handing method, receiving method, keyword, method handed on)``."""
    tree = _module_tree(name)
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
        names |= set(self_attributes(_module_tree(module.__name__)))
    return frozenset(names)


@cache
def _call_sites(cls: type) -> dict[str, dict[str, list]]:
    """How ``cls`` (a Trainer, or a library's subclass of it) calls its own methods, by calling method, read from its
    modules (see :func:`_trainer_calls_in`)."""
    sites = _trainer_calls_in(_library_modules(cls))
    methods = _methods(cls)
    return {name: sites[name] for name in sites if name in methods}


@cache
def _calls(cls: type) -> dict[str, list]:
    """How ``cls`` calls its own methods, all callers together: ``{name: [[positional count, [keywords]], ...]}``."""
    return {name: _merged(callers) for name, callers in _call_sites(cls).items()}


def installed_calls() -> dict[str, list]:
    """How the installed Trainer calls each of its methods (see :func:`_trainer_calls_in`)."""
    from transformers import Trainer

    return _calls(Trainer)


@cache
def _uses_return(cls: type, name: str) -> bool:
    """Whether the installed library's own code uses what ``self.name(...)`` returns somewhere (read from the source
    of the modules of ``cls``'s classes)."""
    from check_old_code.release_facts import discarded_returns

    for module in _library_modules(cls):
        tree = _module_tree(module.__name__)
        called = any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == name
            and _is_name(node.func.value, "self")
            for node in ast.walk(tree)
        )
        if called and name not in discarded_returns(tree):
            return True
    return False
