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
    page                                         regenerate docs/ladder.md from the results file
    list                                         the releases and why each is on the ladder

``ends`` is the oldest and the newest release (CI's short ladder).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
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
COURSE_PIN = "5.24.0"
MARKS = {"holds": "✔", "does not hold": "✘", "cannot run": "·"}
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
    Release("4.41.2", "`eval_strategy` arrives and `evaluation_strategy` warns", ("numpy<2", "accelerate<0.32")),
    Release("4.45.2", "the last release before `num_items_in_batch`", ("numpy<2", "accelerate<1.1")),
    Release(
        "4.46.3",
        "`num_items_in_batch`, `processing_class` and `compute_loss_func` arrive",
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
    return LOCKS / f"{item.version}.txt"


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
        LOCKS.mkdir(parents=True, exist_ok=True)
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
    return {
        "about": "Written by tools/ladder.py (make ladder); docs/ladder.md is generated from it. Do not edit.",
        "machine": f"{os.cpu_count()}-core CPU",
        "releases": [v for v in order if v in every],
        "probes": probe_table(),
        "results": {v: every[v] for v in order if v in every},
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
# The page
# ---------------------------------------------------------------------------------------------------------------
def render(results: dict) -> str:
    """docs/ladder.md from the results file."""
    releases, table = results["releases"], results["probes"]
    oldest, newest = releases[0], releases[-1]
    rows = results["results"]
    install_total = sum(rows[v].get("install_seconds", 0) for v in releases)
    probe_total = sum(rows[v]["probe_seconds"] for v in releases)
    lines = [
        "# When did it change? The release ladder",
        "",
        "Each claim the lessons test on transformers 5.24 (the source posts' claims, the signatures and arguments "
        "the lessons teach, the defaults they rely on) was run again, as a small offline probe, on "
        f"{len(releases)} releases from {oldest} to {newest}, each in its own environment with torch "
        f"{rows[newest]['versions']['torch']} and Python {rows[newest]['versions']['python']}. "
        f"{oldest} is the oldest release that installs there: tokenizers wheels for Python 3.11 start at 0.13.2, and "
        "4.23 is the first transformers that accepts that tokenizers. So the ladder cannot show 4.8.2, the version "
        "the 2021 posts were written for; where a claim already failed on the oldest rung, the page says "
        f'"already on {oldest}", not "never held".',
        "",
        "This page is written by `tools/ladder.py` from `docs/ladder/results.json` (`make ladder`); nothing on it is "
        'typed. A release between two rungs was not run: "changed in 4.46.3" means the verdict on 4.45.2 (the rung '
        "before) was different.",
        "",
        f"{MARKS['holds']} holds · {MARKS['does not hold']} does not hold · {MARKS['cannot run']} cannot run on that "
        "release (the argument or method does not exist there; the evidence says why)",
        "",
        "## The first release where each claim changed",
        "",
        f"| claim | source | lesson | on {oldest} | changed | on {newest} |",
        "|---|---|---|---|---|---|",
    ]
    for key, meta in table.items():
        first, last = rows[oldest]["probes"][key], rows[newest]["probes"][key]
        moves = changes(results, key)
        text = (
            "; ".join(f"{MARKS[old]}→{MARKS[new]} in **{version}**" for _, old, version, new in moves)
            if moves
            else "no change on the ladder"
        )
        lines.append(
            f"| {meta['claim']} | {meta['source']} | {_lesson_links(meta['where'])} | {MARKS[first['verdict']]} | "
            f"{text} | {MARKS[last['verdict']]} |"
        )
    lines += ["", "## Every release, every claim", ""]
    short = [version for version in releases]
    lines.append("| probe | " + " | ".join(short) + " |")
    lines.append("|---|" + "---|" * len(short))
    for key in table:
        marks = [MARKS[rows[version]["probes"][key]["verdict"]] for version in releases]
        lines.append(f"| `{key}` | " + " | ".join(marks) + " |")
    lines += ["", "## The evidence at each change", ""]
    for key, meta in table.items():
        lines.append(f"**`{key}`**: {meta['claim']}")
        lines.append("")
        shown = [oldest, *[version for _, _, version, _ in changes(results, key)], newest]
        seen = []
        for version in shown:
            if version in seen:
                continue
            seen.append(version)
            entry = rows[version]["probes"][key]
            lines.append(f"- {version} {MARKS[entry['verdict']]} {entry['verdict']}: {_escape(entry['evidence'])}")
        lines.append("")
    lines += [
        "## The releases",
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
    lines += [
        "",
        f"Measured on a {results.get('machine', '')}, one release at a time: installing all {len(releases)} took "
        f"{install_total:.0f} s (pip's cache warm for the shared packages, torch installed once beforehand) and "
        f"probing them {probe_total:.0f} s. Rerun with `make ladder` (all releases) or `make ladder LADDER=ends` "
        "(the oldest and the newest); `make ladder LADDER=ends CHECK=1` compares a fresh run with this page's "
        "results instead of writing them.",
        "",
    ]
    return "\n".join(lines)


def _lesson_links(where: str) -> str:
    """``07 §6; 02 §3`` with each lesson number linked to its notebook (files from lessons.toml)."""
    import re
    import tomllib

    files = {row["number"]: row["file"] for row in tomllib.loads(REGISTRY.read_text(encoding="utf-8"))["lesson"]}

    def link(match: re.Match) -> str:
        number = match.group(1)
        return f"[{number}](../notebooks/{files[number]})" if number in files else number

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
        if args.command == "page":
            results = read_results()
            found = problems(results)
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
