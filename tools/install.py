"""Install the course's pinned packages into a virtual environment: uv's pip interface when it can be had, else pip.

Usage: python -m tools.install VENV_PYTHON        (``make venv`` runs it with ``.venv/bin/python``)
       python -m tools.install --torch-choice     say which torch build ``make venv`` would take here, and why

Both installers read the same files, in the same four steps: the pinned torch, from the source chosen below;
``requirements.txt`` with ``constraints.txt``; ``requirements-nodeps.txt`` with ``--no-deps``; the course's
``helpers`` package (editable, ``--no-deps``).

Which torch (:func:`choose_torch`): PyPI's torch for Linux is the CUDA build, which also pulls NVIDIA's CUDA
libraries (gigabytes). So on Linux the install looks for an NVIDIA driver (``nvidia-smi`` on ``PATH``, or
``/proc/driver/nvidia``): without one it takes the CPU build, from PyTorch's CPU index (:data:`CPU_INDEX`), unless
pip's own settings already offer it (a local wheel, a mirror); with one, PyPI's CUDA build. macOS and Windows get
PyPI's build, which is the CPU build there (with MPS on a Mac). ``COURSE_TORCH=cpu``, ``cuda`` or an index URL
overrides the choice. The install prints what it chose and why, and which build it installed.

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

import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
UV_PIN = "uv==0.13.9"
LIST_KEYS = {"find-links": "--find-links", "extra-index-url": "--extra-index-url", "constraint": "--constraint"}
SINGLE_KEYS = {"index-url": "--index-url"}
CPU_INDEX = "https://download.pytorch.org/whl/cpu"  # PyTorch's own index of CPU-only builds (X.Y.Z+cpu)
# What shows an NVIDIA driver on Linux: its command on PATH, or its kernel module's folder.
DRIVER_COMMAND = "nvidia-smi"
DRIVER_PATH = Path("/proc/driver/nvidia")
TORCH_OVERRIDE = "COURSE_TORCH"
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


@dataclass(frozen=True)
class TorchChoice:
    """Which torch build the install takes, why, and the index to add for it (None: the installer's own settings).

    ``build`` is ``cpu`` (the CPU build), ``cuda`` (PyPI's build on Linux: CUDA), ``pypi`` (PyPI's build on macOS
    and Windows, which is the CPU build there) or ``index`` (the build of the index ``COURSE_TORCH`` names)."""

    build: str
    reason: str
    index: str | None = None
    overridden: bool = False


def nvidia_driver(which: Callable[[str], str | None] = shutil.which, driver_path: Path | None = None) -> str | None:
    """What shows an NVIDIA driver here (``nvidia-smi`` on ``PATH``, or ``/proc/driver/nvidia``), or None."""
    found = which(DRIVER_COMMAND)
    if found:
        return f"{DRIVER_COMMAND} at {found}"
    driver_path = DRIVER_PATH if driver_path is None else driver_path
    return str(driver_path) if driver_path.exists() else None


def choose_torch(
    environ: Mapping[str, str], system: str, driver: Callable[[], str | None] = nvidia_driver
) -> TorchChoice:
    """The torch build for this machine: ``COURSE_TORCH`` when set (``cpu``, ``cuda`` or an index URL), else the
    CPU build on Linux without an NVIDIA driver, PyPI's CUDA build on Linux with one, PyPI's build elsewhere.

    Raises:
        InstallError: ``COURSE_TORCH`` is set to something else.
    """
    wanted = environ.get(TORCH_OVERRIDE, "").strip()
    if wanted == "cpu":
        return TorchChoice("cpu", f"{TORCH_OVERRIDE}=cpu", CPU_INDEX if system == "Linux" else None, True)
    if wanted == "cuda":
        return TorchChoice("cuda", f"{TORCH_OVERRIDE}=cuda", None, True)
    if wanted.startswith(("https://", "http://", "file://")):
        return TorchChoice("index", f"{TORCH_OVERRIDE}={wanted}", wanted, True)
    if wanted:
        raise InstallError(
            f"{TORCH_OVERRIDE} must be cpu, cuda or the URL of a package index (such as {CPU_INDEX}), "
            f"got {wanted!r}; unset it to let the install choose."
        )
    if system != "Linux":
        shown = {"Darwin": "macOS"}.get(system, system or "this system")
        return TorchChoice("pypi", f"on {shown} PyPI's torch is the CPU build (with MPS on a Mac)")
    found = driver()
    if found:
        return TorchChoice("cuda", f"this Linux machine has an NVIDIA driver ({found})")
    return TorchChoice(
        "cpu", f"this Linux machine shows no NVIDIA driver (no {DRIVER_COMMAND} on PATH, no {DRIVER_PATH})", CPU_INDEX
    )


def describe(choice: TorchChoice) -> str:
    """What ``make venv`` says about the choice: the build, the reason, and how to choose otherwise."""
    what = {
        "cpu": "the CPU build",
        "cuda": "PyPI's build, the CUDA build with NVIDIA's CUDA libraries",
        "pypi": "PyPI's build",
        "index": f"the build that {choice.index} offers",
    }[choice.build]
    other = "" if choice.overridden else f" ({TORCH_OVERRIDE}=cpu or {TORCH_OVERRIDE}=cuda chooses otherwise)"
    return f"torch: {what}, because {choice.reason}{other}"


def torch_pin(root: Path = ROOT) -> str:
    """The ``torch==X`` line of requirements.txt.

    Raises:
        InstallError: requirements.txt pins no torch.
    """
    for line in (root / "requirements.txt").read_text(encoding="utf-8").splitlines():
        requirement = line.split("#", 1)[0].replace(" ", "")
        if requirement.startswith("torch=="):
            return requirement
    raise InstallError("requirements.txt has no torch==X line: the install cannot tell which torch to take.")


def offered_torch(python: str, pin: str) -> str | None:
    """The torch version pip's own settings (its indexes, find-links, ``PIP_*`` variables) would install for
    ``pin``, from a dry run without dependencies; None when pip finds none."""
    command = [python, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--no-deps", "-q", "--report", "-"]
    done = subprocess.run([*command, pin], cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        return None
    report = json.loads(done.stdout)
    versions = [item["metadata"]["version"] for item in report["install"] if item["metadata"]["name"] == "torch"]
    return versions[0] if versions else None


def unreachable(url: str, timeout: float = 15) -> str | None:
    """None when ``url`` answers (any HTTP status below 500); else what went wrong, in a few words."""
    try:
        urllib.request.urlopen(urllib.request.Request(url, method="HEAD"), timeout=timeout).close()
    except urllib.error.HTTPError as error:
        return None if error.code < 500 else f"HTTP {error.code}"
    except OSError as error:  # URLError is an OSError
        return str(getattr(error, "reason", error))
    return None


def torch_options(
    choice: TorchChoice, offered: Callable[[], str | None], can_reach: Callable[[str], str | None] = unreachable
) -> tuple[list[str], str]:
    """The installer options of the torch step (``--extra-index-url`` for the chosen index, or none) and a note on
    where the build comes from. No index is added when pip's own settings already offer the CPU build (a local
    wheel, a mirror): then the install needs nothing from PyTorch's index.

    Raises:
        InstallError: the index is needed and cannot be reached (the install would take PyPI's CUDA build).
    """
    if choice.index is None:
        return [], "from the installer's own settings"
    if choice.build == "cpu":
        version = offered()
        if version and version.endswith("+cpu"):
            return [], f"pip's own settings already offer it (torch {version})"
    problem = can_reach(choice.index.rstrip("/") + "/torch/") if choice.index.startswith("http") else None
    if problem:
        raise InstallError(
            f"the torch index {choice.index} cannot be reached ({problem}); without it the install would take "
            "PyPI's torch, the CUDA build with NVIDIA's libraries (gigabytes). Check the network, name a mirror of "
            f"that index ({TORCH_OVERRIDE}=https://...), or take PyPI's build anyway ({TORCH_OVERRIDE}=cuda)."
        )
    return ["--extra-index-url", choice.index], f"from {choice.index}"


def installed_torch(python: str) -> str:
    """The torch now in the venv, as the install reports it: ``torch X.Y.Z+cpu (the CPU build)``."""
    script = (
        "import importlib.metadata as m\n"
        "print(m.version('torch'), any((d.metadata['Name'] or '').startswith('nvidia-') for d in m.distributions()))"
    )
    done = subprocess.run([python, "-c", script], capture_output=True, text=True)
    if done.returncode != 0:
        raise InstallError(f"the install left no torch in {python}:\n{done.stderr.strip()[-2000:]}")
    version, nvidia = done.stdout.split()
    if version.endswith("+cpu"):
        return f"torch {version} (the CPU build)"
    return f"torch {version}" + (" (the CUDA build, with NVIDIA's libraries)" if nvidia == "True" else "")


def steps(torch_options: list[str] | None = None, pin: str | None = None) -> list[list[str]]:
    """The install steps, as arguments after ``install``: the same for pip and uv. The first installs the pinned
    torch from the chosen source (``torch_options``); the next finds it installed and keeps it."""
    return [
        [pin or torch_pin(), "-c", "constraints.txt", *(torch_options or [])],
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


def install_with_pip(python: str, install_steps: list[list[str]]) -> None:
    _run([python, "-m", "pip", "install", "-q", "--upgrade", "pip"], "pip install --upgrade pip")
    for step in install_steps:
        _run([python, "-m", "pip", "install", "-q", "--no-compile", *step], "pip install " + " ".join(step))


def install_with_uv(python: str, install_steps: list[list[str]]) -> None:
    _run([python, "-m", "pip", "install", "-q", UV_PIN], f"pip install {UV_PIN}")
    uv = str(Path(python).parent / "uv")
    config = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True, check=True)
    options = ["--python", python, "--index-strategy", "unsafe-best-match"]
    options += parse_pip_config(config.stdout)
    for step in install_steps:
        _run([uv, "pip", "install", "--quiet", *options, *step], "uv pip install " + " ".join(step))


def main(argv: list[str]) -> int:
    if argv == ["--torch-choice"]:
        print(describe(choose_torch(os.environ, platform.system())) + ".")
        return 0
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
    torch = choose_torch(os.environ, platform.system())
    pin = torch_pin()
    options, source = torch_options(torch, lambda: offered_torch(python, pin))
    print(f"{describe(torch)}; {source}.", flush=True)
    install_steps = steps(options, pin)
    used = "pip"
    if choice in {"auto", "uv"}:
        try:
            install_with_uv(python, install_steps)
            used = "uv"
        except InstallError as error:
            if choice == "uv":
                raise
            print(f"uv could not install the course ({error}); installing with pip instead.", flush=True)
    if used == "pip":
        install_with_pip(python, install_steps)
    write_bytecode(python)
    got = installed_torch(python)
    print(f"installed the course's packages with {used} in {time.perf_counter() - started:.0f} s; {got}.")
    if torch.build == "cpu" and "+cpu" not in got:
        print(
            f"The CPU build was chosen, but .venv already had {got}, which satisfies {pin} and was kept: delete .venv "
            "and run make venv again to get the CPU build.",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except InstallError as error:
        print(f"make venv: {error}", file=sys.stderr)
        sys.exit(1)
