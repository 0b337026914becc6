"""What the installed releases (transformers, trl) offer: fields, methods, events, choices, library objects, and
whether an import still works. The only module that imports the libraries to read them.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import importlib
import inspect
import warnings
from functools import cache
from typing import Any

from check_old_code.release_facts import argument_choices, describe, fields_set

from .syntax import _statements

LIBRARIES = ("transformers", "trl")


@cache
def installed_version() -> str:
    """The installed transformers release (``transformers.__version__``)."""
    import transformers

    return transformers.__version__


@cache
def _installed_library(library: str) -> str | None:
    """The installed release of ``library`` (``transformers``, ``trl``), or ``None`` when it is not installed."""
    with contextlib.suppress(ImportError):
        return importlib.import_module(library).__version__
    return None


def _library_release(cls: type) -> str:
    """``transformers X.Y.Z`` or ``trl X.Y.Z``: the library and the installed release that ``cls`` comes from."""
    library = cls.__module__.split(".")[0]
    return f"{library} {importlib.import_module(library).__version__}"


@cache
def _class_fields(cls: type) -> frozenset[str]:
    """The dataclass fields of ``cls`` (none when it is not a dataclass)."""
    return frozenset(item.name for item in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else frozenset()


def installed_fields() -> frozenset[str]:
    """The fields of the installed ``TrainingArguments``."""
    from transformers import TrainingArguments

    return _class_fields(TrainingArguments)


@cache
def _init_parameters(cls: type) -> tuple[str, ...]:
    """The parameters of ``cls.__init__`` after ``self``, in the ladder's words (:func:`describe`)."""
    return tuple(describe(p) for p in list(inspect.signature(cls.__init__).parameters.values())[1:])


@cache
def _methods(cls: type) -> dict[str, inspect.Signature | None]:
    """Every method of ``cls`` (public and private), with its signature where it has one."""
    found: dict[str, inspect.Signature | None] = {}
    for name in dir(cls):
        if name.startswith("__") or isinstance(inspect.getattr_static(cls, name), property):
            continue
        value = getattr(cls, name, None)
        if callable(value):
            try:
                found[name] = inspect.signature(value)
            except (TypeError, ValueError):
                found[name] = None
    return found


@cache
def installed_events() -> tuple[str, ...]:
    """The events of the installed ``TrainerCallback`` (its ``on_...`` methods)."""
    from transformers import TrainerCallback

    return tuple(name for name in vars(TrainerCallback) if name.startswith("on_"))


@cache
def installed_callback_kwargs() -> frozenset[str]:
    """The keyword arguments the installed ``CallbackHandler.call_event`` passes to every event."""
    from transformers.trainer_callback import CallbackHandler

    tree = ast.parse(inspect.getsource(CallbackHandler.call_event).strip())
    return frozenset(k.arg for node in ast.walk(tree) if isinstance(node, ast.Call) for k in node.keywords if k.arg)


@cache
def installed_choices() -> dict[str, frozenset[str]]:
    """The values each enum-valued TrainingArguments field of the installed release accepts (``optim``...)."""
    import transformers.training_args as module

    choices = argument_choices(module, set(installed_fields()))
    return {name: frozenset(values) for name, values in choices.items()}


@cache
def _field_default(name: str) -> Any:
    """The default of the installed ``TrainingArguments`` field ``name``, or ``None``."""
    from transformers import TrainingArguments

    for item in dataclasses.fields(TrainingArguments):
        if item.name == name and item.default is not dataclasses.MISSING:
            return item.default
    return None


@cache
def installed_fields_set() -> frozenset[str]:
    """The fields the installed ``TrainingArguments`` assigns itself after parsing (read from its source)."""
    import transformers.training_args as module

    return frozenset(fields_set(inspect.getsource(module)))


@cache
def _default_arguments() -> Any:
    """An installed ``TrainingArguments`` built with nothing but an output folder: what each field holds when a
    script does not give it."""
    import tempfile

    from transformers import TrainingArguments

    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return TrainingArguments(output_dir=folder)


def installed_value(name: str) -> Any:
    """What the field ``name`` holds on an installed ``TrainingArguments`` built with defaults (after
    ``__post_init__``)."""
    return getattr(_default_arguments(), name, None)


@cache
def installed_refusal(name: str, value: Any) -> str | None:
    """The error the installed release raises when ``TrainingArguments(name=value)`` reaches the Trainer: the
    arguments are built, then, for ``report_to``, the Trainer's own lookup of the reporting integrations runs (as
    ``Trainer.__init__`` does). ``None`` when the value is taken."""
    import tempfile

    from transformers import TrainingArguments

    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            arguments = TrainingArguments(output_dir=folder, **{name: value})
            if name == "report_to":
                from transformers.integrations import get_reporting_integration_callbacks

                get_reporting_integration_callbacks(arguments.report_to)
        except (ValueError, TypeError) as error:
            return f"{type(error).__name__}: {str(error).splitlines()[0][:120]}"
    return None


def _classes() -> tuple[type, type, type]:
    """The installed ``Trainer``, ``TrainerCallback`` and ``TrainingArguments`` (imported when first needed)."""
    from transformers import Trainer, TrainerCallback, TrainingArguments

    return Trainer, TrainerCallback, TrainingArguments


@cache
def _library_object(dotted: str) -> Any:
    """The object ``transformers.X.Y`` names in the installed library, or ``None`` if there is none (or the library
    is not installed)."""
    parts = dotted.split(".")
    if parts[0] not in LIBRARIES:
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = importlib.import_module(parts[0])
            for index, part in enumerate(parts[1:], start=1):
                try:
                    value = getattr(value, part)
                except AttributeError:
                    value = importlib.import_module(".".join(parts[: index + 1]))
    except (ImportError, AttributeError):
        return None
    return value


def _star_exports(dotted: str) -> frozenset[str]:
    """The names ``from <dotted> import *`` binds in the installed library (its ``__all__``, or its public names)."""
    value = _library_object(dotted)
    if value is None:
        return frozenset()
    names = getattr(value, "__all__", None)
    return frozenset(names if names is not None else (n for n in vars(value) if not n.startswith("_")))


def _imports_work(body: list[ast.stmt]) -> bool:
    """Whether a ``try:`` body imports from transformers or trl, all of it there on the installed releases: then its
    ``except ImportError:`` branch (an import for older releases, ``from transformers.deepspeed import ...``) never
    runs."""
    wanted: list[tuple[str, tuple[str, ...]]] = []
    for statement in _statements(body):
        if isinstance(statement, ast.ImportFrom) and not statement.level:
            wanted.append((statement.module or "", tuple(a.name for a in statement.names if a.name != "*")))
        elif isinstance(statement, ast.Import):
            wanted += [(alias.name, ()) for alias in statement.names]
    wanted = [(module, names) for module, names in wanted if module.split(".")[0] in LIBRARIES]
    return bool(wanted) and all(_import_problem(module, names) is None for module, names in wanted)


@cache
def _import_problem(module: str, names: tuple[str, ...]) -> tuple[str, str] | None:
    """(message, fix) when ``from module import names`` fails on the installed libraries, or ``None``."""
    library = module.split(".")[0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            imported = importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is None or error.name.split(".")[0] != library:
            return None  # an optional dependency is missing here: not the library's doing
        release = _installed_library(library)
        if release is None:
            return None
        moved = _moved_module(module)
        kept = moved is not None and all(hasattr(importlib.import_module(moved), name) for name in names)
        fix = (
            f"import from `{moved}`, where the module went (it has {', '.join(names) or 'the module'})"
            if kept
            else f"find where its contents went in `{moved}` (or delete it)"
            if moved
            else "find where its contents went (or delete it)"
        )
        return f"`{module}` does not exist in {library} {release}", fix
    except ImportError:
        return None
    missing = []
    for name in names:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                present = hasattr(imported, name)
            except Exception:  # a lazy attribute that needs an optional dependency: cannot tell here
                present = True
        if present:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                importlib.import_module(f"{module}.{name}")
        except ModuleNotFoundError as error:
            if error.name is not None and error.name.startswith(library):
                missing.append(name)
        except ImportError:
            missing.append(name)
    if not missing:
        return None
    listed = ", ".join(f"`{name}`" for name in missing)
    moved = {name: place for name in missing if (place := _moved_module(f"{module}.{name}"))}
    if moved:
        fix = "; ".join(
            f"`{name}` is now the module `{place}`: `from {place.rsplit('.', 1)[0]} import {name}` keeps the file's "
            f"`{name}.` calls working"
            for name, place in moved.items()
        )
    else:
        fix = "delete the import, or import it from where it moved (search the installed package for the name)"
    return f"`from {module} import {', '.join(names)}`: {library} {_installed_library(library)} has no {listed}", fix


@cache
def _moved_module(dotted: str) -> str | None:
    """Where a module the installed library no longer has at ``dotted`` went: the one installed module of the same
    name one level down, in ``integrations`` (``transformers.deepspeed`` is ``transformers.integrations.deepspeed``
    on 5.x), or ``None``."""
    library, _, rest = dotted.partition(".")
    if not rest or "." in rest:
        return None
    import importlib.util

    candidate = f"{library}.integrations.{rest}"
    try:
        return candidate if importlib.util.find_spec(candidate) is not None else None
    except (ImportError, ValueError):
        return None
