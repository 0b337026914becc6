"""Findings on overrides: a method whose signature the installed Trainer no longer calls correctly, ``super()``
calls that no longer fit, and methods that override nothing.
"""

from __future__ import annotations

import ast
import difflib
import inspect
from collections.abc import Iterator

from check_old_code.release_facts import describe

from .file_facts import _referenced
from .installed import _library_release, _methods
from .ladder_results import (
    _ladder_accepted_call,
    _ladder_changed_caller,
    _ladder_ever_fitted,
    history_discarded_return,
    ladder_call_change,
    ladder_last_called,
    ladder_method_removal,
)
from .library_calls import _call_sites, _calls, _uses_return
from .resolve import _Chain, _unread_bases_come_after
from .signatures import _bind, _bind_described, _call_text, _described_function, _merged, _plain, _widened
from .syntax import _defines, _is_other_class, _is_super, _method, _unpacks
from .trainer_calls import TrainerCallChecks

# Methods that 4.x tutorials override but that no Trainer release ever had: what to override instead.
NEVER_TRAINER_METHODS = {
    "evaluation_step": "prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None)",
    "validation_step": "prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None)",
    "eval_step": "prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None)",
    "train_step": "training_step(self, model, inputs, num_items_in_batch=None)",
}


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


def _returns_value(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function returns (or yields) a value somewhere other than None, nested functions left out."""

    def walk(node: ast.AST) -> Iterator[ast.AST]:
        """The nodes under ``node``, without entering nested functions, lambdas or classes."""
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue
            yield child
            yield from walk(child)

    return any(
        (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
        )
        or isinstance(node, ast.Yield | ast.YieldFrom)
        for node in walk(function)
    )


def _takes_all(function: ast.FunctionDef | ast.AsyncFunctionDef, params: list[str]) -> bool:
    """Whether an override takes, by name, every parameter of a release's method (``params`` in the ladder's words,
    ``self`` first): always when it has ``**kwargs``."""
    if function.args.kwarg is not None:
        return True
    own = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
    wanted = {p.lstrip("^").rstrip("=") for p in params[1:] if not p.startswith("*")}
    return wanted <= own


class OverrideChecks(TrainerCallChecks):
    """Overrides and ``super()`` calls in Trainer subclasses."""

    def _self_call(self, node: ast.Call) -> None:
        """``self.name(...)`` in a Trainer subclass, ``name`` a method the file's classes do not define or set: the
        installed Trainer's method runs, so the call is judged as ``super().name(...)`` is."""
        context = self._trainer_context()
        if context is None or not isinstance(node.func, ast.Attribute) or not self.class_stack:
            return
        name = node.func.attr
        if name.startswith("__") or any(_defines(local.node, name) for local in context[1].locals):
            return
        self._super_call(node, own=True)

    def _super_call(self, node: ast.Call, own: bool = False) -> None:
        """``super().name(...)`` in a Trainer subclass (or, with ``own``, ``self.name(...)`` of an inherited
        method): does the installed method still take this call?"""
        context = self._trainer_context()
        if context is None or not isinstance(node.func, ast.Attribute) or not self.class_stack:
            return
        owner, chain = context
        name = node.func.attr
        parents = chain.locals if own else chain.locals[1:]
        if any(_method(local.node, name) is not None for local in parents) or chain.root is None:
            return
        if name == "__init__":
            if own:
                return
            if chain.unknown and not _unread_bases_come_after(chain):
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
        inherited = f" (inherited from {chain.root.__name__}: this file does not define it)" if own else ""
        self._add(
            node,
            "call-signature",
            f"`{ast.unparse(node.func)}(...)` in `{owner}` no longer fits {_library_release(chain.root)}{inherited}: "
            f"{name}{_plain(signature)} is what it takes, and {why}",
            f"call it as {ast.unparse(node.func)}{_plain(signature, skip_self=True)}",
        )

    def _override(
        self,
        owner: str,
        function: ast.FunctionDef | ast.AsyncFunctionDef,
        root: type,
        name: str,
        chain: _Chain | None = None,
    ) -> None:
        """A Trainer method overridden (or patched onto the class): does the installed Trainer still call it
        correctly?"""
        if name.startswith("__"):
            return
        methods = _methods(root)
        if name not in methods:
            self._missing_method(owner, function, root, chain)
            return
        signature = methods[name]
        if self._uncalled(owner, function, root):
            return
        self._returns_nothing(owner, function, root)
        replaced = _replaced(chain) - {name}  # callers the file's classes replace: their calls never happen
        sites = _call_sites(root).get(name, {})
        calls = _merged(sites, replaced)
        failures = [(shape, why) for shape in calls if (why := _bind(function, shape))]
        fits = lambda shape: _bind(function, shape) is None  # noqa: E731
        covers = lambda params: _takes_all(function, params)  # noqa: E731
        caller = None
        if failures and not _ladder_ever_fitted(name, fits, replaced):
            failing = [c for c, shapes in sorted(sites.items()) if c not in replaced and not all(map(fits, shapes))]
            caller = _ladder_changed_caller(name, fits, failing, covers)
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

    def _uncalled(self, owner: str, function: ast.FunctionDef | ast.AsyncFunctionDef, root: type) -> bool:
        """An override of a hook that an older Trainer called and the installed one still defines but never calls
        (``create_optimizer_and_scheduler``): what the override does silently never happens. Reported (and true)
        unless the file calls the method itself, or the installed library calls it."""
        name = function.name
        if name in _calls(root) or _referenced(self.module, name, function):
            return False
        called = ladder_last_called(name)
        if called is None:
            return False
        self._add(
            function,
            "uncalled-method",
            f"`{owner}.{name}` overrides a method that {_library_release(root)}'s {root.__name__} still has but never "
            f"calls ({called}): what this override does silently never happens",
            "move its body into the methods the installed Trainer calls (create_optimizer_and_scheduler: override "
            "create_optimizer and create_scheduler), or call it yourself",
        )
        return True

    def _returns_nothing(self, owner: str, function: ast.FunctionDef | ast.AsyncFunctionDef, root: type) -> None:
        """An override that returns nothing, of a method an older Trainer called only for its effect and whose
        result the installed Trainer uses (``dataset = self._remove_unused_columns(dataset, ...)``): the caller now
        gets None."""
        name = function.name
        if _returns_value(function) or not _uses_return(root, name):
            return
        release = history_discarded_return(name)
        if release is None:
            return
        self._add(
            function,
            "method-return",
            f"`{owner}.{name}` returns nothing: transformers {release}'s {root.__name__} called it for its effect "
            f"and ignored the result, {_library_release(root)}'s uses what it returns, so it gets None",
            f"return the result (`return super().{name}(...)`, or the value this override builds)",
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
        """An override of a method the library class does not have: a removed method, a misspelling, or a 4.x
        tutorial's name."""
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
