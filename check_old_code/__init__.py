"""Find Trainer code that the installed transformers no longer runs: ``python -m check_old_code PATH...``.

It reads Python files and notebooks (``.py``, ``.ipynb``, or folders of them) **without running them** and
reports, with file and line, each thing a 4.x script, subclass or callback does that the installed release refuses
or silently ignores:

- ``TrainingArguments`` arguments that were renamed or removed, each ``*TrainingArguments`` class (and a subclass
  of one) checked against its own fields (the course's map, ``check_old_code.old_arguments``, and the release ladder,
  ``docs/ladder/results.json``, say when each went); fields a subclass still declares although the Trainer no
  longer reads them; attributes read from an arguments object (``training_args.overwrite_output_dir``);
- ``Trainer(tokenizer=...)``, ``super().__init__(..., tokenizer=...)``, positional arguments that land in another
  parameter, and for TRL's trainers the arguments that moved into their config class (``SFTConfig``);
- overrides whose signature the installed ``Trainer`` no longer calls correctly, judged by how its own code calls
  them (by position, by keyword, passed on as a function, or not at all); ``super()`` calls that no longer fit;
  overrides of methods that do not exist; ``self.tokenizer`` and removed methods read in a subclass;
- callback methods named ``on_...`` that are not events, and ``kwargs["tokenizer"]`` in a callback;
- names imported from transformers or trl that the installed releases no longer have;
- names that stayed while their meaning changed (``changed-value``): ``report_to=None`` (4.x's default, refused
  now), ``args.local_rank`` compared with a number (4.x set it from the launcher, 5.x leaves it at -1),
  ``len(args.fsdp)`` (its default is None now); overrides of hooks the installed Trainer never calls
  (``uncalled-method``: ``create_optimizer_and_scheduler``) or whose result it now uses (``method-return``: a
  ``_remove_unused_columns`` that returns nothing); a file's own ``self.`` calls of inherited methods, judged as
  ``super()`` calls are; a test for None of a field whose default was None in 4.x and is not now
  (``self.report_to is None``). Arguments objects are followed through a Trainer's ``trainer.args`` (also
  ``self.trainer.args`` where the class sets ``self.trainer`` to a new Trainer), through an attribute stored from an
  annotated ``__init__`` parameter (``self.training_args``) and into ``setattr(args, "name", value)``; a base
  class's reads of what its subclasses beside it set are not judged.

What changed is read from releases, never typed: the installed libraries, the release ladder
(``docs/ladder/results.json``, 4.23 to the pin, run) and the history before it (``docs/ladder/history.json``,
4.0 to 4.22, read from their wheels by ``python -m tools.ladder history``).

A class imported from the project itself is read from its file when that file is found next to the importing one
(``from llava.train.llava_trainer import LLaVATrainer``); a class the checker cannot read is not judged.

Each finding says how to fix it and which lesson teaches it (lesson numbers and sections come from
``lessons.toml``). The exit status is 1 when something was found, 0 when nothing was, 2 when a path does not
exist or a file cannot be read or parsed (the other files are still checked and reported).

A finding on code that deliberately reproduces an error is not counted when it sits inside a ``try`` block that
catches that error by name (``TypeError``; ``except Exception:`` swallows it silently, and is still reported) or on
a line (or in a class or function) marked ``# check-old-code: expected``.

The package, one concern a module, each importing only the ones listed above it:

- ``findings``: :class:`Finding`, :class:`Report`, :class:`CheckOldCodeError`, the lesson of each kind of finding;
- ``syntax`` and ``signatures``: readings of syntax trees and of parameter lists that every check shares;
- ``installed``: what the installed transformers and trl offer (the only module that reads the libraries);
- ``library_calls``: how the installed Trainer calls its own methods, read from its source;
- ``ladder_results``: the one reader of the release ladder's results and history (``docs/ladder/*.json``);
- ``sources``: reading files, notebooks and folders; ``resolve``: what a name in a file refers to;
- ``file_facts`` and ``scopes``: what a whole file, and each function, binds;
- ``visitor``: the walk's state and bookkeeping; then one module per kind of finding: ``imports``, ``values``,
  ``arguments``, ``trainer_calls``, ``overrides``, ``attributes``, ``callbacks``;
- ``checker``: the visitor made of them all, and :func:`check_paths`; ``cli``: the command line (``__main__``).
"""

from __future__ import annotations

from .checker import _check_units, check_paths, check_source
from .cli import main
from .findings import KIND_LESSONS, MARKER, CheckOldCodeError, Finding, Report, lesson_for
from .installed import (
    installed_callback_kwargs,
    installed_choices,
    installed_events,
    installed_fields,
    installed_version,
)
from .ladder_results import (
    LADDER_RESULTS,
    ladder,
    ladder_attribute_removal,
    ladder_call_change,
    ladder_enum_value,
    ladder_history,
    ladder_method_removal,
    ladder_removal,
    ladder_value_removal,
)
from .library_calls import _call_sites, installed_calls
from .sources import _Unit

__all__ = [
    "KIND_LESSONS",
    "LADDER_RESULTS",
    "MARKER",
    "CheckOldCodeError",
    "Finding",
    "Report",
    "_Unit",
    "_call_sites",
    "_check_units",
    "check_paths",
    "check_source",
    "installed_callback_kwargs",
    "installed_calls",
    "installed_choices",
    "installed_events",
    "installed_fields",
    "installed_version",
    "ladder",
    "ladder_attribute_removal",
    "ladder_call_change",
    "ladder_enum_value",
    "ladder_history",
    "ladder_method_removal",
    "ladder_removal",
    "ladder_value_removal",
    "lesson_for",
    "main",
]
