"""Findings on imports: names and modules that transformers or trl no longer have (``removed-import``)."""

from __future__ import annotations

import ast

from .file_facts import _unbound_names
from .installed import LIBRARIES, _import_problem, _star_exports, installed_version
from .visitor import _Visitor


class ImportChecks(_Visitor):
    """``from transformers import ...`` and ``import transformers.x`` that fail on the installed releases."""

    # -- imports ----------------------------------------------------------------------------------------------------
    def visit_If(self, node: ast.If) -> None:
        """``if TYPE_CHECKING:``: its body never runs (only type checkers read it), so nothing in it is judged."""
        test = node.test
        if (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
            isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
        ):
            for statement in node.orelse:
                self.visit(statement)
            return
        later = getattr(super(), "visit_If", None)  # another check's reading of an `if` (the dead branches)
        (later or self.generic_visit)(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        """``from transformers.x import a, b`` (and ``*``) that the installed releases no longer give."""
        module = node.module or ""
        if node.level == 0 and any(alias.name == "*" for alias in node.names) and not self.fallbacks:
            self._star_import(node, module)
        if node.level == 0 and module.split(".")[0] in LIBRARIES and not self.fallbacks:
            problem = _import_problem(module, tuple(alias.name for alias in node.names if alias.name != "*"))
            if problem:
                self._add(node, "removed-import", problem[0], problem[1], catches="ImportError")
        self.generic_visit(node)

    def _star_import(self, node: ast.ImportFrom, module: str) -> None:
        """``from transformers.trainer import *`` in a file that uses names the installed module no longer gives
        (``is_torch_tpu_available``, ``ShardedDDPOption``, and the ``typing`` names 4.x's trainer.py imported):
        names the file never binds itself, so each use raises NameError. Judged only when every star import of the
        file is from transformers or trl."""
        if module.split(".")[0] not in LIBRARIES or any(
            source.split(".")[0] not in LIBRARIES or level for source, level in self.module.stars
        ):
            return
        exports = set().union(*(_star_exports(source) for source, _ in self.module.stars))
        if not exports:
            return
        missing = sorted(_unbound_names(self.module) - exports)
        if missing:
            shown = ", ".join(f"`{name}`" for name in missing[:8]) + (", ..." if len(missing) > 8 else "")
            self._add(
                node,
                "removed-import",
                f"`from {module} import *` no longer gives {shown}, which this file uses and never defines, on "
                f"{installed_version()}: each use raises NameError",
                f"import each name from where it is now (the typing names from typing), or write the code another "
                f"way; names the installed {module} lacks: {', '.join(missing)}",
                catches="NameError",
            )

    def visit_Import(self, node: ast.Import) -> None:
        """``import transformers.x`` of a module the installed release no longer has."""
        for alias in node.names:
            if alias.name.split(".")[0] in LIBRARIES and "." in alias.name and not self.fallbacks:
                problem = _import_problem(alias.name, ())
                if problem:
                    self._add(node, "removed-import", problem[0], problem[1], catches="ImportError")
        self.generic_visit(node)
