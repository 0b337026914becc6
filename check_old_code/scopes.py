"""Which names hold an arguments object in a function or at module level (``args = TrainingArguments(...)``,
``parser.parse_args_into_dataclasses()``, ``self.args`` in a Trainer), and which names stand for classes.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .installed import _classes
from .resolve import _Arguments, _arguments, _Chain, _chain, _is_trainer, _Local, _Module, _resolve
from .syntax import _is_name, _options, _statements, _terminal


@dataclass
class _Scope:
    """Names bound to arguments objects in one function (or at module level), names bound to the file's own
    dataclasses that hold arguments objects in their fields (``args.reward_config``), and the names it assigns."""

    arguments: dict[str, _Arguments] = field(default_factory=dict)
    holders: dict[str, dict[str, _Arguments]] = field(default_factory=dict)
    instances: dict[str, _Local] = field(default_factory=dict)
    assigned: set[str] = field(default_factory=set)
    aliases: dict[str, list[ast.AST]] = field(default_factory=dict)  # Cls = PeftTrainer if lora else Trainer
    trainers: set[str] = field(default_factory=set)  # names of Trainer instances: their .args is the arguments
    trainer_attributes: dict[str, set[str]] = field(default_factory=dict)  # self -> {"trainer"}: self.trainer.args


def _annotation_arguments(module: _Module, annotation: ast.AST | None) -> _Arguments | None:
    """The arguments class an annotation names (``TrainingArguments``, ``Optional[...]``, ``X | None``, quoted)."""
    if annotation is None:
        return None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return None
    if isinstance(annotation, ast.Subscript) and _terminal(annotation.value) in {"Optional", "Union"}:
        inner = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
        found = [_annotation_arguments(module, part) for part in inner]
        return next((arguments for arguments in found if arguments is not None), None)
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _annotation_arguments(module, annotation.left) or _annotation_arguments(module, annotation.right)
    if isinstance(annotation, ast.Name | ast.Attribute):
        return _arguments(module, annotation)
    return None


def _held_arguments(module: _Module, node: ast.AST) -> dict[str, _Arguments]:
    """The fields of one of the file's (or project's) own classes whose annotation is an arguments class:
    ``reward_config: RewardConfig = field(...)`` gives ``{"reward_config": RewardConfig's fields}``. Empty for an
    arguments class itself and for a class the checker cannot read."""
    if not isinstance(node, ast.Name | ast.Attribute) or _arguments(module, node) is not None:
        return {}
    held = {}
    for local in reversed(_chain(module, node).locals):  # the most derived class's annotation wins
        for item in local.node.body:
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                arguments = _annotation_arguments(local.module, item.annotation)
                if arguments is not None:
                    held[item.target.id] = arguments
                else:
                    held.pop(item.target.id, None)
        held.update(_stored_in_init(local))
    return held


def _stored_in_init(local: _Local) -> dict[str, _Arguments]:
    """``self.training_args = training_args`` in ``__init__``, the parameter annotated with an arguments class:
    the attribute holds that arguments object in every method (vec2text's ``Experiment``)."""
    methods = [item for item in local.node.body if isinstance(item, ast.FunctionDef)]
    init = next((item for item in methods if item.name == "__init__"), None)
    if init is None:
        return {}
    parameters = {p.arg: p.annotation for p in [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs]}
    stored = {}
    for statement in _statements(init.body):
        if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name)):
            continue
        annotation = parameters.get(statement.value.id)
        arguments = _annotation_arguments(local.module, annotation) if annotation is not None else None
        for target in statement.targets:
            if arguments is not None and isinstance(target, ast.Attribute) and _is_name(target.value, "self"):
                stored[target.attr] = arguments
    return stored


def _function_scope(module: _Module, function: ast.FunctionDef | ast.AsyncFunctionDef, chain: _Chain | None) -> _Scope:
    """The names a function binds to arguments objects: annotated parameters, a callback's ``args``, assignments."""
    scope = _Scope()
    parameters = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
    for parameter in parameters:
        scope.assigned.add(parameter.arg)
        if parameter.annotation is not None:
            _bind_object(module, scope, ast.Name(parameter.arg), parameter.annotation)
        arguments = _annotation_arguments(module, parameter.annotation)  # also Optional[...] and "quoted"
        if arguments is not None:
            scope.arguments[parameter.arg] = arguments
    callback = _classes()[1]
    if chain is not None and chain.subclass_of(callback) and function.name.startswith("on_") and len(parameters) > 1:
        first = parameters[1].arg  # (self, args, state, control, **kwargs): args is the TrainingArguments
        if first not in scope.arguments:
            scope.arguments[first] = _trainer_arguments(module)
    if chain is not None and parameters and chain.locals and chain.subclass_of(_classes()[2]):
        own = _arguments(module, ast.Name(chain.locals[0].node.name))  # self in a TrainingArguments subclass
        if own is not None:
            scope.arguments[parameters[0].arg] = own
    elif chain is not None and parameters and chain.locals:
        held = _held_arguments(module, ast.Name(chain.locals[0].node.name))  # self.training_args in a holder
        if held:
            scope.holders[parameters[0].arg] = held
    _bind_names(module, function.body, scope)
    if chain is not None and _is_trainer(chain):
        for statement in _statements(function.body):  # args = self.args
            if isinstance(statement, ast.Assign) and _is_self_args(statement.value):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        scope.arguments[target.id] = _trainer_arguments(module)
    if chain is not None and parameters and chain.locals:
        held_trainers = _trainer_attributes(chain)
        if held_trainers:
            scope.trainer_attributes[parameters[0].arg] = held_trainers
    _bind_reads(module, function.body, scope)
    return scope


def _trainer_attributes(chain: _Chain) -> set[str]:
    """The attributes a class (or a class it derives from in a file) sets to a new Trainer in its methods and to
    nothing else but None (``self.trainer = Trainer(...)``): ``self.trainer.args`` is the arguments."""
    calls: dict[str, list[bool]] = {}
    for local in chain.locals:
        for node in ast.walk(local.node):
            if not isinstance(node, ast.Assign):
                continue
            for target in node.targets:
                if not (isinstance(target, ast.Attribute) and _is_name(target.value, "self")):
                    continue
                if isinstance(node.value, ast.Constant) and node.value.value is None:
                    continue
                is_trainer = isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name | ast.Attribute)
                is_trainer = is_trainer and _trainer_class(_chain(local.module, node.value.func))
                calls.setdefault(target.attr, []).append(is_trainer)
    return {name for name, kinds in calls.items() if all(kinds)}


def _bind_reads(module: _Module, body: list[ast.stmt], scope: _Scope) -> None:
    """``training_args = trainer.args`` (``trainer`` a Trainer instance) and ``training_args = self.training_args``
    (a field or ``__init__`` attribute that holds an arguments object): the name holds that arguments object."""
    for statement in _statements(body):
        if not (isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Attribute)):
            continue
        source, attribute = statement.value.value, statement.value.attr
        if not isinstance(source, ast.Name):
            continue
        if source.id in scope.trainers and attribute == "args":
            arguments = _trainer_arguments(module)
        else:
            arguments = scope.holders.get(source.id, {}).get(attribute)
        for target in statement.targets:
            if arguments is not None and isinstance(target, ast.Name):
                scope.arguments[target.id] = arguments


def _is_self_args(node: ast.AST) -> bool:
    """Whether ``node`` is ``self.args``."""
    return isinstance(node, ast.Attribute) and node.attr == "args" and _is_name(node.value, "self")


def _trainer_arguments(module: _Module) -> _Arguments:
    """What ``self.args`` is in a Trainer: a TrainingArguments with the fields the file's subclasses declare."""
    return _Arguments(module.declared_argument_fields(), False, _classes()[2], "TrainingArguments")


def _module_scope(module: _Module) -> _Scope:
    """The names a file binds at module level (every cell of a notebook together)."""
    scope = _Scope()
    for tree in module.trees:
        _bind_names(module, tree.body, scope)
        _bind_reads(module, tree.body, scope)
    return scope


def _bind_object(module: _Module, scope: _Scope, target: ast.AST, cls: ast.AST) -> None:
    """Record that the name ``target`` holds an instance of the class expression ``cls``: an arguments object, or
    one of the file's dataclasses whose fields hold arguments objects."""
    if not isinstance(target, ast.Name):
        return
    arguments = _arguments(module, cls)
    if arguments is not None:
        scope.arguments[target.id] = arguments
    elif held := _held_arguments(module, cls):
        scope.holders[target.id] = held
    elif _trainer_class(_chain(module, cls)):
        scope.trainers.add(target.id)  # trainer: transformers.Trainer, or trainer = LLaVATrainer(...)
    if isinstance(local := _resolve(module, cls), _Local):
        scope.instances[target.id] = local  # its fields' defaults can be read (``optim=script_args.optim``)


def _trainer_class(chain: _Chain) -> bool:
    """Whether a class is a Trainer, or a class the checker cannot read that is named like one (``trainer:
    TransformerTrainer`` imported through a package ``__init__`` it cannot see): its ``.args`` is read as the
    arguments, whose old names and changed values are what is judged, not the class itself."""
    return chain.subclass_of(_classes()[0]) or (
        chain.root is None
        and not chain.locals
        and bool(chain.unknown)
        and all(name.split(".")[-1].endswith("Trainer") for name in chain.unknown)
    )


def _parser_classes(parser: ast.AST | None, parsers: dict[str, list[ast.AST]]) -> list[ast.AST]:
    """The dataclasses an argument parser was built from: a name bound to ``HfArgumentParser((A, B))``, or the
    call itself (``HfArgumentParser(A).parse_args_into_dataclasses()``)."""
    if isinstance(parser, ast.Name):
        return parsers.get(parser.id, [])
    if isinstance(parser, ast.Call) and parser.args and (_terminal(parser.func) or "").endswith("ArgumentParser"):
        first = parser.args[0]
        return list(first.elts) if isinstance(first, ast.Tuple | ast.List) else [first]
    return []


def _bind_names(module: _Module, body: list[ast.stmt], scope: _Scope) -> None:
    """Names an arguments object (or a dataclass holding one) is bound to: ``args = TrainingArguments(...)``,
    ``model_args, data_args, training_args = parser.parse_args_into_dataclasses()``,
    ``training_args = parser.parse_args_into_dataclasses()[0]`` and ``script_args = tyro.cli(ScriptArguments)``."""
    parsers: dict[str, list[ast.AST]] = {}
    poisoned: set[str] = set()
    assignments = [s for s in _statements(body) if isinstance(s, ast.Assign | ast.AnnAssign)]
    for statement in assignments:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        for target in targets:
            for part in ast.walk(target):
                if isinstance(part, ast.Name):
                    scope.assigned.add(part.id)
        value = statement.value
        if isinstance(value, ast.Call) and _terminal(value.func) == "cast" and len(value.args) == 2:
            value = value.args[1]  # typing.cast(tuple[...], parser.parse_args_into_dataclasses())
        for target in targets:
            options = _options(value) if isinstance(target, ast.Name) else []
            if options and all(isinstance(o, ast.Name | ast.Attribute) and _resolve(module, o) for o in options):
                scope.aliases.setdefault(target.id, []).extend(options)  # a name for a class
            elif isinstance(target, ast.Name):
                poisoned.add(target.id)  # also bound to something else: not a name for a class
        index = None
        if isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Constant):
            index, value = value.slice.value, value.value  # parser.parse_args_into_dataclasses()[0]
        if not isinstance(value, ast.Call):
            continue
        function = _terminal(value.func) or ""
        if value.args and isinstance(value.args[0], ast.Tuple | ast.List) and function:
            for target in targets:
                if isinstance(target, ast.Name):
                    parsers[target.id] = list(value.args[0].elts)
        elif value.args and function.endswith("ArgumentParser") and isinstance(value.args[0], ast.Name | ast.Attribute):
            for target in targets:
                if isinstance(target, ast.Name):
                    parsers[target.id] = [value.args[0]]  # HfArgumentParser(TrainingArguments)
        if index is None:
            for target in targets:
                _bind_object(module, scope, target, value.func)
        if function == "cli" and value.args and isinstance(value.args[0], ast.Name | ast.Attribute):
            for target in targets:
                _bind_object(module, scope, target, value.args[0])  # tyro.cli(ScriptArguments)
        parser = value.func.value if isinstance(value.func, ast.Attribute) else None
        classes = _parser_classes(parser, parsers)
        if classes and value.func.attr.startswith("parse"):
            for target in targets:
                if isinstance(target, ast.Tuple) and index is None:
                    for element, cls in zip(target.elts, classes, strict=False):
                        _bind_object(module, scope, element, cls)
                elif isinstance(index, int) and -len(classes) <= index < len(classes):
                    _bind_object(module, scope, target, classes[index])
    for name in poisoned:
        scope.aliases.pop(name, None)
