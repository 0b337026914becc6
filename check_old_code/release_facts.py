"""How the course reads a transformers release: the same rules for the ladder's probes and for the old-code checker.

Two readers describe releases: ``tools/ladder/probes.py`` runs inside each ladder environment (transformers 4.23 to
the course's pinned release, no course packages there) and records an inventory of the release;
``check_old_code`` compares a learner's code with the installed release and with those inventories. Both
must describe a release in the same words, so the rules live here, once. This module imports only the standard
library: the probes load it by path (``importlib``) in any ladder environment.
"""

from __future__ import annotations

import ast
import inspect
from types import ModuleType

# The TrainingArguments fields that take one of an enum's values, and the enum's names across releases: 4.23 types
# ``optim`` as ``str`` and checks it against OptimizerNames in __post_init__, so the annotation cannot be read;
# SaveStrategy came in 4.45 (IntervalStrategy before it).
CHOICE_FIELDS: dict[str, tuple[str, ...]] = {
    "optim": ("OptimizerNames",),
    "lr_scheduler_type": ("SchedulerType",),
    "eval_strategy": ("IntervalStrategy",),
    "evaluation_strategy": ("IntervalStrategy",),
    "logging_strategy": ("IntervalStrategy",),
    "save_strategy": ("SaveStrategy", "IntervalStrategy"),
    "hub_strategy": ("HubStrategy",),
}


def argument_choices(training_args: ModuleType, fields: set[str]) -> dict[str, list[str]]:
    """The values each enum-valued field accepts, read from the release's ``transformers.training_args`` module:
    ``{"optim": ["adafactor", ...], ...}``, for the fields in ``fields`` (the release's TrainingArguments)."""
    choices = {}
    for name, enums in CHOICE_FIELDS.items():
        found = [getattr(training_args, enum) for enum in enums if hasattr(training_args, enum)]
        if name in fields and found:
            choices[name] = sorted(str(member.value) for member in found[0])
    return choices


def enum_members(training_args: ModuleType) -> dict[str, dict[str, str]]:
    """The members of the enums of :data:`CHOICE_FIELDS` that the release's ``transformers.training_args`` module
    has, by name: ``{"OptimizerNames": {"ADAMW_HF": "adamw_hf", ...}, ...}`` (a name is not always its value in
    capitals: ``ADAMW_BNB`` is ``"adamw_bnb_8bit"``)."""
    names = sorted({enum for enums in CHOICE_FIELDS.values() for enum in enums})
    return {
        name: {member.name: str(member.value) for member in getattr(training_args, name)}
        for name in names
        if hasattr(training_args, name)
    }


def describe(parameter: inspect.Parameter) -> str:
    """A parameter in one short word: ``name``, ``name=`` (has a default), ``^name`` (keyword-only), ``*name`` or
    ``**name``."""
    if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
        return f"*{parameter.name}"
    if parameter.kind is inspect.Parameter.VAR_KEYWORD:
        return f"**{parameter.name}"
    prefix = "^" if parameter.kind is inspect.Parameter.KEYWORD_ONLY else ""
    return prefix + parameter.name + ("=" if parameter.default is not inspect.Parameter.empty else "")


def call_shape(node: ast.Call) -> list | None:
    """A call in two words, ``[positional count, sorted keywords]`` (``self.training_step(model, inputs,
    num_items_in_batch)`` is ``[3, []]``); ``None`` for a call that unpacks ``*args`` or ``**kwargs``."""
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    return [len(node.args), sorted(k.arg for k in node.keywords)]


def self_call_sites(tree: ast.AST) -> dict[str, dict[str, list]]:
    """How the functions of a module call ``self.<method>(...)``: ``{method: {caller: [shape, ...]}}``, the caller
    being the function the call is written in (``compute_loss`` is called from ``training_step`` and from
    ``prediction_step``; a call in a function nested in a method counts as the method's). A subclass that replaces
    a caller without calling ``super()`` takes those calls away."""
    sites: dict[str, dict[str, list]] = {}

    def visit(node: ast.AST, caller: str) -> None:
        """Record the ``self.<method>(...)`` calls under ``node``, written in the function ``caller``."""
        for child in ast.iter_child_nodes(node):
            method = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef) and isinstance(node, ast.ClassDef)
            inner = child.name if method or (isinstance(child, ast.FunctionDef) and not caller) else caller
            if (
                isinstance(child, ast.Call)
                and isinstance(child.func, ast.Attribute)
                and isinstance(child.func.value, ast.Name)
                and child.func.value.id == "self"
                and (shape := call_shape(child)) is not None
            ):
                known = sites.setdefault(child.func.attr, {}).setdefault(caller, [])
                if shape not in known:
                    known.append(shape)
            visit(child, inner)

    visit(tree, "")
    return {name: {caller: sorted(shapes) for caller, shapes in callers.items()} for name, callers in sites.items()}


def self_attributes(tree: ast.AST) -> list[str]:
    """The attributes a module's methods set on ``self`` (``self.fsdp = None``): with the class's own names, what an
    instance has. Sorted, once each."""
    names = set()
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign | ast.AugAssign)
            else []
        )
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Attribute) and isinstance(part.value, ast.Name) and part.value.id == "self":
                    names.add(part.attr)
    return sorted(names)


def class_named(tree: ast.Module, name: str) -> ast.ClassDef:
    """The module-level class ``name`` of a parsed module (ValueError when there is none)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise ValueError(f"no class {name} in the release's source")


def field_defaults(source: str) -> dict[str, str]:
    """``TrainingArguments``'s fields and their defaults, as written: ``field(default=X)`` or ``= X`` gives X's
    source text; ``default_factory`` gives ``"<factory>"``; a field without a default gives ``"<required>"``."""
    defaults = {}
    for item in class_named(ast.parse(source), "TrainingArguments").body:
        if not (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)):
            continue
        value = item.value
        if value is None:
            defaults[item.target.id] = "<required>"
        elif isinstance(value, ast.Call) and getattr(value.func, "id", getattr(value.func, "attr", "")) == "field":
            keywords = {k.arg: k.value for k in value.keywords}
            if "default" in keywords:
                defaults[item.target.id] = ast.unparse(keywords["default"])
            else:
                defaults[item.target.id] = "<factory>" if "default_factory" in keywords else "<required>"
        else:
            defaults[item.target.id] = ast.unparse(value)
    return defaults


def fields_set(source: str) -> list[str]:
    """The ``TrainingArguments`` fields that the class's own methods assign to ``self``: sorted, once each."""
    cls = class_named(ast.parse(source), "TrainingArguments")
    fields = {i.target.id for i in cls.body if isinstance(i, ast.AnnAssign) and isinstance(i.target, ast.Name)}
    names = set()
    for node in ast.walk(cls):
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
        )
        for target in targets:
            if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
                names.add(target.attr)
    return sorted(names & fields)


def discarded_returns(tree: ast.AST) -> list[str]:
    """The methods a module calls as ``self.name(...)`` only as whole statements, never using what they return
    (4.2's ``self._remove_unused_columns(dataset)``, which changed the dataset in place): sorted, once each."""
    used, discarded = set(), set()
    statements = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
        ):
            (discarded if id(node) in statements else used).add(node.func.attr)
    return sorted(discarded - used)
