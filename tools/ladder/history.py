"""The release history before the ladder (``python -m tools.ladder history``): transformers 4.0 to 4.22 do not
install on Python 3.11, so the last release of each of those minors is read from its wheel, not run, and what the
old-code checker needs of it is written to ``docs/ladder/history.json``:

- ``training_argument_defaults``: each ``TrainingArguments`` field and its default as written in the source
  (``"fsdp": "''"``, ``"report_to": "None"``);
- ``training_arguments_set``: the fields the release's own code assigns after parsing (``local_rank``, read from
  ``LOCAL_RANK``): their values are not only what the user gave;
- ``trainer_call_sites``: how ``Trainer``'s own code calls its methods, the same reading
  (:func:`check_old_code.release_facts.self_call_sites`) as the ladder's probes make of each installed rung;
- ``trainer_methods``: the parameters of each ``Trainer`` method, in the ladder's words (``name=``, ``*args``);
- ``trainer_returns_discarded``: the methods ``Trainer`` calls only for their effect, never using what they return.

The same facts, for the releases the ladder installs, are in ``docs/ladder/results.json``; the checker reads the
two files as one history, oldest first.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

from check_old_code.release_facts import class_named, discarded_returns, field_defaults, fields_set, self_call_sites
from tools.ladder.era import wheel, wheel_text
from tools.ladder.rungs import RELEASES, ROOT, LadderError, version_key

HISTORY = ROOT / "docs" / "ladder" / "history.json"
FIRST_MINOR = 4  # transformers 4.0 is where the history starts; the ladder's oldest rung is where it ends


def _described(arguments: ast.arguments) -> list[str]:
    """A method's parameters in the ladder's words (:func:`check_old_code.release_facts.describe`), ``self`` first."""
    positional = [*arguments.posonlyargs, *arguments.args]
    firsts = len(positional) - len(arguments.defaults)
    described = [p.arg + ("=" if index >= firsts else "") for index, p in enumerate(positional)]
    if arguments.vararg:
        described.append(f"*{arguments.vararg.arg}")
    described += [
        f"^{p.arg}" + ("=" if default is not None else "")
        for p, default in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
    ]
    if arguments.kwarg:
        described.append(f"**{arguments.kwarg.arg}")
    return described


def trainer_methods(source: str) -> dict[str, list[str]]:
    """The parameters of each method of ``Trainer``, by name."""
    return {
        item.name: _described(item.args)
        for item in class_named(ast.parse(source), "Trainer").body
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
    }


def read_release(read) -> dict:
    """The history entry of one release, from ``read(path inside the wheel) -> text``."""
    arguments, trainer = read("transformers/training_args.py"), read("transformers/trainer.py")
    return {
        "training_argument_defaults": field_defaults(arguments),
        "training_arguments_set": fields_set(arguments),
        "trainer_call_sites": self_call_sites(class_named(ast.parse(trainer), "Trainer")),
        "trainer_methods": trainer_methods(trainer),
        "trainer_returns_discarded": discarded_returns(class_named(ast.parse(trainer), "Trainer")),
    }


def history_versions(index_output: str, before: str) -> list[str]:
    """The last release of each minor from 4.0 up to (not including) ``before``'s minor, from ``pip index
    versions transformers``'s output."""
    match = re.search(r"Available versions: (.*)", index_output)
    if not match:
        raise LadderError(f"`pip index versions` printed no version list:\n{index_output.strip()[-500:]}")
    last: dict[tuple[int, int], str] = {}
    for version in match.group(1).split(", "):
        if not re.fullmatch(r"\d+\.\d+\.\d+", version.strip()):
            continue
        major, minor, _ = (int(part) for part in version.split("."))
        if major == FIRST_MINOR and (major, minor) < version_key(before)[:2]:
            key = (major, minor)
            if key not in last or version_key(version) > version_key(last[key]):
                last[key] = version.strip()
    return [last[key] for key in sorted(last)]


def command_history() -> int:
    """Read the wheels of the releases before the ladder's oldest rung and write ``docs/ladder/history.json``."""
    listing = subprocess.run(
        [sys.executable, "-m", "pip", "index", "versions", "transformers"], capture_output=True, text=True, check=False
    )
    oldest = RELEASES[0].version
    versions = history_versions(listing.stdout, oldest)
    releases = {}
    for version in versions:
        path = wheel(version)
        releases[version] = read_release(lambda name, path=path: wheel_text(path, name))
        print(
            f"{version}: {len(releases[version]['training_argument_defaults'])} fields, "
            f"{len(releases[version]['trainer_methods'])} Trainer methods"
        )
    document = {
        "about": "Written by `python -m tools.ladder history`: the last release of each transformers minor from 4.0 "
        f"to the ladder's oldest rung ({oldest}), read from its wheel (they do not install on Python 3.11), not "
        "run. Do not edit.",
        "releases": versions,
        "results": releases,
    }
    HISTORY.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {HISTORY.relative_to(ROOT)}: {len(versions)} releases")
    return 0


def read_history(path: Path = HISTORY) -> dict:
    """The history file, or an empty history when it is not there."""
    if not path.is_file():
        return {"releases": [], "results": {}}
    return json.loads(path.read_text(encoding="utf-8"))
