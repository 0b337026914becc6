"""Modules, imports and classes: what a name in a file refers to (a library class, a class of the file or of the
project next to it) and what a class derives from.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from .installed import LIBRARIES, _class_fields, _classes, _library_object, _star_exports
from .syntax import _dotted_node


@dataclass(eq=False)
class _Module:
    """The classes, functions and imports of one file (every cell of a notebook together)."""

    path: Path | None
    trees: list[ast.Module]
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef] = field(default_factory=dict)
    imports: dict[str, tuple[str, str | None, int]] = field(default_factory=dict)  # local: (module, name, level)
    stars: list[tuple[str, int]] = field(default_factory=list)  # from module import *: (module, level)
    attributes_used: set[str] = field(default_factory=set)
    _cached: dict = field(default_factory=dict)

    def patched(self) -> dict[str, tuple[type, str]]:
        """Functions of the file assigned onto a Trainer class (``Trainer._get_train_sampler = f``)."""
        if "patched" not in self._cached:
            self._cached["patched"] = _patched_functions(self)
        return self._cached["patched"]

    def patched_events(self) -> dict[str, tuple[type, str]]:
        """Functions of the file assigned onto a callback class (``DEFAULT_PROGRESS_CALLBACK.on_log = f``)."""
        if "events" not in self._cached:
            self._cached["events"] = _patched_functions(self, _classes()[1])
        return self._cached["events"]

    def declared_argument_fields(self) -> frozenset[str]:
        """The fields declared by the TrainingArguments subclasses the file defines or imports."""
        if "declared" not in self._cached:
            self._cached["declared"] = frozenset(_all_declared_argument_fields(self))
        return self._cached["declared"]

    def __post_init__(self) -> None:
        """Index the file's classes, functions, imports and attribute names."""
        for tree in self.trees:
            for node in tree.body:
                if isinstance(node, ast.ClassDef):
                    self.classes[node.name] = node
                elif isinstance(node, ast.FunctionDef):
                    self.functions[node.name] = node
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    for alias in node.names:
                        if alias.name == "*":
                            self.stars.append((node.module or "", node.level))
                        else:
                            self.imports[alias.asname or alias.name] = (node.module or "", alias.name, node.level)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        local = alias.asname or alias.name.split(".")[0]
                        self.imports[local] = (alias.name if alias.asname else local, None, 0)
                elif isinstance(node, ast.Attribute):
                    self.attributes_used.add(node.attr)
                elif isinstance(node, ast.ClassDef) and node.name not in self.classes:
                    self.classes[node.name] = node  # a class defined inside a function


@cache
def _project_module(path: Path) -> _Module | None:
    """The project file at ``path``, read and parsed once, or ``None`` if it cannot be read."""
    try:
        return _Module(path, [ast.parse(path.read_text(encoding="utf-8"))])
    except (OSError, UnicodeDecodeError, SyntaxError):
        return None  # a project file the checker cannot read is not judged; the file itself is checked if given


@cache
def _find_module(origin: Path | None, dotted: str, level: int) -> Path | None:
    """The project file that ``from <dotted> import ...`` (``level`` dots) in ``origin`` reads, if it is there."""
    if origin is None:
        return None
    parts = dotted.split(".") if dotted else []
    if level:
        bases = [origin.parents[level - 1]] if level <= len(origin.parents) else []
    else:
        ancestors = list(origin.parents)[:8]
        bases = ancestors + [ancestor / "src" for ancestor in ancestors]  # and a project's src/ layout
    for base in bases:
        candidate = base.joinpath(*parts) if parts else base
        for path in (candidate.with_suffix(".py"), candidate / "__init__.py"):
            if parts and path.is_file() and path.resolve() != origin.resolve():
                return path
    return None


@dataclass(frozen=True)
class _Local:
    """A class defined in a file the checker read."""

    module: _Module
    node: ast.ClassDef


def _resolve(module: _Module, node: ast.AST, depth: int = 0, shadowed: str | None = None) -> Any:
    """What a class expression refers to: a library object, a :class:`_Local` class, or ``None`` (unknown).
    ``shadowed`` is the name of a class whose bases are being read: ``class TrainingArguments(TrainingArguments)``
    names the imported class in its bases, not itself."""
    if depth > 6:
        return None
    if isinstance(node, ast.Subscript):
        return _resolve(module, node.value, depth, shadowed)
    dotted = []
    while isinstance(node, ast.Attribute):
        dotted.insert(0, node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    name = node.id
    if not dotted and name in module.classes and name != shadowed:
        return _Local(module, module.classes[name])
    if name not in module.imports:
        for source, level in module.stars:  # from transformers.trainer import *
            if level == 0 and source.split(".")[0] in LIBRARIES and name in _star_exports(source):
                return _library_object(".".join([source, name, *dotted]))
        return None
    source, imported, level = module.imports[name]
    if level == 0 and source.split(".")[0] in LIBRARIES:
        return _library_object(".".join([source, *([imported] if imported else []), *dotted]))
    target = _find_module(module.path, source if imported else source, level)
    other = _project_module(target) if target else None
    if other is None:
        return None
    if imported is None:  # `import project.module` then `project.module.Class`
        return _resolve(other, ast.Name(dotted[-1]), depth + 1) if dotted else None
    return _resolve(other, _dotted_node([imported, *dotted]), depth + 1)


@dataclass
class _Chain:
    """A class and what it derives from: its classes read from files (most derived first), the first library
    class reached through them (``transformers.Trainer``, ``trl.SFTTrainer``, ``TrainingArguments``...), and
    whether some base could not be read."""

    locals: list[_Local]
    root: type | None
    unknown: list[str]

    def subclass_of(self, cls: type) -> bool:
        """Whether the library class the chain reaches is ``cls`` or a subclass of it."""
        return isinstance(self.root, type) and issubclass(self.root, cls)


def _chain(module: _Module, node: ast.AST) -> _Chain:
    """What the class expression ``node`` derives from: its classes in files, its library class, unread bases."""
    chain = _Chain([], None, [])
    pending: list[tuple[_Module, ast.AST, str | None]] = [(module, node, None)]
    seen = set()
    while pending:
        where, expression, shadowed = pending.pop(0)
        target = _resolve(where, expression, shadowed=shadowed)
        if isinstance(target, _Local):
            if id(target.node) in seen:
                continue
            seen.add(id(target.node))
            chain.locals.append(target)
            pending += [(target.module, base, target.node.name) for base in target.node.bases]
        elif isinstance(target, type):
            if chain.root is None:
                chain.root = target
        else:
            chain.unknown.append(ast.unparse(expression) if isinstance(expression, ast.AST) else str(expression))
    return chain


def _unread_bases_come_after(chain: _Chain) -> bool:
    """Whether every base the checker could not read comes after the library class in the method resolution order:
    the class's first base reaches the library class with every base read, and no unread base is named like a
    trainer (``class TransformerTrainer(Trainer, Registrable)``: ``super().__init__`` is ``Trainer.__init__``)."""
    if not chain.locals or not chain.locals[0].node.bases or chain.root is None:
        return False
    first = _chain(chain.locals[0].module, chain.locals[0].node.bases[0])
    return (
        first.root is chain.root
        and not first.unknown
        and not any(name.split(".")[-1].endswith("Trainer") for name in chain.unknown)
    )


def _is_trainer(chain: _Chain) -> bool:
    """Whether a class is a Trainer: a subclass of the installed one, or of an unread class named ``...Trainer``."""
    trainer = _classes()[0]
    return chain.subclass_of(trainer) or (
        chain.root is None and bool(chain.locals) and any(name.endswith("Trainer") for name in chain.unknown)
    )


def _declared_fields(chain: _Chain) -> set[str]:
    """The fields (annotated names) that the chain's classes in files declare."""
    return {
        item.target.id
        for local in chain.locals
        for item in local.node.body
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
    }


@dataclass(frozen=True)
class _Arguments:
    """An arguments object's class: its fields, whether they are all known, and the library class it builds on."""

    fields: frozenset[str]
    closed: bool
    root: type
    name: str


def _arguments(module: _Module, node: ast.AST) -> _Arguments | None:
    """The arguments class a class expression names (``TrainingArguments``, ``Seq2SeqTrainingArguments``, a trl
    config, a subclass of one), or ``None``."""
    training_arguments = _classes()[2]
    chain = _chain(module, node)
    name = ast.unparse(node)
    if chain.subclass_of(training_arguments):
        root = chain.root
        return _Arguments(_class_fields(root) | _declared_fields(chain), not chain.unknown, root, name.split(".")[-1])
    if chain.root is None and chain.unknown and name.endswith("TrainingArguments"):
        fields = _class_fields(training_arguments) | _declared_fields(chain)
        return _Arguments(fields, False, training_arguments, name.split(".")[-1])
    return None


def _patched_functions(module: _Module, base: type | None = None) -> dict[str, tuple[type, str]]:
    """Functions of the file assigned onto a Trainer class (``transformers.Trainer._get_train_sampler = f``), or onto
    a subclass of ``base`` (``DEFAULT_PROGRESS_CALLBACK.on_train_begin = f``, for TrainerCallback)."""
    trainer = base if base is not None else _classes()[0]
    patched = {}
    for tree in module.trees:
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name)):
                continue
            if node.value.id not in module.functions:
                continue
            for target in node.targets:
                if isinstance(target, ast.Attribute):
                    cls = _resolve(module, target.value)
                    if isinstance(cls, type) and issubclass(cls, trainer):
                        patched[node.value.id] = (cls, target.attr)
    return patched


def _all_declared_argument_fields(module: _Module) -> set[str]:
    """Fields declared by the TrainingArguments subclasses the file defines or imports from the project."""
    declared: set[str] = set()
    for name in [*module.classes, *module.imports]:
        arguments = _arguments(module, ast.Name(name)) if name[:1].isupper() else None
        if arguments is not None:
            declared |= arguments.fields
    return declared
