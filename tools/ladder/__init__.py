"""The release ladder: every claim of the course run on a series of transformers releases (``make ladder``).

The lessons can only say "holds on" the pinned release; the ladder says *when* a claim changed. It installs each
release of :data:`RELEASES` in its own virtual environment next to the course's (``.venv-ladder/<version>``,
gitignored), runs the probes of ``tools/ladder/probes.py`` there (one small offline run per claim) and writes:

- ``docs/ladder/results.json``: release x claim -> holds / does not hold / cannot run, each with its evidence line,
  the package versions of each environment, the measured install and probe times, and an inventory of each
  release (``TrainingArguments`` fields, ``Trainer`` methods, callback events) that ``check_old_code`` reads;
- ``docs/ladder.md``: the book's "when did it change" page, generated from the results file (never typed).

Sharing: torch (the course's pin, the CPU wheel) is installed once, in ``.venv-ladder/base``; each release's
environment sees it through a ``.pth`` file and installs only transformers and its own dependencies, from a lock
file (``tools/ladder/locks/<version>.txt``, written by the first install) so that a rerun installs the same
versions. Probes build tiny models from configs and a tokenizer in memory, so nothing is read from the Hub.

The environments go under ``.venv-ladder/`` (or the folder in the ``LADDER_VENVS`` environment variable).

Usage (``python -m tools.ladder COMMAND``, with the course's Python 3.11; the standard library is enough)::

    run [--releases all|ends|V,V...] [--check]   install what is missing, probe, write results and page
                                                 (--check: compare with the committed results, write nothing)
    install VERSION...                           install (or verify) environments only
    probe VERSION...                             probe installed environments, merge into the results
    bisect [--fresh] [--keep-venvs]              for every claim whose verdict differs between two rungs, probe
                                                 the final releases between them until the last release with the
                                                 old verdict and the first with the new one are adjacent; write
                                                 the changes and the page (needs the package index)
    newest                                       the newest transformers published, the newest that installs
                                                 here, and the resolver's reason for any newer one
    page                                         regenerate docs/ladder.md from the results file
    list                                         the releases and why each is on the ladder

``ends`` is the oldest and the newest release (CI's short ladder).

Bisection: the releases come from the index's JSON simple API (PEP 691), final releases only, yanked ones included
(pip installs a yanked release when it is pinned exactly, and a learner may have one) and marked as yanked. Each
release between two rungs gets its era's packages: the older rung's pins (``numpy<2`` where it has it), accelerate
capped at the newest accelerate published before that transformers release. A release that cannot be installed is
recorded with pip's reason and skipped: a change next to it is then between two releases that are adjacent among
those that install, and the change says which release it skipped. Like ``git bisect``, the search assumes one
change between two releases it has run with different verdicts; a third verdict found in between splits the
interval in two, so "holds, cannot run, does not hold" gives two changes.

The package, one concern a module: :mod:`~tools.ladder.rungs` (the releases, the files, the probe registry; the
newest rung is the pin of ``requirements.txt``, read through :mod:`course_facts.pins`),
:mod:`~tools.ladder.environments` (installs and probe runs), :mod:`~tools.ladder.results_file` (the results and
their checks),
:mod:`~tools.ladder.package_index` (the index and the newest release), :mod:`~tools.ladder.bisection`,
:mod:`~tools.ladder.era` (the source posts' release, read from its wheel), :mod:`~tools.ladder.page` (the page) and
:mod:`~tools.ladder.cli` (the commands). ``probes.py`` is not imported by any of them: it runs by path inside each
release's environment (the standard library and that release only), and :func:`load_probes` loads it by path;
it loads its parts beside it by path too (``probe_kit.py``: the registry and building blocks; ``probes_*.py``: the
probes by topic).
"""

from __future__ import annotations

from tools.ladder.bisection import bisect_changes, command_bisect, era_release
from tools.ladder.cli import command_run, main, record_install_time
from tools.ladder.environments import (
    ensure_base,
    install,
    installed,
    lock_file,
    probe,
    probe_env,
    requirements_of,
    run_command,
    venv_of,
)
from tools.ladder.era import (
    ERA,
    EXCERPTS,
    SOURCE_CLAIMS,
    WHEELS,
    SourceClaim,
    command_era,
    excerpt,
    source_verdicts,
    wheel,
    wheel_text,
)
from tools.ladder.package_index import (
    command_newest,
    era_cap,
    fetch_index,
    final_releases,
    latest_summary,
    newest_published,
    pin_is_newest,
    resolver_reason,
)
from tools.ladder.page import render, write_page
from tools.ladder.results_file import change_problems, changes, merge, problems, read_results, write_results
from tools.ladder.rungs import (
    BASE,
    BISECT_LOCKS,
    INDEX,
    LADDER_DIR,
    LOCKS,
    MARKS,
    OFFLINE,
    PAGE,
    PROBES_FILE,
    REGISTRY,
    RELEASES,
    RESULTS,
    ROOT,
    TORCH,
    LadderError,
    Release,
    error_line,
    load_probes,
    probe_table,
    release,
    select,
    version_key,
)

__all__ = [
    "BASE",
    "BISECT_LOCKS",
    "ERA",
    "EXCERPTS",
    "INDEX",
    "LADDER_DIR",
    "LOCKS",
    "LadderError",
    "MARKS",
    "OFFLINE",
    "PAGE",
    "PROBES_FILE",
    "REGISTRY",
    "RELEASES",
    "RESULTS",
    "ROOT",
    "Release",
    "SOURCE_CLAIMS",
    "SourceClaim",
    "TORCH",
    "WHEELS",
    "bisect_changes",
    "change_problems",
    "changes",
    "command_bisect",
    "command_era",
    "command_newest",
    "command_run",
    "ensure_base",
    "era_cap",
    "era_release",
    "error_line",
    "excerpt",
    "fetch_index",
    "final_releases",
    "install",
    "installed",
    "latest_summary",
    "pin_is_newest",
    "load_probes",
    "lock_file",
    "main",
    "record_install_time",
    "merge",
    "newest_published",
    "probe",
    "probe_env",
    "probe_table",
    "problems",
    "read_results",
    "release",
    "render",
    "requirements_of",
    "resolver_reason",
    "run_command",
    "select",
    "source_verdicts",
    "venv_of",
    "version_key",
    "wheel",
    "wheel_text",
    "write_page",
    "write_results",
]
