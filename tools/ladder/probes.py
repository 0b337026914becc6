"""The ladder's probes: one small run per claim, written to run unchanged on every transformers release of the ladder.

This file runs inside a ladder environment (``.venv-ladder/<version>``, made by ``tools/ladder/``), where the
installed transformers may be anything from the oldest rung to the course's pin, so it imports nothing from the
course (no ``helpers``) and only the standard library, torch and transformers. Everything is offline: a one-layer
BERT built from a config and a word-level tokenizer built in memory; nothing is read from the Hub.

The probes themselves are in ``probes_signatures.py``, ``probes_defaults.py`` and ``probes_callbacks.py``, their
registry and building blocks in ``probe_kit.py``: this file loads them by path. ``python tools/ladder/probes.py
OUT.json`` runs every probe and writes, for each, a verdict (``holds``,
``does not hold`` or ``cannot run``) and the evidence line that decided it, plus an inventory of the release
(``TrainingArguments`` fields, ``Trainer`` method signatures, ``TrainerCallback`` events) that
``check_old_code`` reads. ``PROBES`` (the registry) can be read without importing transformers:
``tools/ladder/`` does, with any Python.

A probe returns ``(holds, evidence)``. It raises :class:`CannotRun` when the release lacks what the claim is about
(an argument, a method); any other exception is recorded as ``cannot run`` with its type and message, so one broken
probe never stops the others, and the evidence says why.
"""

from __future__ import annotations

import contextlib
import gc
import inspect
import io
import json
import platform
import sys
import time
import traceback
import warnings
from pathlib import Path


def _load(name: str):
    """The module ``name`` beside this file, loaded by path once (this file runs by path in each release's
    environment and is loaded by path by ``tools/ladder``; neither puts this folder on ``sys.path``)."""
    import importlib.util

    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


_load("probe_kit")  # the registry and the building blocks, then the probes, in the order the page lists them
for _part in ("probes_signatures", "probes_defaults", "probes_callbacks"):
    _load(_part)

from probe_kit import (  # noqa: E402
    CANNOT_RUN,
    DOES_NOT_HOLD,
    HOLDS,
    PROBES,
    RELEASE_FACTS,
    VERDICTS,
    CannotRun,
    _line,
    argument_choices,
    enum_members,
    event_names,
    field_names,
)


# ---------------------------------------------------------------------------------------------------------------
# Inventory for check_old_code and the page
# ---------------------------------------------------------------------------------------------------------------
def inventory() -> dict:
    """What the release offers: TrainingArguments fields, Trainer methods and their parameters, callback events."""
    from transformers import Trainer

    methods = {}
    for name in sorted(dir(Trainer)):
        attribute = inspect.getattr_static(Trainer, name)
        if name.startswith("__") or not callable(getattr(Trainer, name, None)):
            continue
        if isinstance(attribute, property):
            continue
        with contextlib.suppress(TypeError, ValueError):
            parameters = inspect.signature(getattr(Trainer, name)).parameters.values()
            methods[name] = [RELEASE_FACTS.describe(parameter) for parameter in parameters]
    init_parameters = inspect.signature(Trainer.__init__).parameters.values()
    return {
        "training_arguments": sorted(field_names()),
        "argument_choices": argument_choices(),
        "enum_members": enum_members(),
        "trainer_init": [RELEASE_FACTS.describe(p) for p in init_parameters][1:],
        "trainer_methods": methods,
        "trainer_calls": trainer_calls(),
        "trainer_call_sites": trainer_call_sites(),
        "trainer_attributes": trainer_attributes(),
        "callback_events": event_names(),
    }


def trainer_calls() -> dict[str, list]:
    """How the release's own Trainer code calls its methods: ``{name: [[positional count, [keywords]], ...]}``.

    Read from the source of the modules that define Trainer's methods (``self.training_step(model, inputs,
    num_items_in_batch)`` is ``[3, []]``); calls that unpack ``*args`` or ``**kwargs`` are left out."""
    import ast

    from transformers import Trainer

    modules = set()
    for name in dir(Trainer):
        value = getattr(Trainer, name, None)
        module = getattr(value, "__module__", None) or ""
        if callable(value) and module.startswith("transformers"):
            modules.add(sys.modules[module])
    shapes: dict[str, list] = {}
    for module in sorted(modules, key=lambda item: item.__name__):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "self"):
                continue
            if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
                continue
            shape = [len(node.args), sorted(k.arg for k in node.keywords)]
            known = shapes.setdefault(node.func.attr, [])
            if shape not in known:
                known.append(shape)
    return {name: sorted(shapes[name]) for name in sorted(shapes) if callable(getattr(Trainer, name, None))}


def _trainer_modules() -> list:
    """The modules that define the release's Trainer methods (trainer.py and its helpers)."""
    from transformers import Trainer

    modules = set()
    for name in dir(Trainer):
        value = getattr(Trainer, name, None)
        module = getattr(value, "__module__", None) or ""
        if callable(value) and module.startswith("transformers"):
            modules.add(sys.modules[module])
    return sorted(modules, key=lambda item: item.__name__)


def trainer_attributes() -> dict[str, list[str]]:
    """The attributes the release's Trainer and Seq2SeqTrainer set on ``self`` (``self.fsdp = ...``,
    ``self._max_length = ...``), read from their modules' source: ``{"Trainer": [...], "Seq2SeqTrainer": [...]}``."""
    import ast

    from transformers import Seq2SeqTrainer

    trainer = set()
    for module in _trainer_modules():
        trainer |= set(RELEASE_FACTS.self_attributes(ast.parse(inspect.getsource(module))))
    seq2seq = set(RELEASE_FACTS.self_attributes(ast.parse(inspect.getsource(sys.modules[Seq2SeqTrainer.__module__]))))
    return {"Trainer": sorted(trainer), "Seq2SeqTrainer": sorted(trainer | seq2seq)}


def trainer_call_sites() -> dict[str, dict[str, list]]:
    """:func:`trainer_calls` by caller: ``{name: {calling method: [[positional count, [keywords]], ...]}}``, read
    by ``check_old_code/release_facts.py`` (the same reading as the checker makes of the installed release)."""
    import ast

    from transformers import Trainer

    sites: dict[str, dict[str, list]] = {}
    for module in _trainer_modules():
        for name, callers in RELEASE_FACTS.self_call_sites(ast.parse(inspect.getsource(module))).items():
            for caller, shapes in callers.items():
                known = sites.setdefault(name, {}).setdefault(caller, [])
                known += [shape for shape in shapes if shape not in known]
    return {
        name: {caller: sorted(shapes) for caller, shapes in sorted(sites[name].items())}
        for name in sorted(sites)
        if callable(getattr(Trainer, name, None))
    }


def run_all(selected: list[str] | None = None) -> dict:
    """Run every probe (or the ``selected`` ids) and return the release's results."""
    import torch
    import transformers
    import transformers.trainer  # noqa: F401 (loaded now, so that the freeze below covers it)

    transformers.logging.set_verbosity_error()
    # Every train() starts with a full gc.collect() (accelerate frees memory before it): with the libraries' objects
    # moved out of the collector's reach, each probe that trains skips walking them (about 0.3 s a run).
    gc.collect()
    gc.freeze()
    results = {}
    for item in PROBES:
        if selected and item.id not in selected:
            continue
        start = time.perf_counter()
        output = io.StringIO()
        try:
            with contextlib.redirect_stdout(output), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                holds, evidence = item.function()
            verdict = HOLDS if holds else DOES_NOT_HOLD
        except CannotRun as reason:
            verdict, evidence = CANNOT_RUN, str(reason)
        except Exception as error:  # a probe that breaks is a result, with its reason, not a crash of the ladder
            frame = traceback.extract_tb(error.__traceback__)[-1]
            verdict = CANNOT_RUN
            evidence = f"{type(error).__name__}: {_line(error)} (at {Path(frame.filename).name}:{frame.lineno})"
        results[item.id] = {"verdict": verdict, "evidence": evidence, "seconds": round(time.perf_counter() - start, 2)}
    versions = {
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
    }
    for package in ("tokenizers", "accelerate", "numpy", "huggingface_hub", "safetensors"):
        with contextlib.suppress(ImportError):
            versions[package] = __import__(package).__version__
    return {"versions": versions, "probes": results, "inventory": inventory()}


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python tools/ladder/probes.py OUT.json [PROBE_ID...]")
        return 2
    start = time.perf_counter()
    report = run_all(argv[1:] or None)
    report["probe_seconds"] = round(time.perf_counter() - start, 1)
    Path(argv[0]).write_text(json.dumps(report, indent=1, sort_keys=True), encoding="utf-8")
    counts = {verdict: sum(r["verdict"] == verdict for r in report["probes"].values()) for verdict in VERDICTS}
    print(f"transformers {report['versions']['transformers']}: {counts} in {report['probe_seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
