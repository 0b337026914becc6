"""Findings on calls: ``Trainer(...)`` keywords and positions the class no longer takes, trl's config class,
and calls of library functions whose signature changed.
"""

from __future__ import annotations

import ast
import difflib
import inspect
import re
from functools import cache

from .installed import (
    LIBRARIES,
    _class_fields,
    _classes,
    _init_parameters,
    _installed_library,
    _library_object,
    _library_release,
    installed_fields,
)
from .ladder_results import _old_trainer_init, ladder_history
from .resolve import _Arguments, _arguments, _Chain, _resolve
from .signatures import _described_function, _names
from .syntax import (
    _container,
    _is_name,
    _method,
    _processing_class_read,
    _reads_kwargs_tokenizer,
    _statements,
    _unpacks,
)
from .trl_history import TRL_RENAMED
from .visitor import _from_dict, _Visitor


def _trl_config(trainer: type) -> type | None:
    """TRL's config class for one of its trainers: ``SFTConfig`` for ``SFTTrainer``."""
    if not trainer.__name__.endswith("Trainer"):
        return None
    config = _library_object(f"trl.{trainer.__name__[: -len('Trainer')]}Config")
    return config if isinstance(config, type) else None


def _takes_training_arguments(trainer: type) -> bool:
    """Whether a trl trainer's ``args`` may be a plain TrainingArguments (``SFTTrainer``: ``SFTConfig |
    TrainingArguments``), read from its signature's annotation; true when the signature does not say."""
    parameter = inspect.signature(trainer.__init__).parameters.get("args")
    if parameter is None or parameter.annotation is inspect.Parameter.empty:
        return True
    annotation = parameter.annotation
    return (
        re.search(r"\bTrainingArguments\b", annotation if isinstance(annotation, str) else repr(annotation)) is not None
    )


@cache
def _config_fields_read(trainer: type, config: type) -> tuple[str, ...]:
    """The first three of ``config``'s own fields (not TrainingArguments') that the trainer's source reads as
    ``args.<field>``, in the order it reads them."""
    try:
        source = inspect.getsource(trainer)
    except (OSError, TypeError):
        return ()
    own = _class_fields(config) - installed_fields()
    read = dict.fromkeys(m[1] for m in re.finditer(r"\bargs\.(\w+)", source) if m[1] in own)
    return tuple(read)[:3]


def _trl_argument(name: str, root: type, config: type, keyword: str, value: str) -> tuple[str, str]:
    """(message, fix) for a keyword a trl trainer no longer takes: a field of its config now, renamed, or gone."""
    release = _library_release(root)
    fields = _class_fields(config)
    if keyword in fields:
        return (
            f"`{name}(..., {keyword}=...)`: {root.__name__} ({release}) takes no `{keyword}`; it is a field of "
            f"{config.__name__} now",
            f"{config.__name__}(..., {keyword}={value}), passed as args=",
        )
    if TRL_RENAMED.get(keyword) in fields:
        new = TRL_RENAMED[keyword]
        return (
            f"`{name}(..., {keyword}=...)`: {root.__name__} ({release}) takes no `{keyword}`; {config.__name__} "
            f"calls it `{new}`",
            f"{config.__name__}(..., {new}={value}), passed as args=",
        )
    return (
        f"`{name}(..., {keyword}=...)`: neither {root.__name__} nor {config.__name__} ({release}) has `{keyword}`",
        f"delete it (see the {config.__name__} fields of the installed trl for what replaced it)",
    )


class TrainerCallChecks(_Visitor):
    """Calls of a Trainer (or a trl trainer) and of library functions."""

    def _library_call(self, node: ast.Call) -> None:
        """A call of a transformers or trl function (``deepspeed_init(self, ..., resume_from_checkpoint=None)``)
        that the installed function's signature does not take: a TypeError when the line runs."""
        if not isinstance(node.func, ast.Name | ast.Attribute) or _unpacks(node):
            return
        function = _resolve(self.module, node.func)
        library = (getattr(function, "__module__", None) or "").split(".")[0]
        if not inspect.isfunction(function) or library not in LIBRARIES:
            return
        try:
            signature = inspect.signature(function)
            signature.bind(*node.args, **{keyword.arg: keyword.value for keyword in node.keywords})
        except TypeError as error:
            self._add(
                node,
                "call-signature",
                f"`{ast.unparse(node.func)}(...)` does not fit {library} {_installed_library(library)}'s "
                f"`{function.__name__}{signature}`: {error}",
                f"call it as {function.__name__}{signature}",
            )
        except ValueError:
            return  # no signature to read

    def _trainer_call(self, node: ast.Call, name: str, chain: _Chain) -> None:
        """``Trainer(...)`` (or a subclass, or TRL's trainers): keywords and positions the class no longer takes."""
        declared: set[str] = set()
        reaches_root = not chain.locals
        own_positional: list[str] | None = None
        for local in chain.locals:  # keywords a subclass's own __init__ declares are its business
            init = _method(local.node, "__init__")
            if init is None:
                continue
            described = _described_function(init)
            declared |= set(_names(described))
            if own_positional is None:
                own_positional = [p for p in described if not p.startswith(("*", "^"))]
            if not any(p.startswith("**") for p in described):
                break  # its keywords stop here
        else:
            reaches_root = True
        root = chain.root
        accepted = set(_names(_init_parameters(root))) if reaches_root else set()
        config = _trl_config(root) if root.__module__.split(".")[0] == "trl" else None
        self._check_trainer_arguments(node, name, root, accepted | declared, config)
        if config is not None and all(_method(local.node, "__init__") is None for local in chain.locals):
            self._trl_config_argument(node, name, root, config)  # the trl trainer's own __init__ reads args
        if own_positional is None and reaches_root:
            self._check_positions(node, name, root)

    def _check_trainer_arguments(
        self, node: ast.Call, name: str, root: type, accepted: set[str], config: type | None
    ) -> None:
        """Keywords the class does not take; ``config`` is a trl trainer's config class (``None`` otherwise)."""
        release = _library_release(root)
        library = root.__module__.split(".")[0]
        for keyword, holder in self._keywords(node):
            if keyword.arg in accepted or id(keyword.value) in self.reported_keys:
                continue
            if holder is not None and holder.startswith("self.") and keyword.arg != "tokenizer":
                continue  # a dict on self, filled by methods that may not all run before this call
            self.reported_keys.add(id(keyword.value))
            value = ast.get_source_segment(self.unit.source, keyword.value) or "..."
            if keyword.arg == "tokenizer" and "processing_class" in accepted:
                kind, message, fix = (
                    "trainer-tokenizer",
                    f"`{name}(tokenizer=...)`: {root.__name__} ({release}) has no `tokenizer` argument"
                    f"{ladder_history('tokenizer_argument') if library == 'transformers' else ''}",
                    f"processing_class={_processing_class_read(keyword.value)}"
                    if _reads_kwargs_tokenizer(keyword.value) and self._callback_kwargs(_container(keyword.value))
                    else f"processing_class={value}",
                )
            elif config is not None:
                kind, (message, fix) = "trl-argument", _trl_argument(name, root, config, keyword.arg, value)
            else:
                close = difflib.get_close_matches(keyword.arg, sorted(accepted), n=1, cutoff=0.6)
                kind, message, fix = (
                    "trainer-argument",
                    f"`{name}(..., {keyword.arg}=...)`: {root.__name__} ({release}) takes no `{keyword.arg}`",
                    f"did you mean `{close[0]}`?" if close else "move it to TrainingArguments or delete it",
                )
            if holder is not None:
                message, fix = _from_dict(message, fix, keyword.arg, holder, name)
            self._add(keyword.value, kind, message, fix)

    def _trl_config_argument(self, node: ast.Call, name: str, root: type, config: type) -> None:
        """``DPOTrainer(args=TrainingArguments(...))``: a trl trainer whose ``args`` must be its own config class
        (4.x-era trl took a TrainingArguments and the trainer's options as keywords)."""
        if _takes_training_arguments(root):
            return
        # args= written in the call, or the key "args" of a dict the file builds and passes with **
        value = next((keyword.value for keyword, _ in self._keywords(node) if keyword.arg == "args"), None)
        names = list(_names(_init_parameters(root)))
        if value is None and "args" in names:
            index = names.index("args")
            if index < len(node.args) and not any(isinstance(a, ast.Starred) for a in node.args[: index + 1]):
                value = node.args[index]
        if value is None:
            return
        arguments = _arguments(self.module, value.func) if isinstance(value, ast.Call) else self._arguments_of(value)
        if arguments is None or not arguments.closed or issubclass(arguments.root, config):
            return
        if isinstance(value, ast.Name) and any(issubclass(other.root, config) for other in self._bound_to(value, node)):
            return  # also bound to the config class (on a branch that may be this call's)
        read = _config_fields_read(root, config)
        self._add(
            value,
            "trl-argument",
            f"`{name}(args={ast.unparse(value)})`: that is a {arguments.name}, and {root.__name__} "
            f"({_library_release(root)}) takes a {config.__name__}"
            + (f": it reads {', '.join(f'`args.{field}`' for field in read)} from it" if read else ""),
            f"build it as {config.__name__}(...) with the same arguments ({config.__name__} is a TrainingArguments "
            "subclass), and pass it as args=",
            catches="AttributeError",
        )

    def _bound_to(self, name: ast.Name, call: ast.Call) -> list[_Arguments]:
        """The arguments classes the enclosing function (or the module) assigns to ``name`` before ``call``, on any
        branch: ``args = RewardConfig(...)`` and ``args = TrainingArguments(...)``."""
        function = self.function_stack[-1] if self.function_stack else None
        found = []
        for statement in _statements(function.body if function is not None else self.unit.tree.body):
            if getattr(statement, "lineno", 0) >= call.lineno:
                break
            if (
                isinstance(statement, ast.Assign)
                and any(_is_name(target, name.id) for target in statement.targets)
                and isinstance(statement.value, ast.Call)
                and (arguments := _arguments(self.module, statement.value.func)) is not None
            ):
                found.append(arguments)
        return found

    def _check_positions(self, node: ast.Call, name: str, root: type) -> None:
        """Positional arguments beyond the place where 4.x's Trainer and the installed one part ways."""
        trainer = _classes()[0]
        if root is not trainer and root.__init__ is not trainer.__init__:
            return  # another __init__ (Seq2SeqTrainer's is the Trainer's order; trl's are their own)
        old = [p.rstrip("=").replace("tokenizer", "processing_class") for p in _old_trainer_init()]
        new = list(_names(_init_parameters(root)))
        for index, argument in enumerate(node.args):
            if isinstance(argument, ast.Starred):
                return
            if index < len(old) and index < len(new) and old[index] != new[index]:
                self._add(
                    argument,
                    "trainer-positional",
                    f"`{name}(...)`: positional argument {index + 1} was `{old[index]}` on the 4.x Trainer, and "
                    f"{root.__name__} ({_library_release(root)}) takes it as `{new[index]}`: every later "
                    "positional argument moves too",
                    f"pass it and the ones after it by keyword: {old[index]}={ast.unparse(argument)}, ...",
                )
                return
