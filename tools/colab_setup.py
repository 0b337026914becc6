"""Colab only: install what the Colab runtime lacks for the course, without ever mixing versions in the kernel.

The set-up cell of every notebook runs this file inside the notebook's own kernel (``runpy.run_path``), after
cloning the course. Standard library only: nothing of the course is importable yet.

The way it keeps the kernel whole (issue: a Colab kernel starts with numpy and pandas, and through pandas
pyarrow, already imported; installing other versions under them breaks a later import, e.g.
``cannot import name '_center' from 'numpy._core.umath'``):

1. Keep what Colab has where it meets the course's needs. Colab's torch is never touched; numpy, pandas,
   matplotlib, scikit-learn and tensorboard are kept at Colab's versions when they are at least
   ``KEPT_AT_LEAST`` (the lowest versions ``make test-colab`` runs), so the packages Colab imports at start
   stay as they are in the common case. pip gets them as constraints, so no dependency can move them.
2. Install the course's exact pins for the rest (transformers 5.x, datasets, accelerate, ...), through the
   kernel's own interpreter (``sys.executable -m pip``).
3. If that changed a package this kernel had already imported (Colab's pandas imports pyarrow, which the
   course's datasets needs newer; or a learner imported transformers 4.x before the cell), restart the
   runtime with a message that says to run the cell again. The second run installs nothing and takes a
   moment. Restarting is the only safe answer once a module is in memory: Python cannot unload it.

Run again, it checks the installed versions (a few milliseconds each) and does nothing.
"""

from __future__ import annotations

import importlib
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

COURSE = Path(__file__).resolve().parent.parent
PREFIX = "Colab set-up:"
RESTART_NOTICE = f"{PREFIX} restarting the runtime"
# Colab's own runtime provides the kernel and Jupyter; the test tools are for `make test`, not Colab.
SKIPPED = frozenset(
    {"torch", "jupyterlab", "ipykernel", "nbformat", "nbclient", "nbmake", "pytest", "pytest-xdist", "ruff"}
)
# Kept at Colab's version when at least this one (make test-colab runs exactly these lowest versions).
KEPT_AT_LEAST = {"numpy": "2.0", "pandas": "2.2", "matplotlib": "3.10", "scikit-learn": "1.6", "tensorboard": "2.19"}
# Import names of the course's packages, to compare what a kernel has in memory with what is on disk.
IMPORT_NAMES = {
    "transformers": "transformers",
    "accelerate": "accelerate",
    "datasets": "datasets",
    "evaluate": "evaluate",
    "tokenizers": "tokenizers",
    "safetensors": "safetensors",
    "huggingface-hub": "huggingface_hub",
    "optuna": "optuna",
    "peft": "peft",
    "schedulefree": "schedulefree",
}


def normalise(name: str) -> str:
    """A distribution name as pip compares them: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def release(version: str) -> tuple[int, ...]:
    """The numeric release part of a version: ``"2.0.2"`` and ``"2.0.2rc1"`` give ``(2, 0, 2)``."""
    match = re.match(r"\d+(\.\d+)*", version)
    if not match:
        raise ValueError(f"not a version: {version!r}")
    return tuple(int(part) for part in match.group().split("."))


def read_pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a requirements file, by normalised name (comments and blanks skipped)."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            if not sep:
                raise ValueError(f"{path.name}: expected name==version, got {line!r}")
            pins[normalise(name)] = version.strip()
    return pins


def installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def plan(pins: dict[str, str], installed: dict[str, str | None]) -> tuple[dict[str, str], dict[str, str]]:
    """What to install and what to keep.

    Args:
        pins: the course's pins (normalised name to version).
        installed: the versions installed now (``None`` where missing), for at least the pinned names.

    Returns:
        ``(install, kept)``: pins to install (name to version) and Colab packages kept (name to version).
    """
    install, kept = {}, {}
    for name, pin in pins.items():
        if name in SKIPPED:
            continue
        have = installed.get(name)
        if name in KEPT_AT_LEAST and have is not None and release(have) >= release(KEPT_AT_LEAST[name]):
            kept[name] = have
        elif have != pin:
            install[name] = pin
    return install, kept


def stale_in_memory(pins: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Course packages this kernel imported at another version than the one on disk: name to (memory, disk)."""
    stale = {}
    for name, module_name in IMPORT_NAMES.items():
        module = sys.modules.get(module_name)
        memory = getattr(module, "__version__", None) if module is not None else None
        disk = installed_version(name)
        if isinstance(memory, str) and disk is not None and memory != disk:
            stale[name] = (memory, disk)
    return stale


def all_versions() -> dict[str, str]:
    """Every installed distribution, by normalised name."""
    return {normalise(dist.metadata["Name"]): dist.version for dist in metadata.distributions()}


def module_names(name: str) -> set[str]:
    """The dotted module names a distribution installs (from its RECORD)."""
    names = set()
    for file in metadata.distribution(name).files or ():
        parts = file.parts
        if not parts or parts[0] == ".." or parts[0].endswith((".dist-info", ".data")):
            continue
        stem, suffix = parts[-1].split(".", 1)[0], Path(parts[-1]).suffix
        if suffix not in (".py", ".so", ".pyd"):
            continue
        dotted = [*parts[:-1]] + ([] if stem == "__init__" else [stem])
        names.add(".".join(dotted))
    return names


def imported_and_changed(before: dict[str, str], after: dict[str, str]) -> dict[str, tuple[str, str]]:
    """Distributions pip changed whose modules this kernel has in memory: name to (old, new)."""
    common = before.keys() & after.keys()
    changed = {name: (before[name], after[name]) for name in common if before[name] != after[name]}
    loaded = set(sys.modules)
    return {name: versions for name, versions in sorted(changed.items()) if module_names(name) & loaded}


def pip(arguments: list[str]) -> list[str]:
    """Run ``sys.executable -m pip install ...``; return pip's dependency-conflict notes. Raise on failure."""
    command = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", "--progress-bar"]
    done = subprocess.run([*command, "off", *arguments], capture_output=True, text=True)
    output = (done.stdout + done.stderr).splitlines()
    if done.returncode != 0:
        print("\n".join(output[-30:]))
        raise RuntimeError(
            f"pip could not install the course's packages (exit {done.returncode}; its last lines are above). "
            "Runtime → Disconnect and delete runtime gives a fresh Colab; then run this cell again."
        )
    return [line for line in output if " requires " in line and ("but you have" in line or "not installed" in line)]


def restart_runtime(reason: str) -> None:
    """Print why, then end this kernel: Colab starts a fresh one (it reports the end as a crash or restart)."""
    print(
        f"{RESTART_NOTICE}: {reason}. A kernel cannot unload a module, and mixing two versions of one "
        "fails later (e.g. ImportError in numpy or pyarrow). Colab now says the session crashed or restarted: "
        "that is this restart. When it has reconnected, run this cell again (it installs nothing the second "
        "time), then the rest of the notebook.",
        flush=True,
    )
    time.sleep(2)  # let the message reach the notebook before the kernel ends
    os.kill(os.getpid(), signal.SIGKILL)


def describe(pairs: dict[str, tuple[str | None, str]]) -> str:
    return ", ".join(f"{name} {old or '(new)'} → {new}" for name, (old, new) in pairs.items())


def main(started: float | None = None, cloned_from: str | None = None) -> None:
    """Install what Colab lacks, print what was done and how long it took; restart the runtime if needed."""
    started = time.perf_counter() if started is None else started
    if cloned_from:
        print(f"{PREFIX} cloned {cloned_from} into {COURSE}")
    pins = read_pins(COURSE / "requirements.txt")
    nodeps = read_pins(COURSE / "requirements-nodeps.txt")
    installed = {name: installed_version(name) for name in [*pins, *nodeps, "torch"]}
    if installed["torch"] is None:
        raise RuntimeError("This runtime has no torch. Pick a standard Colab runtime (Runtime → Change runtime type).")
    install, kept = plan(pins, installed)
    install_nodeps, _ = plan(nodeps, installed)
    kept = {"torch": installed["torch"], **kept}
    kept_text = ", ".join(f"{name} {version}" for name, version in kept.items())
    if not install and not install_nodeps:
        stale = stale_in_memory(pins)
        if stale:
            restart_runtime(f"this kernel imported {describe(stale)} on disk before this cell ran")
        print(f"{PREFIX} nothing to install; Colab's {kept_text} kept ({time.perf_counter() - started:.2f} s)")
        return
    print(f"{PREFIX} keeping Colab's {kept_text}")
    wanted = {**install, **install_nodeps}
    print(f"{PREFIX} installing {describe({name: (installed[name], pin) for name, pin in wanted.items()})}")
    before = all_versions()
    notes = []
    with tempfile.NamedTemporaryFile("w", suffix=".txt", prefix="course-keep-") as constraints:
        constraints.write("".join(f"{name}=={version}\n" for name, version in kept.items()))
        constraints.flush()
        if install:
            notes += pip(["-c", constraints.name, *(f"{name}=={pin}" for name, pin in install.items())])
        if install_nodeps:
            notes += pip(["--no-deps", *(f"{name}=={pin}" for name, pin in install_nodeps.items())])
    importlib.invalidate_caches()
    after = all_versions()
    moved = {name: (before.get(name), after[name]) for name in sorted(after) if before.get(name) != after[name]}
    print(f"{PREFIX} pip changed {len(moved)} packages: {describe(moved)}")
    for note in notes:
        print(f"{PREFIX} pip notes (a Colab package the course does not use): {note}")
    print(f"{PREFIX} done in {time.perf_counter() - started:.1f} s")
    changed = {**imported_and_changed(before, after), **stale_in_memory(pins)}
    if changed:
        restart_runtime(f"this kernel had already imported {describe(changed)}")


if __name__ in ("__main__", "<run_path>"):  # the set-up cell runs it with runpy.run_path and two globals
    namespace = globals()
    main(namespace.get("SETUP_STARTED"), namespace.get("CLONED_FROM"))
