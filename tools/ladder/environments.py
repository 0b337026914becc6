"""The releases' environments: ``.venv-ladder/base`` with the course's torch, one environment per release that
sees it through a ``.pth`` file and installs transformers from the release's lock file, and the probe run in it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course_facts.pins import pinned
from tools.ladder.rungs import (
    BASE,
    BISECT_LOCKS,
    LADDER_DIR,
    LOCKS,
    OFFLINE,
    PROBES_FILE,
    ROOT,
    TORCH,
    LadderError,
    Release,
    version_key,
)


def run_command(command: list[str], **keywords) -> subprocess.CompletedProcess:
    keywords.setdefault("cwd", ROOT)
    result = subprocess.run(command, capture_output=True, text=True, **keywords)
    if result.returncode != 0:
        tail = "\n".join((result.stdout + result.stderr).strip().splitlines()[-15:])
        raise LadderError(f"`{' '.join(command)}` failed (exit {result.returncode}):\n{tail}")
    return result


def _site_packages(venv: Path) -> Path:
    found = sorted((venv / "lib").glob("python3*/site-packages"))
    if not found:
        raise LadderError(f"{venv} has no site-packages; delete it and run the install again.")
    return found[0]


def ensure_base() -> Path:
    """``.venv-ladder/base`` with the course's torch, shared by every rung."""
    python = BASE / "bin" / "python"
    marker = BASE / ".torch-installed"
    if marker.is_file():
        return python
    LADDER_DIR.mkdir(exist_ok=True)
    if not python.exists():
        run_command([sys.executable, "-m", "venv", str(BASE)])
    print(f"  base environment: installing {TORCH} (once, shared by every release)", flush=True)
    run_command([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", TORCH])
    marker.write_text(TORCH + "\n")
    return python


def lock_file(item: Release) -> Path:
    return (BISECT_LOCKS if item.between else LOCKS) / f"{item.version}.txt"


def requirements_of(item: Release) -> list[str]:
    if item.version == pinned():  # the course's own versions of every dependency
        return [f"transformers=={item.version}", "accelerate", "-c", "constraints.txt"]  # pip runs in ROOT
    needs_accelerate = version_key(item.version) >= (4, 30)  # the Trainer runs on accelerate from 4.30 on
    return [f"transformers=={item.version}", *(("accelerate",) if needs_accelerate else ()), *item.pins]


def _fingerprint(item: Release) -> str:
    lock = lock_file(item)
    text = lock.read_text() if lock.is_file() else " ".join(requirements_of(item))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def venv_of(item: Release) -> Path:
    return LADDER_DIR / item.version


def installed(item: Release) -> bool:
    marker = venv_of(item) / ".ladder-installed"
    return marker.is_file() and marker.read_text().strip() == _fingerprint(item)


def install(item: Release) -> float | None:
    """Create the release's environment (from its lock file when there is one). Returns the seconds it took, or
    ``None`` when it was already installed."""
    if installed(item):
        return None
    base_python = ensure_base()
    start = time.perf_counter()
    venv = venv_of(item)
    if venv.exists():
        shutil.rmtree(venv)
    run_command([sys.executable, "-m", "venv", str(venv)])
    base_site = run_command(
        [str(base_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
    ).stdout
    (_site_packages(venv) / "_ladder_base.pth").write_text(base_site.strip() + "\n")
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    lock = lock_file(item)
    if lock.is_file():
        run_command([*pip, "--no-deps", "-r", str(lock)])
    else:
        run_command([*pip, *requirements_of(item)])
        frozen = run_command([python, "-m", "pip", "freeze", "--path", str(_site_packages(venv))]).stdout
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text(
            f"# transformers {item.version} on the ladder: written by the first `python -m tools.ladder install`,\n"
            "# from"
            f" {' '.join(requirements_of(item))} (torch comes from .venv-ladder/base)\n{frozen}"
        )
    version = run_command(
        [python, "-c", "import transformers; print(transformers.__version__)"], env=probe_env()
    ).stdout
    if version.strip() != item.version:
        raise LadderError(f"{venv} imports transformers {version.strip()}, not {item.version}.")
    (venv / ".ladder-installed").write_text(_fingerprint(item) + "\n")
    return round(time.perf_counter() - start, 1)


def probe_env() -> dict[str, str]:
    """This process's environment without its venv, plus the course's offline settings: where probes run."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("VIRTUAL_ENV", "PYTHONPATH"))}
    env.update(OFFLINE)
    env["MPLBACKEND"] = "Agg"
    return env


def probe(item: Release, selected: list[str] | None = None) -> dict:
    """Run every probe in the release's environment; return its report (verdicts, versions, inventory)."""
    if not installed(item):
        raise LadderError(
            f"transformers {item.version} is not installed: run `python -m tools.ladder install {item.version}`."
        )
    python = str(venv_of(item) / "bin" / "python")
    LADDER_DIR.joinpath("logs").mkdir(parents=True, exist_ok=True)
    log = LADDER_DIR / "logs" / f"{item.version}.log"
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "report.json"
        start = time.perf_counter()
        with open(log, "w") as handle:
            result = subprocess.run(
                [python, str(PROBES_FILE), str(out), *(selected or [])],
                stdout=handle,
                stderr=subprocess.STDOUT,
                env=probe_env(),
                cwd=folder,
                timeout=900,
            )
        seconds = round(time.perf_counter() - start, 1)
        if result.returncode != 0 or not out.is_file():
            tail = "\n".join(log.read_text().splitlines()[-15:])
            raise LadderError(f"the probes crashed on {item.version} (exit {result.returncode}); log {log}:\n{tail}")
        report = json.loads(out.read_text())
    report["probe_seconds"] = seconds  # the whole process, imports included
    for entry in report["probes"].values():
        entry.pop("seconds", None)
    return report
