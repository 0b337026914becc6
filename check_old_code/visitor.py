"""The checker's walk over one file's syntax tree: its state (the classes, functions, scopes and ``try`` blocks it
is in) and its bookkeeping (a finding, expected or not). Each kind of finding adds its checks in its own module.
"""

from __future__ import annotations

import ast
import re

from .findings import MARKER, Finding, lesson_for
from .installed import _classes, _imports_work, installed_callback_kwargs
from .ladder_results import ever_fields
from .resolve import _Arguments, _Chain, _is_trainer, _Module
from .scopes import _is_self_args, _Scope, _trainer_arguments
from .sources import _Unit
from .syntax import _dict_items, _exclusive, _is_name, _statements, _terminal


def _from_dict(message: str, fix: str, key: str, holder: str, callee: str) -> tuple[str, str]:
    """A keyword's finding (``eval_strategy="no"``) said for the key of a dict passed on to ``callee`` with ``**``."""
    message += f" (the key {key!r} of `{holder}`, passed to {callee} with **)"
    new = re.match(r"(\w+)=", fix)
    if new and new.group(1) != key:
        return message, f"{fix}: write the key {new.group(1)!r} in `{holder}` in place of {key!r}"
    return message, f"{fix} (the key {key!r} in `{holder}`)"


class _Visitor(ast.NodeVisitor):
    """The state and bookkeeping that every kind of check uses."""

    def __init__(self, unit: _Unit, module: _Module, lines: list[str], module_scope: _Scope) -> None:
        """Walk ``unit`` (a file or a cell) of ``module``, whose module-level names are ``module_scope``."""
        self.unit, self.module, self.lines = unit, module, lines
        self.found: list[tuple[Finding, bool]] = []
        self.try_stack: list[set[str]] = []
        self.marked_stack: list[bool] = []
        self.class_stack: list[tuple[ast.ClassDef, _Chain]] = []
        self.function_stack: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        self.scopes: list[_Scope] = [module_scope]
        self.reported_tokenizer: set[int] = set()
        self.reported_values: set[int] = set()
        self.reported_keys: set[int] = set()
        self.foreign_args: dict[int, bool] = {}  # a Trainer class's self.args is a class from elsewhere
        self.guarded: set[int] = set()  # self.x read after hasattr(self, "x") and ...: exists whenever it is read
        self.fallbacks = 0  # inside `except ImportError:` after imports the installed release has: never runs
        self.patched = module.patched()
        self.patched_events = module.patched_events()

    # -- bookkeeping ----------------------------------------------------------------------------------------------
    def _marked(self, line: int) -> bool:
        """Whether line ``line`` carries the marker ``# check-old-code: expected``."""
        return 0 < line <= len(self.lines) and MARKER in self.lines[line - 1]

    def _add(self, node: ast.AST, kind: str, message: str, fix: str, catches: str = "TypeError") -> None:
        """Record a finding at ``node``, expected when a ``try`` around it catches ``catches`` or the line is marked."""
        line = getattr(node, "lineno", 1)
        finding = Finding(self.unit.path, line, kind, message, fix, lesson_for(kind), self.unit.cell)
        if any(f.line == line and f.kind == kind and f.message == message for f, _ in self.found):
            return  # the same name read twice on one line: one finding
        # only a handler that names the error says the code expects it; `except Exception:` guards against anything,
        # and there the error is swallowed silently (a training step skipped, a save not made): still a finding
        caught = any(catches in handled for handled in self.try_stack)
        expected = caught or self._marked(line) or any(self.marked_stack)
        self.found.append((finding, expected))

    def visit_Try(self, node: ast.Try) -> None:
        """A ``try``: its handlers make findings in its body expected; an ``except ImportError`` fallback is skipped."""
        handled = set()
        for handler in node.handlers:
            if handler.type is None:
                handled.add("Exception")
            for item in handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]:
                if item is not None and (name := _terminal(item)):
                    handled.add(name)
        self.try_stack.append(handled)
        for statement in node.body:
            self.visit(statement)
        self.try_stack.pop()
        fallback = bool(handled & {"ImportError", "ModuleNotFoundError", "Exception"}) and _imports_work(node.body)
        self.fallbacks += fallback
        for handler in node.handlers:
            self.visit(handler)
        self.fallbacks -= fallback
        for part in (*node.orelse, *node.finalbody):
            self.visit(part)

    visit_TryStar = visit_Try

    def _callback_kwargs(self, container: ast.AST) -> str | None:
        """The callback class's name when ``container`` is the ``**kwargs`` of a TrainerCallback event being read
        and the installed Trainer no longer passes callbacks a ``tokenizer``; else ``None``."""
        if not (self.class_stack and self.function_stack and isinstance(container, ast.Name)):
            return None
        owner, chain = self.class_stack[-1]
        if not chain.subclass_of(_classes()[1]):
            return None
        function = self.function_stack[-1]
        kwargs = {function.args.kwarg.arg} if function.args.kwarg else set()
        kwargs |= {a.arg for a in function.args.args if a.arg == "kwargs"}
        if container.id not in kwargs or "tokenizer" in installed_callback_kwargs():
            return None
        return owner.name

    def _trainer_context(self) -> tuple[str, _Chain] | None:
        """The Trainer class (name and chain) whose method is being read, or a function patched onto a Trainer."""
        if self.class_stack and self.function_stack:
            owner, chain = self.class_stack[-1]
            if _is_trainer(chain):
                return owner.name, chain
        for function in self.function_stack:
            if function.name in self.patched and not self.class_stack:
                cls = self.patched[function.name][0]
                return f"{cls.__name__} (patched)", _Chain([], cls, [])
        return None

    def _arguments_of(self, node: ast.AST) -> _Arguments | None:
        """The arguments class of an expression: a bound name, ``self.args`` in a Trainer, or a field of one of the
        file's dataclasses that holds an arguments object (``script_args.reward_config``)."""
        if isinstance(node, ast.Name):
            for scope in reversed(self.scopes):
                if node.id in scope.arguments:
                    return scope.arguments[node.id]
                if node.id in scope.assigned:
                    return None
            return None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            for scope in reversed(self.scopes):
                if node.value.id in scope.trainers:
                    return _trainer_arguments(self.module) if node.attr == "args" else None
                if node.value.id in scope.holders:
                    return scope.holders[node.value.id].get(node.attr)
                if node.value.id in scope.arguments or node.value.id in scope.assigned:
                    break
        if _is_self_args(node) and self._trainer_context() is not None:
            return _trainer_arguments(self.module)
        if (
            isinstance(node, ast.Attribute)
            and node.attr == "args"
            and isinstance(node.value, ast.Attribute)
            and isinstance(node.value.value, ast.Name)
        ):  # self.trainer.args, self.trainer set to a new Trainer in a method of the class
            for scope in reversed(self.scopes):
                if node.value.attr in scope.trainer_attributes.get(node.value.value.id, ()):
                    return _trainer_arguments(self.module)
        return None

    def _foreign_args(self) -> bool:
        """Whether the Trainer class being read uses ``self.args.<name>`` for a name that no TrainingArguments
        release ever had and that the file's own arguments classes do not declare (``self.args.sortish_sampler``
        of the 4.x seq2seq examples): its ``self.args`` is an arguments class from elsewhere, whose fields this
        file does not show, so a field the installed class no longer has may be one of its own: not judged."""
        if not self.class_stack:
            return False
        owner = self.class_stack[-1][0]
        if id(owner) not in self.foreign_args:
            from transformers import TrainingArguments

            known = ever_fields() | self.module.declared_argument_fields()
            self.foreign_args[id(owner)] = any(
                isinstance(node, ast.Attribute)
                and _is_self_args(node.value)
                and node.attr not in known
                and not hasattr(TrainingArguments, node.attr)
                for node in ast.walk(owner)
            )
        return self.foreign_args[id(owner)]

    def _keywords(self, node: ast.Call) -> list[tuple[ast.keyword, str | None]]:
        """The call's keywords, with ``**kwargs`` opened where the file builds that dict itself: each keyword
        comes with the dict's name (``None`` for a keyword written in the call)."""
        keywords: list[tuple[ast.keyword, str | None]] = []
        for keyword in node.keywords:
            if keyword.arg is not None:
                keywords.append((keyword, None))
                continue
            opened = self._dict_keywords(keyword.value, node)
            keywords.extend((item, ast.unparse(keyword.value)) for item in opened)
        return keywords

    def _dict_keywords(self, value: ast.AST, call: ast.Call, written: bool = False) -> list[ast.keyword]:
        """The string keys (as keywords) of ``**value``: a dict written in the call (``**{"k": v}``,
        ``**dict(k=v)``), or a name that the enclosing function (or the module) binds only to such a dict and
        fills before the call with ``name["k"] = v`` or ``name.update(...)``. A name bound to anything else, or
        given as a parameter, is not opened: its keys cannot be read. With ``written``, the keys the file writes
        into the dict (``name["k"] = v``) are read even when the dict itself comes from elsewhere (``asdict(...)``).
        A key written on one branch of an ``if`` does not reach a call on the other branch."""
        opened = _dict_items(value)
        if opened is None and isinstance(value, ast.Attribute) and _is_name(value.value, "self") and self.class_stack:
            return self._attribute_keywords(value, call)
        if opened is not None or not isinstance(value, ast.Name):
            return opened or []
        function = self.function_stack[-1] if self.function_stack else None
        if function is not None and value.id in {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}:
            if not written:
                return []
        scope = function if function is not None else self.unit.tree
        body = function.body if function is not None else self.unit.tree.body
        keywords: list[ast.keyword] = []
        bound = False
        for statement in _statements(body):
            if getattr(statement, "lineno", 0) >= call.lineno:
                break
            if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                for target in targets:
                    if _is_name(target, value.id):
                        items = _dict_items(statement.value) if isinstance(statement, ast.Assign) else None
                        if items is None and not written:
                            return []  # bound to something whose keys this file does not show
                        keywords, bound = items or [], True
                    elif (
                        isinstance(target, ast.Subscript)
                        and _is_name(target.value, value.id)
                        and isinstance(target.slice, ast.Constant)
                        and isinstance(target.slice.value, str)
                    ):
                        if not _exclusive(scope, statement, call):
                            keywords.append(ast.keyword(arg=target.slice.value, value=statement.value))
                    elif any(_is_name(part, value.id) for part in ast.walk(target)):
                        return []
            elif (
                isinstance(statement, ast.Expr)
                and isinstance(call_ := statement.value, ast.Call)
                and isinstance(call_.func, ast.Attribute)
                and call_.func.attr == "update"
                and _is_name(call_.func.value, value.id)
            ):
                items = _dict_items(call_.args[0]) if call_.args else []
                if items is None:
                    return []
                if not _exclusive(scope, statement, call):
                    keywords += items + [k for k in call_.keywords if k.arg is not None]
        return keywords if bound or written else []

    def _attribute_keywords(self, value: ast.Attribute, call: ast.Call) -> list[ast.keyword]:
        """The string keys the class writes into ``self.<name>`` (``self.trainer_kwargs["k"] = v``) in any of its
        methods, except on the other branch of an ``if`` from ``call``. Which method runs first is not known, so
        the keys are a lower bound of what the dict holds when ``call`` runs."""
        owner = self.class_stack[-1][0]
        keywords = []
        for node in ast.walk(owner):
            if not isinstance(node, ast.Assign) or _exclusive(owner, node, call):
                continue
            for target in node.targets:
                if (
                    isinstance(target, ast.Subscript)
                    and isinstance(target.value, ast.Attribute)
                    and _is_name(target.value.value, "self")
                    and target.value.attr == value.attr
                    and isinstance(target.slice, ast.Constant)
                    and isinstance(target.slice.value, str)
                ):
                    keywords.append(ast.keyword(arg=target.slice.value, value=node.value))
        return keywords

    def _aliased(self, callee: ast.AST) -> list[ast.AST]:
        """The classes a called name stands for: itself, or each class the function assigned to it
        (``FinetuningTrainer = PeftTrainer`` and ``FinetuningTrainer = Trainer``); reported once for all of them."""
        if isinstance(callee, ast.Name):
            for scope in reversed(self.scopes):
                if callee.id in scope.aliases:
                    return scope.aliases[callee.id]
                if callee.id in scope.assigned:
                    return []
        if isinstance(callee, ast.Attribute) and _is_name(callee.value, "self") and self.class_stack:
            looked_up = self._looked_up_class(callee)
            if looked_up is not None:
                return [looked_up]
        return [callee]

    def _looked_up_class(self, callee: ast.Attribute) -> ast.AST | None:
        """``self.trainer_cls(...)`` called under ``if isinstance(self._task, TaskForSFT):``, where the class set
        ``self.trainer_cls = self.trainer_mapping[type(self._task)]`` and ``self.trainer_mapping = {TaskForSFT:
        SFTTrainer, ...}``: the mapping's class for that branch (``SFTTrainer``), or ``None``."""
        owner = self.class_stack[-1][0]

        def assigned(attribute: str) -> list[ast.AST]:
            """The values the class assigns to ``self.<attribute>``, in any method."""
            return [
                node.value
                for node in ast.walk(owner)
                if isinstance(node, ast.Assign)
                and any(
                    isinstance(t, ast.Attribute) and _is_name(t.value, "self") and t.attr == attribute
                    for t in node.targets
                )
            ]

        lookups = assigned(callee.attr)
        if len(lookups) != 1 or not isinstance(lookup := lookups[0], ast.Subscript):
            return None
        key = lookup.slice
        if not (
            isinstance(lookup.value, ast.Attribute)
            and _is_name(lookup.value.value, "self")
            and isinstance(key, ast.Call)
            and _is_name(key.func, "type")
            and len(key.args) == 1
        ):
            return None
        mappings = assigned(lookup.value.attr)
        if len(mappings) != 1 or not isinstance(mapping := mappings[0], ast.Dict):
            return None
        subject = ast.unparse(key.args[0])
        for node in ast.walk(self.function_stack[-1]) if self.function_stack else ():
            test = node.test if isinstance(node, ast.If) else None
            if not (
                isinstance(test, ast.Call)
                and _is_name(test.func, "isinstance")
                and len(test.args) == 2
                and ast.unparse(test.args[0]) == subject
                and any(part is callee for statement in node.body for part in ast.walk(statement))
            ):
                continue
            for name, value in zip(mapping.keys, mapping.values, strict=True):
                if name is not None and ast.unparse(name) == ast.unparse(test.args[1]):
                    return value
        return None
