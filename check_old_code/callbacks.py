"""Findings on callbacks: methods named ``on_...`` that are not events, and ``kwargs["tokenizer"]``."""

from __future__ import annotations

import ast
import difflib

from .installed import installed_events, installed_version
from .syntax import _is_constant, _processing_class_read
from .visitor import _Visitor


class CallbackChecks(_Visitor):
    """TrainerCallback subclasses."""

    def _event(self, owner: ast.ClassDef, function: ast.FunctionDef) -> None:
        """A callback method named ``on_...`` that is not an event of the installed TrainerCallback."""
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

    def _callback_tokenizer(self, node: ast.Call) -> None:
        """``kwargs.get("tokenizer")`` in a callback; subscripts are handled in :meth:`visit_Subscript`."""
        if (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
            and _is_constant(node.args[0], "tokenizer")
        ):
            self._callback_key(node, node.func.value)

    def _callback_key(self, node: ast.AST, container: ast.AST) -> None:
        """``kwargs["tokenizer"]`` in a callback event, where ``kwargs`` is the event's ``**kwargs``."""
        owner = self._callback_kwargs(container)
        if owner is None:
            return
        self._add(
            node,
            "callback-tokenizer",
            f"`{ast.unparse(node)}` in `{owner}`: the installed Trainer ({installed_version()}) passes callbacks "
            "`processing_class`, not `tokenizer`",
            _processing_class_read(node),
            catches="KeyError",
        )
