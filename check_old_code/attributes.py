"""Findings on attributes a Trainer subclass reads from ``self``: ``self.tokenizer``, removed methods and
attributes the installed Trainer no longer sets.
"""

from __future__ import annotations

import ast

from .file_facts import _attributes_set, _set_by_subclass
from .installed import _library_release
from .ladder_results import ladder_attribute_removal, ladder_method_removal, oldest_release
from .library_calls import _instance_attributes
from .resolve import _Chain
from .syntax import _assigns_self, _defines, _is_name
from .visitor import _Visitor

# The 4.x Trainer's mixed-precision attributes: the installed Trainer hands mixed precision, gradient scaling
# included, to accelerate (self.accelerator), so setting them yourself would hide the error and change nothing.
MIXED_PRECISION_FIXES = {
    "scaler": "delete the scaler code: self.accelerator.backward(loss) scales the loss and the optimizer step "
    "unscales it; setting self.scaler yourself only hides the error (nothing would use it)",
    "use_amp": "read `self.accelerator.mixed_precision != 'no'`; setting self.use_amp yourself only hides the error",
    "use_cuda_amp": "read `self.accelerator.mixed_precision != 'no'`; setting it yourself only hides the error",
    "use_apex": "delete the Apex branch (Apex AMP is gone): self.accelerator.backward(loss) does the backward pass "
    "in mixed precision; setting self.use_apex yourself only hides the error",
}


def _hasattr_self(node: ast.AST) -> str | None:
    """The attribute name of ``hasattr(self, "name")``, or None when ``node`` is not such a call."""
    if (
        isinstance(node, ast.Call)
        and _is_name(node.func, "hasattr")
        and len(node.args) == 2
        and _is_name(node.args[0], "self")
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ):
        return node.args[1].value
    return None


class AttributeChecks(_Visitor):
    """``self.<name>`` in a Trainer subclass that the installed class no longer has."""

    def _tokenizer_attribute(self, node: ast.Attribute, owner: str, chain: _Chain) -> None:
        """``self.tokenizer`` in a Trainer subclass whose library class no longer has it (once a class)."""
        if chain.root is None or chain.unknown or hasattr(chain.root, "tokenizer"):
            return
        if any(_assigns_self(local.node, "tokenizer") for local in chain.locals):
            return
        key = id(chain.locals[0].node) if chain.locals else id(chain.root)
        if key in self.reported_tokenizer:
            return
        self.reported_tokenizer.add(key)
        self._add(
            node,
            "tokenizer-attribute",
            f"`self.tokenizer` in `{owner}`: {chain.root.__name__} ({_library_release(chain.root)}) has no "
            "`tokenizer` attribute, so reading it raises AttributeError (this class reads it on other lines too "
            "where it says self.tokenizer)",
            "self.processing_class",
            catches="AttributeError",
        )

    def _removed_method(self, node: ast.Attribute, owner: str, chain: _Chain) -> None:
        """``self.name`` or ``super().name`` in a Trainer subclass: a method the ladder saw the Trainer lose."""
        name = node.attr
        if chain.root is None or name.startswith("__") or hasattr(chain.root, name):
            return
        if any(_defines(local.node, name) or _assigns_self(local.node, name) for local in chain.locals):
            return
        removed = ladder_method_removal(name)
        if not removed or "never saw" in removed:
            self._removed_trainer_attribute(node, owner, chain)
            return
        self._add(
            node,
            "removed-method",
            f"`{owner}` uses `{ast.unparse(node)}`, which {_library_release(chain.root)} no longer has{removed}",
            "find the method that replaced it in the installed trainer.py (prediction_loop: evaluation_loop)",
            catches="AttributeError",
        )

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        """``hasattr(self, "use_amp") and self.use_amp``: the read after the guard happens only when it exists."""
        if isinstance(node.op, ast.And):
            names: set[str] = set()
            for value in node.values:
                for part in ast.walk(value):
                    if isinstance(part, ast.Attribute) and _is_name(part.value, "self") and part.attr in names:
                        self.guarded.add(id(part))
                name = _hasattr_self(value)
                if name is not None:
                    names.add(name)
        self.generic_visit(node)

    def visit_If(self, node: ast.If) -> None:
        """``if hasattr(self, "use_amp") and self.use_amp: ... self.scaler ...``: when every way into the branch
        needs an attribute that neither the installed Trainer nor this file has, the branch never runs on the
        installed release, so what it reads from ``self`` is not judged."""
        context = self._trainer_context()
        if context is not None and context[1].root is not None and self._never_entered(node.test, context[1].root):
            for statement in node.body:
                for part in ast.walk(statement):
                    if isinstance(part, ast.Attribute) and _is_name(part.value, "self"):
                        self.guarded.add(id(part))
        self.generic_visit(node)

    def _never_entered(self, test: ast.AST, root: type) -> bool:
        """Whether ``test`` is ``hasattr(self, "x") and ...`` (or several joined by ``or``) with no ``x`` that the
        installed class or this file has."""
        options = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
        for option in options:
            first = option.values[0] if isinstance(option, ast.BoolOp) and isinstance(option.op, ast.And) else option
            name = _hasattr_self(first)
            if name is None:
                return False
            if hasattr(root, name) or name in _instance_attributes(root) or name in _attributes_set(self.module):
                return False
        return True

    def _removed_trainer_attribute(self, node: ast.Attribute, owner: str, chain: _Chain) -> None:
        """``self.fsdp`` in a Trainer subclass: an attribute a ladder release's Trainer set and the installed one
        neither sets nor has; or a name nothing sets at all, neither the installed class nor this file
        (``self._max_length`` of a 4.1x Seq2SeqTrainer, ``self._get_batch_logps`` of an older trl)."""
        name = node.attr
        if chain.unknown or not _is_name(node.value, "self") or name in _instance_attributes(chain.root):
            return
        if id(node) in self.guarded:
            return  # hasattr(self, name) and self.name
        from transformers import Seq2SeqTrainer

        release = _library_release(chain.root)
        removed = ladder_attribute_removal(name, issubclass(chain.root, Seq2SeqTrainer))
        if removed is not None and "never saw" not in removed:
            message = f"{chain.root.__name__} ({release}) does not set `{name}`{removed}"
        elif name.startswith("__") or name in _attributes_set(self.module):
            return  # set somewhere in this file (or a mangled name): not ours to judge
        elif chain.locals and _set_by_subclass(self.module, chain.locals[0].node.name, name):
            return  # a base class reading what its subclasses (here or in the files beside it) provide
        else:
            message = (
                f"neither {chain.root.__name__} ({release}) nor this file defines or sets `{name}` (the ladder, "
                f"from {oldest_release()}, never saw the Trainer have it: it belongs to an older release)"
            )
        self._add(
            node,
            "removed-attribute",
            f"`self.{name}` in `{owner}`: {message}: reading it raises AttributeError",
            MIXED_PRECISION_FIXES.get(
                name,
                f"find what replaced `{name}` in the installed {chain.root.__module__}; setting it yourself in "
                "__init__ only hides the error if the Trainer no longer uses it",
            ),
            catches="AttributeError",
        )
