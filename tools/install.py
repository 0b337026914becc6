"""Install the course's pinned packages into a virtual environment: uv's pip interface when it can be had, else pip.

Usage: python -m tools.install VENV_PYTHON        (``make venv`` runs it with ``.venv/bin/python``)

Both installers read the same files, in the same three steps: ``requirements.txt`` with ``constraints.txt``, then
``requirements-nodeps.txt`` with ``--no-deps``, then the course's ``helpers`` package (editable, ``--no-deps``).

uv (pinned below) is installed into the venv by pip first. uv does not read pip's configuration, so the settings
pip would use (``pip config list``: find-links, index URLs, constraints, from the config files and ``PIP_*``
variables) are handed to it as options, and ``--index-strategy unsafe-best-match`` makes it choose among all
indexes as pip does. ``COURSE_INSTALLER=pip`` (or ``uv``) chooses; by default uv is tried and pip takes over,
saying why, when uv cannot be installed or fails.

Bytecode: neither installer compiles every file it installs (pip's default, uv's ``--compile-bytecode``): on 2 cores
that took about 60 s of a 70 s install, for 17,700 files of which the course imports about 4,200 (a single
package, transformers, brings 2,600 model files; the course imports 16). Instead, two processes import what the
lessons, the checks and ``make test`` import (:data:`BYTECODE_GROUPS`) with bytecode writing on, which writes the
``.pyc`` files of exactly those modules (about 20 s), and doubles as a check that the install imports. A module
outside them is compiled when it is first imported, as Python always does (and, where ``PYTHONDONTWRITEBYTECODE``
is set, at every import).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UV_PIN = "uv==0.13.9"
LIST_KEYS = {"find-links": "--find-links", "extra-index-url": "--extra-index-url", "constraint": "--constraint"}
SINGLE_KEYS = {"index-url": "--index-url"}
# What the install imports to write bytecode, in two groups that two processes import at once (about as long each).
BYTECODE_GROUPS = (
    (
        "torch",
        "transformers.trainer",
        "transformers.models.auto.modeling_auto",
        "transformers.models.auto.processing_auto",  # and the tokenizer's modules, which it imports
        "transformers.models.bert.modeling_bert",
        "accelerate",
        "safetensors.torch",
        "trl.trainer.sft_trainer",  # lesson 13
        "trl.trainer.dpo_trainer",
        "trl.trainer.grpo_trainer",
    ),
    (
        "datasets",
        "sklearn.metrics",
        "matplotlib.pyplot",
        "pandas",
        "ipykernel.kernelapp",
        "matplotlib_inline.backend_inline",  # a kernel's plots
        "nbclient",
        "nbformat",
        "pytest",
        "nbmake.pytest_plugin",
        "xdist.plugin",
        "jupyterlab",
    ),
)
WRITE_BYTECODE = (
    "import importlib, sys\n"
    "sys.dont_write_bytecode = False\n"
    "for name in sys.argv[1:]:\n"
    "    importlib.import_module(name)\n"
)


class InstallError(RuntimeError):
    """An install step failed; the message says which, and what the installer printed."""


def steps() -> list[list[str]]:
    """The install steps, as arguments after ``install``: the same for pip and uv."""
    return [
        ["-r", "requirements.txt", "-c", "constraints.txt"],
        ["--no-deps", "-r", "requirements-nodeps.txt"],
        ["--no-deps", "-e", "."],
    ]


def parse_pip_config(text: str) -> list[str]:
    """uv options for the settings in ``pip config list``'s output (lines such as ``global.find-links='/opt/w'``).

    Local paths (and ``file://`` URLs) that do not exist are left out, as pip leaves them out (with a warning)."""
    options: list[str] = []
    seen: set[tuple[str, str]] = set()
    for line in text.splitlines():
        if "=" not in line:
            continue
        key, _, raw = line.partition("=")
        section, _, name = key.rpartition(".")
        if section.split(".")[0] not in {"global", "install", ":env:"}:
            continue
        values = shlex.split(raw)
        values = [item for value in values for item in value.split()]
        flag = LIST_KEYS.get(name) or SINGLE_KEYS.get(name)
        if flag is None:
            continue
        for value in values[:1] if name in SINGLE_KEYS else values:
            path = value.removeprefix("file://")
            if (value.startswith("file://") or not value.startswith(("http://", "https://"))) and not Path(
                path
            ).exists():
                continue
            if (flag, value) not in seen:
                seen.add((flag, value))
                options += [flag, value]
    return options


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stdout + done.stderr).strip()[-3000:]
        raise InstallError(f"{what} failed (exit code {done.returncode}):\n{tail}")


def write_bytecode(python: str, groups: tuple[tuple[str, ...], ...] = BYTECODE_GROUPS) -> None:
    """Import each group of modules in a process of its own, all at once, with bytecode writing on (whatever
    ``PYTHONDONTWRITEBYTECODE`` says), so that their ``.pyc`` files exist before the first lesson imports them."""
    processes = [
        subprocess.Popen(
            [python, "-c", WRITE_BYTECODE, *group],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for group in groups
    ]
    printed = [process.communicate()[0] for process in processes]
    failed = [(group, said) for group, said, process in zip(groups, printed, processes) if process.returncode != 0]
    if failed:
        group, said = failed[0]
        raise InstallError(
            f"the packages installed, but importing them failed ({', '.join(group)}); delete .venv and run make venv "
            f"again, and if it fails again, report what Python said:\n{said.strip()[-3000:]}"
        )


def install_with_pip(python: str) -> None:
    _run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], "pip install --upgrade pip")
    for step in steps():
        _run([python, "-m", "pip", "install", "-q", "--no-compile", *step], "pip install " + " ".join(step))


def install_with_uv(python: str) -> None:
    _run([python, "-m", "pip", "install", "-q", UV_PIN], f"pip install {UV_PIN}")
    uv = str(Path(python).parent / "uv")
    config = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True)
    options = ["--python", python, "--index-strategy", "unsafe-best-match"]
    options += parse_pip_config(config.stdout)
    for step in steps():
        _run([uv, "pip", "install", "--quiet", *options, *step], "uv pip install " + " ".join(step))


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__)
        return 2
    python = argv[0]
    if not Path(python).is_file():
        raise InstallError(f"{python} is not a Python interpreter: create the venv first (python3 -m venv .venv).")
    choice = os.environ.get("COURSE_INSTALLER", "auto")
    if choice not in {"auto", "uv", "pip"}:
        raise InstallError(f"COURSE_INSTALLER must be uv, pip or unset (uv, else pip), got {choice!r}.")
    started = time.perf_counter()
    used = "pip"
    if choice in {"auto", "uv"}:
        try:
            install_with_uv(python)
            used = "uv"
        except InstallError as error:
            if choice == "uv":
                raise
            print(f"uv could not install the course ({error}); installing with pip instead.", flush=True)
    if used == "pip":
        install_with_pip(python)
    write_bytecode(python)
    print(f"installed the course's packages with {used} in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InstallError as error:
        print(f"make venv: {error}", file=sys.stderr)
        sys.exit(1)
