"""The release ladder: every claim of the course run on a series of transformers releases (``make ladder``).

The lessons can only say "holds on 5.24"; the ladder says *when* a claim changed. It installs each release of
:data:`RELEASES` in its own virtual environment next to the course's (``.venv-ladder/<version>``, gitignored),
runs the probes of ``tools/ladder/probes.py`` there (one small offline run per claim) and writes:

- ``docs/ladder/results.json``: release x claim -> holds / does not hold / cannot run, each with its evidence line,
  the package versions of each environment, the measured install and probe times, and an inventory of each
  release (``TrainingArguments`` fields, ``Trainer`` methods, callback events) that ``helpers.check_old_code`` reads;
- ``docs/ladder.md``: the book's "when did it change" page, generated from the results file (never typed).

Sharing: torch (the 2.13.0 CPU wheel on this disk) is installed once, in ``.venv-ladder/base``; each release's
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
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LADDER_DIR = Path(os.environ.get("LADDER_VENVS", ROOT / ".venv-ladder")).resolve()  # where the environments go
BASE = LADDER_DIR / "base"
LOCKS = ROOT / "tools" / "ladder" / "locks"
PROBES_FILE = ROOT / "tools" / "ladder" / "probes.py"
RESULTS = ROOT / "docs" / "ladder" / "results.json"
PAGE = ROOT / "docs" / "ladder.md"
REGISTRY = ROOT / "lessons.toml"
TORCH = "torch==2.13.0"
INDEX = "https://pypi.org/simple/{name}/"  # the JSON simple API (PEP 691) of the index pip uses
BISECT_LOCKS = LOCKS / "bisect"
COURSE_PIN = "5.24.0"
MARKS = {"holds": "✔", "does not hold": "✘", "cannot run": "○"}
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "PYTHONHASHSEED": "0",
    "CUDA_VISIBLE_DEVICES": "",
}


@dataclass(frozen=True)
class Release:
    """One rung: the version, why it is on the ladder, and the packages of its era pinned next to it."""

    version: str
    why: str
    pins: tuple[str, ...] = ()
    between: tuple[str, str] | None = None  # for a release the bisection runs: the two rungs around it


RELEASES: tuple[Release, ...] = (
    Release(
        "4.23.1",
        "the oldest release that installs on Python 3.11 with torch 2.13: tokenizers 0.13.2 is the oldest "
        "tokenizers with a cp311 wheel, and 4.23 is the first transformers that accepts it (4.22 needs <0.13)",
        ("numpy<2",),
    ),
    Release(
        "4.33.3",
        "a 2023 release between the floor and 4.40 (the Trainer on accelerate)",
        ("numpy<2", "accelerate<0.24"),
    ),
    Release("4.40.2", "the last release before `eval_strategy` arrived", ("numpy<2", "accelerate<0.31")),
    Release(
        "4.41.2",
        "the last 4.41 release: `eval_strategy` is there and `evaluation_strategy` warns",
        ("numpy<2", "accelerate<0.32"),
    ),
    Release("4.45.2", "the last release before `num_items_in_batch`", ("numpy<2", "accelerate<1.1")),
    Release(
        "4.46.3",
        "the last 4.46 release: `num_items_in_batch`, `processing_class` and `compute_loss_func` are there",
        ("accelerate<1.2",),
    ),
    Release("4.50.3", "a 2025 release between 4.46 and the last 4.x", ("accelerate<1.6",)),
    Release("4.57.6", "the last 4.x release", ()),
    Release("5.0.0", "the first 5.x release", ()),
    Release("5.14.1", "the last release before 5.15", ()),
    Release("5.15.0", "where a downstream project's bisect put the removal of `warmup_ratio`", ()),
    Release(COURSE_PIN, "the course's pin", ()),
)


class LadderError(RuntimeError):
    """Something the ladder needs is missing or failed; the message says what to do."""


# ---------------------------------------------------------------------------------------------------------------
# Releases and the probe registry
# ---------------------------------------------------------------------------------------------------------------
def release(version: str) -> Release:
    for item in RELEASES:
        if item.version == version:
            return item
    raise LadderError(f"{version} is not on the ladder; choose one of {', '.join(r.version for r in RELEASES)}.")


def select(spec: str) -> list[Release]:
    """``all``, ``ends`` (oldest and newest) or a comma-separated list of versions."""
    if spec == "all":
        return list(RELEASES)
    if spec == "ends":
        return [RELEASES[0], RELEASES[-1]]
    return [release(version.strip()) for version in spec.split(",") if version.strip()]


def load_probes():
    """The probe module, loaded by path (it imports nothing from transformers until a probe runs)."""
    spec = importlib.util.spec_from_file_location("ladder_probes", PROBES_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("ladder_probes", module)
    spec.loader.exec_module(module)
    return module


def probe_table() -> dict[str, dict[str, str]]:
    """``{probe id: {claim, source, where}}`` in registry order."""
    return {p.id: {"claim": p.claim, "source": p.source, "where": p.where} for p in load_probes().PROBES}


# ---------------------------------------------------------------------------------------------------------------
# Environments
# ---------------------------------------------------------------------------------------------------------------
def _run(command: list[str], **keywords) -> subprocess.CompletedProcess:
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
    """``.venv-ladder/base`` with torch 2.13.0, shared by every rung."""
    python = BASE / "bin" / "python"
    marker = BASE / ".torch-installed"
    if marker.is_file():
        return python
    LADDER_DIR.mkdir(exist_ok=True)
    if not python.exists():
        _run([sys.executable, "-m", "venv", str(BASE)])
    print(f"  base environment: installing {TORCH} (once, shared by every release)", flush=True)
    _run([str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", TORCH])
    marker.write_text(TORCH + "\n")
    return python


def lock_file(item: Release) -> Path:
    return (BISECT_LOCKS if item.between else LOCKS) / f"{item.version}.txt"


def _requirements(item: Release) -> list[str]:
    if item.version == COURSE_PIN:  # the course's own versions of every dependency
        return [f"transformers=={item.version}", "accelerate", "-c", "constraints.txt"]  # pip runs in ROOT
    needs_accelerate = _key(item.version) >= (4, 30)  # the Trainer runs on accelerate from 4.30 on
    return [f"transformers=={item.version}", *(("accelerate",) if needs_accelerate else ()), *item.pins]


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split(".") if part.isdigit())


def _fingerprint(item: Release) -> str:
    lock = lock_file(item)
    text = lock.read_text() if lock.is_file() else " ".join(_requirements(item))
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
    _run([sys.executable, "-m", "venv", str(venv)])
    base_site = _run([str(base_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout
    (_site_packages(venv) / "_ladder_base.pth").write_text(base_site.strip() + "\n")
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    lock = lock_file(item)
    if lock.is_file():
        _run([*pip, "--no-deps", "-r", str(lock)])
    else:
        _run([*pip, *_requirements(item)])
        frozen = _run([python, "-m", "pip", "freeze", "--path", str(_site_packages(venv))]).stdout
        lock.parent.mkdir(parents=True, exist_ok=True)
        lock.write_text(
            f"# transformers {item.version} on the ladder: written by the first `tools/ladder.py install`, from\n"
            f"# {' '.join(_requirements(item))} (torch comes from .venv-ladder/base)\n{frozen}"
        )
    version = _run([python, "-c", "import transformers; print(transformers.__version__)"], env=_probe_env()).stdout
    if version.strip() != item.version:
        raise LadderError(f"{venv} imports transformers {version.strip()}, not {item.version}.")
    (venv / ".ladder-installed").write_text(_fingerprint(item) + "\n")
    return round(time.perf_counter() - start, 1)


def _probe_env() -> dict[str, str]:
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
                env=_probe_env(),
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


# ---------------------------------------------------------------------------------------------------------------
# The results file
# ---------------------------------------------------------------------------------------------------------------
def read_results(path: Path = RESULTS) -> dict:
    if not path.is_file():
        return {"releases": [], "probes": {}, "results": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def merge(results: dict, version: str, report: dict, install_seconds: float | None) -> dict:
    """Put one release's report into the results, keep the releases in ladder order, drop stale ones."""
    entry = results.get("results", {}).get(version, {})
    entry.update(
        versions=report["versions"],
        probe_seconds=report["probe_seconds"],
        probes={key: report["probes"][key] for key in sorted(report["probes"])},
        inventory=report["inventory"],
        pins=list(_requirements(release(version))),
    )
    if install_seconds is not None:
        entry["install_seconds"] = install_seconds
    every = {**results.get("results", {}), version: entry}
    order = [item.version for item in RELEASES]
    kept = {key: results[key] for key in ("changes", "bisection", "newest", "era") if key in results}
    return {
        "about": "Written by tools/ladder.py (make ladder); docs/ladder.md is generated from it. Do not edit.",
        "machine": f"{os.cpu_count()}-core CPU",
        "releases": [v for v in order if v in every],
        "probes": probe_table(),
        "results": {v: every[v] for v in order if v in every},
        **kept,
    }


def write_results(results: dict, path: Path = RESULTS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")


def problems(results: dict, table: dict | None = None) -> list[str]:
    """Where the results file disagrees with the ladder and the probe list (empty when it agrees)."""
    table = probe_table() if table is None else table
    found = []
    expected = [item.version for item in RELEASES]
    if results.get("releases") != expected:
        found.append(f"releases in the results {results.get('releases')} differ from the ladder {expected}")
    if results.get("probes") != table:
        stale = sorted(set(results.get("probes", {})) ^ set(table)) or ["claim texts"]
        found.append(f"the probe list in the results differs from tools/ladder/probes.py: {', '.join(stale)}")
    for version in expected:
        entry = results.get("results", {}).get(version)
        if entry is None:
            found.append(f"{version}: no results")
            continue
        missing, extra = set(table) - set(entry["probes"]), set(entry["probes"]) - set(table)
        if missing:
            found.append(f"{version}: no result for {', '.join(sorted(missing))}")
        if extra:
            found.append(f"{version}: results for probes that no longer exist: {', '.join(sorted(extra))}")
        if entry.get("versions", {}).get("transformers") != version:
            found.append(f"{version}: the results were measured on transformers {entry.get('versions')}")
        for key, value in entry["probes"].items():
            if value.get("verdict") not in MARKS or not value.get("evidence"):
                found.append(f"{version}: {key} has no valid verdict and evidence")
    return found


def change_problems(results: dict) -> list[str]:
    """Where the bisected changes disagree with the rungs or are not between two adjacent releases (empty when
    they agree): every change of verdict between two rungs is a chain of changes from the older rung's verdict to
    the newer one's, each between two releases with no runnable final release between them."""
    found_changes = results.get("changes")
    if found_changes is None:
        return ["no bisected changes in the results: run `make ladder BISECT=1`"]
    bisection = results.get("bisection", {})
    finals = bisection.get("finals", [])
    ran = bisection.get("releases", {})
    position = {version: index for index, version in enumerate(finals)}
    found = []

    def verdict_at(version: str, key: str) -> str | None:
        if version in results["results"]:
            return results["results"][version]["probes"][key]["verdict"]
        return ran.get(version, {}).get("probes", {}).get(key, {}).get("verdict")

    for change in found_changes:
        key, old, new = change["probe"], change["last_old"], change["first_new"]
        if key not in results["probes"]:
            found.append(f"a change of {key}, which is not a probe")
            continue
        if old not in position or new not in position or position[old] >= position[new]:
            found.append(f"{key}: {old} -> {new} is not a pair of final releases in version order")
            continue
        between = finals[position[old] + 1 : position[new]]
        runnable = [version for version in between if "not_run" not in ran.get(version, {})]
        if runnable:
            found.append(f"{key}: {old} and {new} are not adjacent ({', '.join(runnable)} between them)")
        if verdict_at(old, key) != change["old"] or verdict_at(new, key) != change["new"]:
            found.append(
                f"{key}: the recorded verdicts of {old} and {new} are not {change['old']!r}, {change['new']!r}"
            )
    rungs = results["releases"]
    for older, newer in zip(rungs, rungs[1:]):
        for key in results["probes"]:
            chain = [c for c in found_changes if c["probe"] == key and c.get("rungs") == [older, newer]]
            chain.sort(key=lambda c: position.get(c["first_new"], 0))
            start, end = verdict_at(older, key), verdict_at(newer, key)
            steps = [start, *[c["new"] for c in chain]]
            if start == end and not chain:
                continue
            linked = all(c["old"] == step for c, step in zip(chain, steps))
            if not chain or not linked or steps[-1] != end:
                found.append(f"{key}: the changes between {older} and {newer} do not lead from {start!r} to {end!r}")
    return found


def changes(results: dict, probe_id: str) -> list[tuple[str, str, str, str]]:
    """Every change of verdict along the ladder: ``(previous release, its verdict, release, new verdict)``.

    ``cannot run`` counts as a verdict of its own, so "the argument appeared" and "the argument went" show."""
    found = []
    previous = None
    for version in results["releases"]:
        verdict = results["results"][version]["probes"][probe_id]["verdict"]
        if previous is not None and verdict != previous[1]:
            found.append((previous[0], previous[1], version, verdict))
        previous = (version, verdict)
    return found


# ---------------------------------------------------------------------------------------------------------------
# The package index, and the newest release
# ---------------------------------------------------------------------------------------------------------------
_FINAL = re.compile(r"\d+(?:\.\d+)*")


def fetch_index(name: str) -> dict:
    """The index's JSON page of one package (PEP 691): its files, with upload times and yanked marks."""
    url = INDEX.format(name=name)
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.load(response)
    except (OSError, ValueError) as error:
        raise LadderError(f"could not read {url} ({error}); this command needs the package index (PyPI).") from error


def _file_version(filename: str) -> str:
    """The version in a wheel or sdist file name (``transformers-4.46.0-py3-none-any.whl`` -> ``4.46.0``)."""
    if filename.endswith(".whl"):
        return filename.split("-")[1]
    for suffix in (".tar.gz", ".zip", ".tar.bz2"):
        if filename.endswith(suffix):
            return filename[: -len(suffix)].rsplit("-", 1)[1]
    return ""


def final_releases(index: dict) -> list[dict]:
    """Every final release with a file in the index page, in version order: ``{version, uploaded, yanked}``.

    ``uploaded`` is the earliest upload time of its files; ``yanked`` is the reason (or ``"yanked"``) when every
    file of the release is yanked, else ``""``. Pre-releases, dev and post releases are left out."""
    found: dict[str, dict] = {}
    for entry in index.get("files", []):
        version = _file_version(entry["filename"])
        if not _FINAL.fullmatch(version):
            continue
        item = found.setdefault(version, {"version": version, "uploaded": entry.get("upload-time", ""), "files": []})
        item["uploaded"] = min(item["uploaded"], entry.get("upload-time", "")) or item["uploaded"]
        yanked = entry.get("yanked", False)
        item["files"].append((yanked.strip() or "yanked") if isinstance(yanked, str) else ("yanked" if yanked else ""))
    releases = []
    for version in sorted(found, key=_key):
        marks = found[version]["files"]
        releases.append(
            {"version": version, "uploaded": found[version]["uploaded"], "yanked": marks[0] if all(marks) else ""}
        )
    return releases


def era_cap(uploaded: str, releases: list[dict]) -> str | None:
    """The newest release of another package (``releases`` from :func:`final_releases`) published before
    ``uploaded``, not yanked; ``None`` when there is none."""
    before = [item["version"] for item in releases if item["uploaded"] < uploaded and not item["yanked"]]
    return before[-1] if before else None


def newest_published(index_output: str) -> str:
    """The newest version in ``pip index versions NAME``'s output (``transformers (5.25.0)``)."""
    match = re.search(r"^\S+ \(([^)]+)\)\s*$", index_output, re.MULTILINE)
    if not match:
        raise LadderError(f"`pip index versions` printed no version line:\n{index_output.strip()[-500:]}")
    return match.group(1)


def resolver_reason(pip_output: str) -> str:
    """What stopped pip, in one line: its own words ("No matching distribution found for ...", or the conflict it
    names), and the newest version the index serves of the missing requirement where pip lists them."""
    lines = [re.sub(r"^ERROR: ", "", line.strip()) for line in pip_output.splitlines()]
    served: list[str] = []
    for line in lines:
        match = re.match(r"Could not find a version that satisfies the requirement \S+.*\(from versions: (.*)\)", line)
        if match:
            served = [v.strip() for v in match.group(1).split(",") if _FINAL.fullmatch(v.strip())]
    for line in lines:
        match = re.match(r"No matching distribution found for (\S+)", line)
        if match:
            name = re.split(r"[<>=!~\[; ]", match.group(1), maxsplit=1)[0]
            newest = f"the index serves {name} up to {served[-1]}" if served else f"the index serves no {name}"
            return f'pip says "{line}"; {newest}'
    picked = [line for line in lines if "conflict" in line.lower() or line.startswith("Cannot install")]
    picked = picked or [line for line in lines if line and not line.startswith(("WARNING", "Ignored the following"))]
    if not picked:
        raise LadderError(f"pip failed without an error line:\n{pip_output.strip()[-500:]}")
    return "pip says " + "; ".join(f'"{line}"' for line in picked[:3])


def latest_summary(published: str, tested: str, pinned: str, reason: str) -> str:
    """The lines `make test-latest` prints about the release it tested."""
    lines = [f"transformers: newest published {published}; installed and tested {tested}; the course pins {pinned}."]
    if _key(tested) < _key(published):
        lines.append(f"{published} could not be installed here: {reason or 'pip gave no reason'}.")
    elif published == tested:
        lines.append(f"{tested} is the newest published release.")
    return "\n".join(lines)


def command_newest(python: str, extra: list[str], tries: int = 6) -> dict:
    """Ask pip (``python -m pip``) whether the newest published transformers installs with the ``extra``
    requirements; walk down the final releases (at most ``tries``) until one does. Nothing is installed
    (``--dry-run``). Returns ``{published, installable, reason, checked}``."""
    listing = _run([python, "-m", "pip", "index", "versions", "transformers"]).stdout
    published = newest_published(listing)
    finals = [item["version"] for item in final_releases(fetch_index("transformers")) if not item["yanked"]]
    candidates = [version for version in finals if _key(version) <= _key(published)][::-1][:tries]
    reason, installable = "", None
    for version in candidates:
        trial = subprocess.run(
            [
                python,
                "-m",
                "pip",
                "install",
                "--dry-run",
                "--ignore-installed",
                "-q",
                f"transformers=={version}",
                *extra,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
        )
        if trial.returncode == 0:
            installable = version
            break
        if not reason:
            reason = resolver_reason(trial.stdout + trial.stderr)
    return {
        "published": published,
        "installable": installable,
        "reason": reason,
        "checked": time.strftime("%Y-%m-%d", time.gmtime()),
    }


# ---------------------------------------------------------------------------------------------------------------
# Bisection
# ---------------------------------------------------------------------------------------------------------------
def bisect_changes(
    rungs: list[str],
    verdicts: dict[str, dict[str, str]],
    finals: list[str],
    measure: Callable[[str, list[str]], dict[str, str] | None],
) -> list[dict]:
    """Every change of verdict between two adjacent rungs, narrowed to two adjacent releases of ``finals``.

    ``verdicts`` holds the rungs' verdicts (``{version: {probe: verdict}}``); ``measure(version, probes)``
    returns a release's verdicts for those probes, or ``None`` when the release cannot be installed or run (it
    is then skipped). A release measured for one probe serves every probe of that interval. Returns one dict
    per change: ``probe, last_old, first_new, old, new, rungs, tested`` (``[version, verdict]`` for every
    release of the interval that ran) and ``skipped`` (releases between the two that could not run)."""
    order = {version: index for index, version in enumerate(finals)}
    missing = [version for version in rungs if version not in order]
    if missing:
        raise LadderError(f"the index does not list the rungs {', '.join(missing)}")
    found = []
    for older, newer in zip(rungs, rungs[1:]):
        differ = [key for key in verdicts[older] if verdicts[older][key] != verdicts[newer].get(key)]
        if not differ:
            continue
        known: dict[str, dict[str, str]] = {older: verdicts[older], newer: verdicts[newer]}
        broken: set[str] = set()
        work = [(key, older, newer) for key in differ]
        interval: list[tuple] = []
        while work:
            key, low, high = work.pop(0)
            inside = [v for v in finals[order[low] + 1 : order[high]] if v not in broken]
            if not inside:
                interval.append((key, low, high, finals[order[low] + 1 : order[high]]))
                continue
            free = [v for v in inside if v in known]  # a release already run for another probe costs nothing
            middle = min(free or inside, key=lambda v: abs(inside.index(v) - (len(inside) - 1) / 2))
            if middle not in known:
                measured = measure(middle, differ)
                if measured is None:
                    broken.add(middle)
                    work.insert(0, (key, low, high))
                    continue
                known[middle] = measured
            verdict = known[middle][key]
            if verdict == known[low][key]:
                work.insert(0, (key, middle, high))
            elif verdict == known[high][key]:
                work.insert(0, (key, low, middle))
            else:  # a third verdict in between: two changes
                work[0:0] = [(key, low, middle), (key, middle, high)]
        found += [
            _change(key, low, high, known, skipped, (older, newer), order) for key, low, high, skipped in interval
        ]
    ranks = {key: index for index, key in enumerate(next(iter(verdicts.values())))}
    return sorted(found, key=lambda change: (order[change["first_new"]], ranks.get(change["probe"], 0)))


def _change(key, low, high, known, skipped, rungs, order) -> dict:
    tested = sorted((v for v in known if order[rungs[0]] <= order[v] <= order[rungs[1]]), key=order.get)
    return {
        "probe": key,
        "last_old": low,
        "first_new": high,
        "old": known[low][key],
        "new": known[high][key],
        "rungs": list(rungs),
        "tested": [[version, known[version][key]] for version in tested],
        "skipped": skipped,
    }


def era_release(version: str, older: Release, newer: Release, uploaded: str, accelerate: list[dict]) -> Release:
    """A release between two rungs, with its era's packages (see the module's docstring)."""
    pins = [pin for pin in older.pins if not pin.startswith("accelerate")]
    if _key(version) >= (4, 30):
        cap = era_cap(uploaded, accelerate)
        if cap is None:
            raise LadderError(f"no accelerate release is older than transformers {version}")
        pins.append(f"accelerate<={cap}")
        if _key(cap) < (0, 23):  # accelerate before 0.23 imports pkg_resources, which setuptools 81 removed
            pins.append("setuptools<81")
    return Release(
        version, f"bisection between {older.version} and {newer.version}", tuple(pins), (older.version, newer.version)
    )


def command_bisect(fresh: bool, keep_venvs: bool) -> int:
    results = read_results()
    found = problems(results)
    if found:
        raise LadderError("the rungs' results are incomplete; run `make ladder` first:\n  " + "\n  ".join(found))
    start = time.perf_counter()
    index = final_releases(fetch_index("transformers"))
    accelerate = final_releases(fetch_index("accelerate"))
    uploaded = {item["version"]: item["uploaded"] for item in index}
    finals = [item["version"] for item in index]
    store = {} if fresh else dict(results.get("bisection", {}).get("releases", {}))
    counters = {"installed": 0}

    def measure(version: str, probes: list[str]) -> dict[str, str] | None:
        older = max((r for r in RELEASES if _key(r.version) < _key(version)), key=lambda r: _key(r.version))
        newer = min((r for r in RELEASES if _key(r.version) > _key(version)), key=lambda r: _key(r.version))
        item = era_release(version, older, newer, uploaded[version], accelerate)
        cached = store.get(version)
        if cached and cached.get("pins") == _requirements(item):  # the same packages: the result stands
            if "not_run" in cached:
                return None
            if set(probes) <= set(cached["probes"]):
                return {key: cached["probes"][key]["verdict"] for key in probes}
        print(f"== transformers {version} ({item.why}; {', '.join(_requirements(item)[1:]) or 'no pins'})", flush=True)
        entry = {"pins": _requirements(item), "between": list(item.between)}
        try:
            entry["install_seconds"] = install(item)
            counters["installed"] += 1
            report = probe(item, probes)
        except LadderError as error:
            entry["not_run"] = _line_of(error)
            print(f"  skipped: {entry['not_run']}", flush=True)
        else:
            entry.update(versions=report["versions"], probe_seconds=report["probe_seconds"])
            entry["probes"] = {key: report["probes"][key] for key in sorted(report["probes"])}
            print(
                f"  {entry['install_seconds']} s install, {report['probe_seconds']} s for {len(probes)} probes",
                flush=True,
            )
        finally:
            if not keep_venvs and venv_of(item).exists():
                shutil.rmtree(venv_of(item))
        store[version] = entry
        _write_bisection(results, store, finals, index, None, None)
        return None if "not_run" in entry else {key: entry["probes"][key]["verdict"] for key in probes}

    rungs = [item.version for item in RELEASES]
    verdicts = {v: {key: value["verdict"] for key, value in results["results"][v]["probes"].items()} for v in rungs}
    changes_found = bisect_changes(rungs, verdicts, finals, measure)
    seconds = round(time.perf_counter() - start, 1)
    run_note = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "seconds": seconds,
        "releases_installed": counters["installed"],
    }
    _write_bisection(results, store, finals, index, changes_found, run_note)
    results = read_results()
    results["newest"] = command_newest(sys.executable, [])
    write_results(results)
    write_page(results)
    print(
        f"bisect: {len(changes_found)} changes; {counters['installed']} releases installed in this run, {seconds} s; "
        f"wrote {RESULTS.relative_to(ROOT)} and {PAGE.relative_to(ROOT)}"
    )
    return 0


def _line_of(error: Exception) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    useful = [line for line in lines if line.startswith("ERROR") or "Error" in line]
    return " / ".join((useful or lines)[-2:])[:400]


def _write_bisection(results, store, finals, index, changes_found, run_note) -> None:
    first, last = RELEASES[0].version, RELEASES[-1].version
    span = finals[finals.index(first) : finals.index(last) + 1]
    bisection = results.setdefault("bisection", {})
    bisection.update(
        about="Written by `python -m tools.ladder bisect` (make ladder BISECT=1): the final releases between two "
        "rungs whose verdicts differ, each run in its own environment with its era's packages.",
        index=INDEX.format(name="transformers"),
        finals=span,
        yanked={item["version"]: item["yanked"] for item in index if item["yanked"] and item["version"] in span},
        releases={v: store[v] for v in sorted(store, key=_key)},
    )
    if run_note is not None:
        bisection["runs"] = [*bisection.get("runs", []), run_note]
    if changes_found is not None:
        results["changes"] = changes_found
    write_results(results)


# ---------------------------------------------------------------------------------------------------------------
# The seeds' era: 4.8.2, read from the wheels (they do not install on Python 3.11)
# ---------------------------------------------------------------------------------------------------------------
ERA = "4.8.2"
WHEELS = LADDER_DIR / "wheels"


@dataclass(frozen=True)
class SourceClaim:
    """A claim read from a release's source, not run: it holds when ``pattern`` is found (or, with
    ``holds_if_found=False``, when it is not) in ``file`` of the release's wheel."""

    id: str
    claim: str
    where: str
    file: str
    pattern: str
    holds_if_found: bool = True


SOURCE_CLAIMS: tuple[SourceClaim, ...] = (
    SourceClaim(
        "metrics_only_at_on_evaluate",
        "`metrics` is passed only to `on_evaluate`: the callbacks have no `on_predict` event.",
        "05 §3",
        "transformers/trainer_callback.py",
        r"def on_predict\(",
        holds_if_found=False,
    ),
    SourceClaim(
        "load_best_model_saves_at_each_evaluation",
        "With `load_best_model_at_end=True`, `DefaultFlowCallback` saves at every evaluation (and not on the "
        "`save_steps` schedule).",
        "02 §7; 11 §7",
        "transformers/trainer_callback.py",
        r"if args\.load_best_model_at_end:\s*\n\s*control\.should_save = True",
    ),
)

# Quoted by the lessons from 4.8.2's wheel: {key: (file, a regular expression for the first line, lines)}.
EXCERPTS: dict[str, tuple[str, str, int]] = {
    "data_collator_doc": ("transformers/trainer.py", r"^\s+data_collator \(:obj:`DataCollator`", 4),
    "data_collator_type": ("transformers/data/data_collator.py", r"^DataCollator = NewType", 1),
    "eval_prediction": ("transformers/trainer_utils.py", r"^class EvalPrediction\(NamedTuple\)", 1),
    "compute_metrics_call": ("transformers/trainer.py", r"metrics = self\.compute_metrics\(EvalPrediction\(", 1),
    "max_steps_doc": ("transformers/training_args.py", r"^\s+max_steps \(:obj:`int`", 3),
    "prediction_loss_only_doc": ("transformers/training_args.py", r"^\s+prediction_loss_only \(:obj:`bool`", 2),
    "ignore_data_skip_doc": ("transformers/training_args.py", r"^\s+ignore_data_skip \(:obj:`bool`", 4),
    "metrics_doc": ("transformers/trainer_callback.py", r"^\s+metrics \(:obj:`Dict\[str, float\]`\):", 4),
    "on_evaluate_handler": (
        "transformers/trainer_callback.py",
        r"^\s+def on_evaluate\(self, args: TrainingArguments.*metrics\):",
        2,
    ),
    "flow_on_step_end_evaluate": (
        "transformers/trainer_callback.py",
        r"^\s+if args\.evaluation_strategy == IntervalStrategy\.STEPS and",
        4,
    ),
    "flow_on_step_end_save": ("transformers/trainer_callback.py", r"^\s+not args\.load_best_model_at_end$", 4),
    "logging_first_step_doc": ("transformers/training_args.py", r"^\s+logging_first_step \(:obj:`bool`", 2),
    "logging_first_step_flow": (
        "transformers/trainer_callback.py",
        r"^\s+if state\.global_step == 1 and args\.logging_first_step:",
        2,
    ),
    "skip_memory_metrics_doc": ("transformers/training_args.py", r"^\s+skip_memory_metrics \(:obj:`bool`", 1),
}


def wheel(version: str) -> Path:
    """The release's wheel under ``.venv-ladder/wheels`` (downloaded once, never installed)."""
    found = sorted(WHEELS.glob(f"transformers-{version}-*.whl"))
    if found:
        return found[0]
    WHEELS.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(WHEELS), f"transformers=={version}"])
    found = sorted(WHEELS.glob(f"transformers-{version}-*.whl"))
    if not found:
        raise LadderError(f"pip downloaded no wheel of transformers {version}")
    return found[0]


def wheel_text(path: Path, name: str) -> str:
    import zipfile

    with zipfile.ZipFile(path) as archive:
        try:
            return archive.read(name).decode("utf-8")
        except KeyError as error:
            raise LadderError(f"{path.name} has no {name}") from error


def source_verdicts(read: Callable[[str], str], claims=SOURCE_CLAIMS) -> dict[str, dict[str, str]]:
    """``{claim id: {verdict, evidence}}`` from a release's files (``read(name)`` returns a file's text)."""
    verdicts = {}
    for claim in claims:
        text = read(claim.file)
        match = re.search(claim.pattern, text)
        holds = bool(match) == claim.holds_if_found
        where = f"{claim.file}:{text[: match.start()].count(chr(10)) + 1}" if match else claim.file
        evidence = f"{'found' if match else 'not found'}: /{claim.pattern}/ in {where}"
        verdicts[claim.id] = {"verdict": "holds" if holds else "does not hold", "evidence": evidence}
    return verdicts


def excerpt(text: str, pattern: str, lines: int) -> tuple[int, str]:
    """The first line that matches ``pattern`` (its number, from 1) and the ``lines`` lines from it."""
    rows = text.splitlines()
    for number, row in enumerate(rows, start=1):
        if re.search(pattern, row):
            return number, "\n".join(rows[number - 1 : number - 1 + lines])
    raise LadderError(f"no line matches /{pattern}/")


def command_era() -> int:
    """Quote 4.8.2's source for the lessons, and bisect the source claims between 4.8.2 and the oldest rung."""
    start = time.perf_counter()
    results = read_results()
    era_wheel = wheel(ERA)
    excerpts = {}
    for key, (name, pattern, lines) in EXCERPTS.items():
        number, text = excerpt(wheel_text(era_wheel, name), pattern, lines)
        excerpts[key] = {"file": name, "line": number, "text": text}
    finals = [item["version"] for item in final_releases(fetch_index("transformers"))]
    oldest = RELEASES[0].version
    read_at: dict[str, dict[str, dict[str, str]]] = {}

    def measure(version: str, probes: list[str]) -> dict[str, str] | None:
        try:
            path = wheel(version)
        except LadderError as error:
            read_at[version] = {"not_run": _line_of(error)}
            return None
        read_at[version] = source_verdicts(lambda name: wheel_text(path, name))
        return {key: read_at[version][key]["verdict"] for key in probes}

    for version in (ERA, oldest):
        measure(version, [])
    verdicts = {v: {key: value["verdict"] for key, value in read_at[v].items()} for v in (ERA, oldest)}
    found = bisect_changes([ERA, oldest], verdicts, finals, measure)
    results["era"] = {
        "about": f"Written by `python -m tools.ladder era`: {ERA}'s source, read from its wheel (it does not "
        "install on Python 3.11), quoted by the lessons; and claims read from the source of the releases between "
        f"{ERA} and {oldest}, bisected. Read, not run.",
        "release": ERA,
        "wheel": era_wheel.name,
        "excerpts": excerpts,
        "claims": {
            c.id: {"claim": c.claim, "where": c.where, "file": c.file, "pattern": c.pattern} for c in SOURCE_CLAIMS
        },
        "read": {v: read_at[v] for v in sorted(read_at, key=_key)},
        "changes": found,
        "seconds": round(time.perf_counter() - start, 1),
    }
    write_results(results)
    if not problems(results) and not change_problems(results):
        write_page(results)
    for change in found:
        print(f"{change['probe']}: {change['old']} on {change['last_old']}, {change['new']} from {change['first_new']}")
    print(f"era: {len(excerpts)} excerpts of {ERA}, {len(found)} changes, {results['era']['seconds']} s")
    return 0


# ---------------------------------------------------------------------------------------------------------------
# The page
# ---------------------------------------------------------------------------------------------------------------
def render(results: dict) -> str:
    """docs/ladder.md from the results file: each sentence first, with its lesson and the release where it changed
    (bisected), then the full grid, the evidence, the bisection and the releases."""
    releases, table = results["releases"], results["probes"]
    oldest, newest = releases[0], releases[-1]
    rows = results["results"]
    found = results.get("changes")
    era = results.get("era")
    by_source: dict[str, list[str]] = {}
    for key, meta in table.items():
        by_source.setdefault(_first_source(meta["source"]), []).append(key)
    sources = sorted(by_source, key=lambda name: (name == "course", name))
    order = [key for source in sources for key in by_source[source]]  # the page's order, numbered from 1
    number = {key: index for index, key in enumerate(order, start=1)}
    lines = [
        "# When did it change? The release ladder",
        "",
        "Each sentence below comes from one of the source posts, or from the lessons, and each was run as a small "
        f"offline probe on {len(releases)} releases, the rungs, from {oldest} to {newest}, each in its own "
        f"environment with torch {rows[newest]['versions']['torch']} and Python {rows[newest]['versions']['python']}. "
        "Where a verdict differs between two rungs, the final releases between them were run too, until the "
        'last release with the old verdict and the first with the new one are adjacent: "changed in 4.46.0" '
        "means 4.46.0 is the first release that behaves the new way and the release just before it behaves the old "
        f"way. {oldest} is the oldest release that installs here (tokenizers wheels for Python 3.11 start at "
        "0.13.2, which 4.23 is the first transformers to accept), so 4.8.2, the version the 2021 posts were "
        "written for, is read from its wheel, not run (the last section).",
        "",
        "This page is written by `tools/ladder.py` from `docs/ladder/results.json` (`make ladder`, "
        "`make ladder BISECT=1`); nothing on it is typed.",
        "",
        "The marks:",
        "",
        f"- {MARKS['holds']} the sentence holds on that release;",
        f"- {MARKS['does not hold']} it does not hold;",
        f"- {MARKS['cannot run']} it cannot run there: the argument or method does not exist on that release "
        "(the evidence says why).",
        "",
    ]
    if results.get("newest"):
        lines += [_newest_line(results["newest"], newest), ""]
    lines += ["## Find your sentence", ""]
    for source in sources:
        heading = "The lessons' own statements" if source == "course" else f"From the {source}"
        lines += [f"### {heading}", ""]
        for key in by_source[source]:
            meta = table[key]
            lines.append(
                f"{number[key]}. *{_escape(meta['claim'])}* Tested in {_lesson_links(meta['where'], long=True)}. "
                f"{_story(key, results, found)}"
            )
        lines.append("")
    lines += [
        "## Every release, every sentence",
        "",
        "The rungs only. The row number is the sentence's number above; the lesson that tests it follows.",
        "",
        "| # | lesson | " + " | ".join(releases) + " |",
        "|---|---|" + "---|" * len(releases),
    ]
    for key in order:
        marks = [MARKS[rows[version]["probes"][key]["verdict"]] for version in releases]
        lines.append(f"| {number[key]} | {table[key]['where'][:2]} | " + " | ".join(marks) + " |")
    lines += ["", "## The evidence at each change", ""]
    for key in order:
        lines.append(f"**{number[key]}. `{key}`**: {table[key]['claim']}")
        lines.append("")
        shown = [(oldest, rows[oldest]["probes"][key])]
        for change in _changes_of(found, key) if found is not None else []:
            for version in (change["last_old"], change["first_new"]):
                shown.append((version, _entry_at(results, version, key)))
        shown.append((newest, rows[newest]["probes"][key]))
        seen = set()
        for version, entry in sorted(shown, key=lambda pair: _key(pair[0])):
            if version in seen:
                continue
            seen.add(version)
            lines.append(f"- {version} {MARKS[entry['verdict']]} {entry['verdict']}: {_escape(entry['evidence'])}")
        lines.append("")
    if found is not None:
        lines += _bisection_section(results, found, number)
    if era:
        lines += _era_section(era, oldest)
    lines += [
        "## The rungs",
        "",
        "| release | why it is on the ladder | tokenizers | accelerate | numpy | install (s) | probes (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for version in releases:
        entry, versions = rows[version], rows[version]["versions"]
        lines.append(
            f"| {version} | {release(version).why} | {versions.get('tokenizers', '')} | "
            f"{versions.get('accelerate', 'not needed')} | {versions.get('numpy', '')} | "
            f"{entry.get('install_seconds', '')} | {entry['probe_seconds']} |"
        )
    install_total = sum(rows[v].get("install_seconds", 0) for v in releases)
    probe_total = sum(rows[v]["probe_seconds"] for v in releases)
    lines += [
        "",
        f"Measured on a {results.get('machine', '')}, one release at a time: installing all {len(releases)} took "
        f"{install_total:.0f} s (pip's cache warm for the shared packages, torch installed once beforehand) and "
        f"probing them {probe_total:.0f} s. Rerun with `make ladder` (all rungs) or `make ladder LADDER=ends` "
        "(the oldest and the newest); `make ladder LADDER=ends CHECK=1` compares a fresh run with this page's "
        "results instead of writing them; `make ladder BISECT=1` bisects again.",
        "",
    ]
    return "\n".join(lines)


def _first_source(source: str) -> str:
    return source.split(";")[0].strip()


def _changes_of(found: list[dict] | None, key: str) -> list[dict]:
    return [change for change in found or [] if change["probe"] == key]


def _entry_at(results: dict, version: str, key: str) -> dict:
    """A probe's verdict and evidence on a rung or on a release the bisection ran."""
    if version in results["results"]:
        return results["results"][version]["probes"][key]
    return results["bisection"]["releases"][version]["probes"][key]


def _release_name(version: str, results: dict) -> str:
    yanked = results.get("bisection", {}).get("yanked", {}).get(version)
    if not yanked:
        return f"**{version}**"
    reason = yanked.strip().rstrip(".")
    return f"**{version}** (yanked from PyPI: {reason})" if reason != "yanked" else f"**{version}** (yanked from PyPI)"


def _story(key: str, results: dict, found: list[dict] | None) -> str:
    """What happened to one sentence along the releases, in words."""
    releases, rows = results["releases"], results["results"]
    oldest, newest = releases[0], releases[-1]
    now = rows[newest]["probes"][key]["verdict"]
    if found is None:
        moves = changes(results, key)
        if not moves:
            return f"{MARKS[now]} {now} on every release from {oldest} to {newest}."
        text = "; ".join(f"{MARKS[o]}→{MARKS[n]} between {a} and {b}" for a, o, b, n in moves)
        return f"On {newest}: {MARKS[now]} {now}. {text} (not bisected yet)."
    era = results.get("era")
    before = ""
    if era and key in era["claims"]:
        held = era["read"][era["release"]][key]["verdict"]
        steps = "; then ".join(
            f"changed in **{c['first_new']}**; {c['last_old']} still {_behaves(c['old'])}"
            for c in era["changes"]
            if c["probe"] == key
        )
        before = (
            f"Read from the wheels (not run): {MARKS[held]} on {era['release']}"
            + (f"; {steps}" if steps else f", as on {oldest}")
            + ". "
        )
    mine = _changes_of(found, key)
    if not mine:
        return before + f"Run: {MARKS[now]} {now} on every release from {oldest} to {newest}."
    parts = []
    for change in mine:
        skipped = f" ({', '.join(change['skipped'])} between them could not be run here)" if change["skipped"] else ""
        parts.append(
            f"{MARKS[change['old']]}→{MARKS[change['new']]}: changed in {_release_name(change['first_new'], results)}; "
            f"{change['last_old']} still {_behaves(change['old'])}{skipped}"
        )
    first = rows[oldest]["probes"][key]["verdict"]
    return before + f"On {oldest}: {MARKS[first]} {first}. " + "; then ".join(parts) + f". On {newest}: {MARKS[now]}."


def _behaves(verdict: str) -> str:
    return {
        "holds": "behaves the old way (holds)",
        "does not hold": "behaves the old way (does not hold)",
        "cannot run": "cannot run it (the evidence says why)",
    }[verdict]


def _newest_line(newest: dict, rung: str) -> str:
    text = (
        f"**The newest release.** transformers {newest['published']} is the newest published "
        f"(checked {newest['checked']})"
    )
    if newest.get("installable") == newest["published"]:
        return text + f", and it installs here; the ladder's newest rung is the course's pin, {rung}."
    return (
        text + f"; it cannot be installed here: {newest['reason'] or 'pip gave no reason'}. The newest that installs "
        f"is {newest.get('installable') or 'none of the last few'}; the ladder's newest rung is the course's pin, "
        f"{rung}."
    )


def _bisection_section(results: dict, found: list[dict], number: dict[str, int]) -> list[str]:
    bisection = results.get("bisection", {})
    ran = bisection.get("releases", {})
    measured = [entry for entry in ran.values() if "probes" in entry]
    not_run = {version: entry["not_run"] for version, entry in ran.items() if "not_run" in entry}
    installs = sum(entry.get("install_seconds") or 0 for entry in measured)
    probes_time = sum(entry.get("probe_seconds") or 0 for entry in measured)
    runs = bisection.get("runs", [])
    lines = [
        "## The bisection",
        "",
        f"{len(found)} changes, each between two adjacent final releases of the index "
        f"({len(bisection.get('finals', []))} final releases from {results['releases'][0]} to "
        f"{results['releases'][-1]}, yanked ones included). Between the rungs, {len(measured)} releases were installed "
        "and run, each with the packages of its era (the older rung's pins; accelerate capped at the newest "
        f"accelerate published before it): {installs:.0f} s of installs and {probes_time:.0f} s of probes "
        f"on a {results.get('machine', '')}"
        + (f"; the last run of the command took {runs[-1]['seconds']:.0f} s on {runs[-1]['date']}" if runs else "")
        + ".",
        "",
        "| # | probe | verdict | last old | first new | releases run between the rungs |",
        "|---|---|---|---|---|---|",
    ]
    for change in found:
        older, newer = change["rungs"]
        inside = [v for v, _ in change["tested"] if v not in (older, newer)]
        marks = f"{MARKS[change['old']]}→{MARKS[change['new']]}"
        lines.append(
            f"| {number.get(change['probe'], '')} | `{change['probe']}` | {marks} | {change['last_old']} "
            f"| {change['first_new']} | {len(inside)} of {older} … {newer} |"
        )
    if not_run:
        lines += ["", "Releases that could not be installed or run here (skipped, never counted as a verdict):", ""]
        lines += [
            f"- {version}: {_escape(reason)}" for version, reason in sorted(not_run.items(), key=lambda i: _key(i[0]))
        ]
    lines.append("")
    return lines


def _era_section(era: dict, oldest: str) -> list[str]:
    lines = [
        f"## Before the ladder: {era['release']}, read from the wheels",
        "",
        f"{era['release']} and the releases up to {oldest} do not install on Python 3.11; their wheels can still be "
        "read. These claims were read from the source of each wheel (not run), and bisected the same way:",
        "",
    ]
    for key, meta in era["claims"].items():
        mine = [change for change in era["changes"] if change["probe"] == key]
        first = era["read"][era["release"]][key]["verdict"]
        story = (
            "; then ".join(f"changed in **{c['first_new']}**; {c['last_old']} still {_behaves(c['old'])}" for c in mine)
            or f"the same on every release to {oldest}"
        )
        lines.append(
            f"- *{_escape(meta['claim'])}* ({_lesson_links(meta['where'], long=True)}): {MARKS[first]} on "
            f"{era['release']}; {story}. Read: `/{_escape(meta['pattern'])}/` in `{meta['file']}`."
        )
    lines += ["", f"The lessons quote {era['release']}'s source from `{era['wheel']}`:", ""]
    for key, item in era["excerpts"].items():
        lines.append(f"- `{key}`: `{item['file']}`, line {item['line']}")
    lines += [
        "",
        f"The last read took {era['seconds']:.1f} s (wheels already downloaded, under `.venv-ladder/wheels`, are "
        "reused).",
        "",
    ]
    return lines


def _lesson_links(where: str, long: bool = False) -> str:
    """``07 §6; 02 §3`` with each lesson number linked to its notebook (files from lessons.toml); ``long``
    writes "lesson 07 §6"."""
    import tomllib

    files = {row["number"]: row["file"] for row in tomllib.loads(REGISTRY.read_text(encoding="utf-8"))["lesson"]}

    def link(match: re.Match) -> str:
        number = match.group(1)
        text = f"lesson {number}" if long else number
        return f"[{text}](../notebooks/{files[number]})" if number in files else text

    return re.sub(r"(?:(?<=^)|(?<=; ))(\d\d)\b", link, where)


def _escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def write_page(results: dict) -> None:
    PAGE.write_text(render(results), encoding="utf-8")


# ---------------------------------------------------------------------------------------------------------------
# Commands
# ---------------------------------------------------------------------------------------------------------------
def command_run(items: list[Release], check: bool) -> int:
    results = read_results()
    differences = []
    start = time.perf_counter()
    for item in items:
        print(f"== transformers {item.version}", flush=True)
        seconds = install(item)
        print(f"  install: {'already installed' if seconds is None else f'{seconds} s'}", flush=True)
        report = probe(item)
        counts = {v: sum(r["verdict"] == v for r in report["probes"].values()) for v in MARKS}
        print(f"  probes: {counts} in {report['probe_seconds']} s", flush=True)
        if check:
            committed = results.get("results", {}).get(item.version, {}).get("probes", {})
            for key, value in report["probes"].items():
                before = committed.get(key, {}).get("verdict")
                if before != value["verdict"]:
                    differences.append(f"{item.version} {key}: committed {before!r}, now {value['verdict']!r}")
        else:
            results = merge(results, item.version, report, seconds)
            write_results(results)
    print(f"ladder: {len(items)} release(s) in {time.perf_counter() - start:.0f} s", flush=True)
    if check:
        if differences:
            print("The committed results disagree with this run:\n  " + "\n  ".join(differences))
            return 1
        print("The committed results agree with this run.")
        return 0
    if set(results["releases"]) == {item.version for item in RELEASES}:
        write_page(results)
        print(f"wrote {RESULTS.relative_to(ROOT)} and {PAGE.relative_to(ROOT)}")
    else:
        print(
            f"wrote {RESULTS.relative_to(ROOT)}; the page waits for every release ({len(results['releases'])} so far)"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="install what is missing, probe, write the results and the page")
    run.add_argument("--releases", default="all", help="all, ends, or versions separated by commas")
    run.add_argument("--check", action="store_true", help="compare with the committed results; write nothing")
    for name in ("install", "probe"):
        sub.add_parser(name, help=f"{name} the given releases").add_argument("versions", nargs="+")
    bisect = sub.add_parser("bisect", help="narrow every change between two rungs to two adjacent releases")
    bisect.add_argument("--fresh", action="store_true", help="run every release again (default: reuse results)")
    bisect.add_argument("--keep-venvs", action="store_true", help="keep the releases' environments")
    newest = sub.add_parser("newest", help="the newest transformers published and the newest that installs")
    newest.add_argument("--python", default=sys.executable, help="the Python whose pip decides (default: this one)")
    newest.add_argument("--pinned", default=COURSE_PIN, help="the course's pin, for the summary")
    newest.add_argument("--tested", help="the release that was installed (default: the newest that installs)")
    newest.add_argument("--record", action="store_true", help="write the answer into the results and the page")
    newest.add_argument("pip_args", nargs="*", help="requirements for the dry run, after --, e.g. -- -r FILE")
    sub.add_parser("era", help=f"quote {ERA}'s wheel for the lessons; bisect source claims before the ladder")
    sub.add_parser("page", help="regenerate docs/ladder.md from the results file")
    sub.add_parser("list", help="the releases and why each is on the ladder")
    args = parser.parse_args(argv)
    try:
        if args.command == "run":
            return command_run(select(args.releases), args.check)
        if args.command == "install":
            for item in select(",".join(args.versions)):
                seconds = install(item)
                print(f"{item.version}: {'already installed' if seconds is None else f'installed in {seconds} s'}")
                if seconds is not None:
                    results = read_results()
                    if item.version in results.get("results", {}):
                        results["results"][item.version]["install_seconds"] = seconds
                        write_results(results)
                    else:
                        _pending_install_time(item.version, seconds)
            return 0
        if args.command == "probe":
            results = read_results()
            for item in select(",".join(args.versions)):
                report = probe(item)
                results = merge(results, item.version, report, _pending_install_time(item.version))
                write_results(results)
                counts = {v: sum(r["verdict"] == v for r in report["probes"].values()) for v in MARKS}
                print(f"{item.version}: {counts} in {report['probe_seconds']} s")
            if set(results["releases"]) == {item.version for item in RELEASES}:
                write_page(results)
            return 0
        if args.command == "era":
            return command_era()
        if args.command == "bisect":
            return command_bisect(args.fresh, args.keep_venvs)
        if args.command == "newest":
            found = command_newest(args.python, args.pip_args)
            tested = args.tested or found["installable"] or "none"
            print(latest_summary(found["published"], tested, args.pinned, found["reason"]))
            if args.record:
                results = read_results()
                results["newest"] = found
                write_results(results)
                write_page(results)
            return 0
        if args.command == "page":
            results = read_results()
            found = problems(results) + change_problems(results)
            if found:
                raise LadderError("the results file is incomplete:\n  " + "\n  ".join(found))
            write_page(results)
            return 0
        for item in RELEASES:
            print(f"{item.version:>8}  {'installed' if installed(item) else 'not installed':>13}  {item.why}")
        return 0
    except LadderError as error:
        print(f"ladder: {error}", file=sys.stderr)
        return 1


def _pending_install_time(version: str, seconds: float | None = None) -> float | None:
    """An install time measured before the release had results: kept next to its environment until it is probed."""
    note = LADDER_DIR / version / ".install-seconds"
    if seconds is not None:
        note.write_text(f"{seconds}\n")
        return seconds
    return float(note.read_text()) if note.is_file() else None


if __name__ == "__main__":
    sys.exit(main())
