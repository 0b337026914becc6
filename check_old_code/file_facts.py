"""Facts about a whole file, read once per file: its argparse defaults, the attributes it sets, the names it reads
and never binds, the attributes it uses.
"""

from __future__ import annotations

import ast

from .resolve import _Module, _project_module
from .syntax import _defines, _is_name, _terminal

# How many project files beside a file are read to find the subclasses of one of its classes.
NEARBY_FILES = 200


def _argparse_defaults(module: _Module) -> dict[str, ast.Constant]:
    """The string defaults of the file's argparse options, by destination (``parser.add_argument("--optimizer",
    default="adamw_hf")``: ``{"optimizer": <"adamw_hf">}``), when the file parses its command line; an option given
    twice with different defaults is left out."""
    if "argparse" not in module._cached:
        defaults: dict[str, ast.Constant | None] = {}
        parses = False
        for tree in module.trees:
            for node in ast.walk(tree):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                if node.func.attr in ("parse_args", "parse_known_args", "parse_intermixed_args"):
                    parses = True
                if node.func.attr != "add_argument":
                    continue
                keywords = {k.arg: k.value for k in node.keywords if k.arg}
                default = keywords.get("default")
                if not (isinstance(default, ast.Constant) and isinstance(default.value, str)):
                    continue
                names = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                dest = keywords.get("dest")
                if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
                    key = dest.value
                else:
                    long = [n for n in names if n.startswith("--")] or names
                    key = long[0].lstrip("-").replace("-", "_") if long else None
                if key:
                    known = defaults.get(key, default)
                    defaults[key] = default if known is not None and known.value == default.value else None
        module._cached["argparse"] = {k: v for k, v in defaults.items() if v is not None} if parses else {}
    return module._cached["argparse"]


def _attributes_set(module: _Module) -> frozenset[str]:
    """Every attribute name the file assigns on anything (``x.name = ...``, ``setattr(x, "name", ...)``)."""
    if "set" not in module._cached:
        names = set()
        for tree in module.trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store | ast.Del):
                    names.add(node.attr)
                elif isinstance(node, ast.Call) and _is_name(node.func, "setattr") and len(node.args) > 1:
                    if isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str):
                        names.add(node.args[1].value)
        module._cached["set"] = frozenset(names)
    return module._cached["set"]


def _nearby_modules(module: _Module) -> list[_Module]:
    """The Python files in this file's folder and in the folders beside it (its package and the packages next to
    it), this file first, at most ``NEARBY_FILES``; each read once."""
    if module.path is None:
        return [module]
    if "nearby" in module._cached:
        return module._cached["nearby"]
    folder = module.path.parent
    paths = sorted(folder.glob("*.py")) + sorted(folder.parent.glob("*/*.py"))
    found = [module]
    for path in dict.fromkeys(paths):
        if len(found) > NEARBY_FILES:
            break
        if path.resolve() != module.path.resolve() and (other := _project_module(path)) is not None:
            found.append(other)
    module._cached["nearby"] = found
    return found


def _set_by_subclass(module: _Module, owner: str, name: str) -> bool:
    """Whether a subclass of the file's class ``owner``, in this file or a project file beside it (its subclasses'
    subclasses too), defines ``name`` or sets ``self.name``: the base class reads what its subclasses provide
    (vec2text's BaseTrainer reads self.embedder_tokenizer, which each of its trainers sets)."""
    key = ("subclass-set", owner, name)
    if key not in module._cached:
        classes = [node for other in _nearby_modules(module) for node in _classes_of(other)]
        family, grown = {owner}, True
        while grown:
            grown = False
            for node in classes:
                if node.name not in family and any(_terminal(base) in family for base in node.bases):
                    family.add(node.name)
                    grown = True
        module._cached[key] = any(
            node.name in family and node.name != owner and _defines(node, name) for node in classes
        )
    return module._cached[key]


def _classes_of(module: _Module) -> list[ast.ClassDef]:
    """Every class the file defines, nested ones too."""
    return [node for tree in module.trees for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]


def _unbound_names(module: _Module) -> set[str]:
    """Names a file reads and never binds anywhere (no assignment, import, definition, parameter or builtin)."""
    import builtins

    read, bound = set(), set(dir(builtins)) | {"__file__", "__name__", "__doc__", "__spec__"}
    for tree in module.trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.alias) and node.name != "*":
                bound.add(node.asname or node.name.split(".")[0])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                bound.add(node.name)
            elif isinstance(node, ast.Global | ast.Nonlocal):
                bound.update(node.names)
            elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
                bound.add(node.name)
    return read - bound


def _referenced(module: _Module, name: str, function: ast.AST) -> bool:
    """Whether the file uses ``<something>.name`` anywhere (the function's own definition aside)."""
    return name in module.attributes_used
