"""Move the course to a new transformers release: ``python -m tools.bump X.Y.Z [--scratch DIR] [--offline]``.

What it does, in this order, and says as it goes:

1. rewrites the ``transformers==`` pin of the three pin files (``requirements.txt``, ``constraints.txt``,
   ``environment.yml``): every other file reads the pin through :mod:`course_facts.pins`; and keeps the former pin on
   the ladder as a rung of its own (``tools/ladder/rungs.py``), so that the next ladder run compares the two;
2. re-runs the ladder's newest rung (the pin) on the new release, if it can: a dry run of pip first, and when the
   release cannot be installed with the course's other pins it quotes pip's reason and stops there (nothing is
   pretended); otherwise it installs the release's environment (``.venv-ladder/X.Y.Z``, which writes the ladder's
   lock file ``tools/ladder/locks/X.Y.Z.txt``), runs every probe and lists the claims whose verdict differs from the
   old pin's committed row, with the lesson section that shows each (the results file is not written:
   ``make ladder`` records the rung); every package of the rung's lock that ``constraints.txt`` lacks (a new
   dependency of the release, and its own) is added to ``constraints.txt`` at the lock's version;
3. counts the claim boxes' verdict lines, which ``python -m tools.notebook_format apply`` (and ``make execute``)
   rewrites from the ladder's results once ``make ladder`` has the new rung (:mod:`tools.verdicts`), and lists the
   markdown cells that still type a verdict on the old release ("holds on X.Y", ...: none when the notebooks
   follow tests/test_release_claims.py), by notebook, cell number and section;
4. says plainly what it did not do and what is left by hand (re-run the notebooks, the ladder's page and bisection,
   the other pins, and every line outside the pin files and the notebooks that still names the old release).

``--scratch DIR`` copies the working tree (tracked and untracked files git does not ignore) to ``DIR`` and works
there, leaving this tree as it is. ``--offline`` skips the ladder (step 2), which needs the package index.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "transformers"
PIN_FILE_NAMES = ("requirements.txt", "constraints.txt", "environment.yml")
RUNGS_FILE = "tools/ladder/rungs.py"
PIN_RUNG = '    Release(pinned(), "the course\'s pin", ()),'  # the newest rung, read from requirements.txt

# A verdict of a claim box, and the release it names: "holds on X.Y", "does not hold on **X.Y**", "changed in
# **X.Y.Z**", "no longer holds: ... X.Y.Z" (within the sentence; a transformers release, 4.x or later).
# tests/test_release_claims.py reads the same.
VERDICT = re.compile(
    r"\b(?P<verdict>holds on|does not hold on|changed in|no longer holds\b(?:(?!\.[*_]*\s)[^\n]){0,80}?)"
    r"[\s*_`:]*(?<![\d.])(?P<release>[4-9]\.\d+(?:\.\d+)?)(?![\d])",
    re.IGNORECASE,
)
# Where a typed release may stand: generated pages and data, lock files, the quoted corpus, the lessons' exports.
NOT_BY_HAND = (
    "docs/ladder.md",
    "docs/ladder/",
    "docs/setup_facts.json",
    "docs/cheatsheet.md",
    "tools/ladder/locks/",
    "tests/check_old_code_corpus/",
    "helpers/lessons/",
    "notebooks/",
)
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".yml", ".yaml", ".sh", ".cfg", ".json", ""}


class BumpError(ValueError):
    """Bad input or a tree the bump cannot edit; the message says what to do."""


@dataclass
class Report:
    """What the bump did and could not do, printed at the end."""

    old: str
    new: str
    root: Path
    edited: list[str] = field(default_factory=list)
    ladder: list[str] = field(default_factory=list)
    changed_claims: list[str] | None = None  # None: the rung did not run
    cells: list[tuple[str, int, str, str]] = field(default_factory=list)
    written_verdicts: tuple[int, int] = (0, 0)  # (verdict blocks, notebooks) that tools.verdicts writes
    rung: str = ""  # what happened to the former pin's rung
    added_constraints: list[str] = field(default_factory=list)
    by_hand: list[str] = field(default_factory=list)
    not_done: list[str] = field(default_factory=list)


def parse_release(text: str, current: str) -> str:
    """The new release, checked: a final ``X.Y.Z`` that is not the current pin."""
    from course_facts.pins import release_key

    try:
        release_key(text)
    except ValueError as error:
        raise BumpError(f"{error}: give the release to move to, e.g. `python -m tools.bump 5.25.0`") from None
    if text == current:
        raise BumpError(f"the course already pins {PACKAGE}=={current}: give another release")
    return text


def rewrite_pins(root: Path, old: str, new: str) -> list[str]:
    """Rewrite ``transformers==OLD`` to ``transformers==NEW`` in the three pin files; return their names.

    Each file must have exactly one such line; nothing is written unless all three have it."""
    line = re.compile(rf"(?m)^(\s*(?:-\s+)?){PACKAGE}=={re.escape(old)}(\s*)$")
    texts = {}
    for name in PIN_FILE_NAMES:
        path = root / name
        if not path.is_file():
            raise BumpError(f"{path} is missing: the bump rewrites the pin in {', '.join(PIN_FILE_NAMES)}")
        text = path.read_text(encoding="utf-8")
        found = len(line.findall(text))
        if found != 1:
            raise BumpError(
                f"{name} has {found} lines '{PACKAGE}=={old}' (one expected): make the three pin files agree first "
                "(tests/test_pins.py says where they differ); nothing was changed"
            )
        texts[name] = line.sub(rf"\g<1>{PACKAGE}=={new}\g<2>", text)
    for name, text in texts.items():
        (root / name).write_text(text, encoding="utf-8")
    return list(texts)


def keep_former_pin(root: Path, old: str) -> str:
    """Add the former pin to the ladder as a rung of its own, just below the pin's rung; say what was done."""
    path = root / RUNGS_FILE
    text = path.read_text(encoding="utf-8")
    if f'Release("{old}",' in text:
        return f"{old} is already a rung of {RUNGS_FILE}"
    if text.count(PIN_RUNG) != 1:
        raise BumpError(f"{RUNGS_FILE} has no line {PIN_RUNG.strip()!r} (the pin's rung): add the rung {old} by hand")
    rung = f'    Release("{old}", "a former pin of the course (kept by `python -m tools.bump`)", ()),\n'
    path.write_text(text.replace(PIN_RUNG, rung + PIN_RUNG), encoding="utf-8")
    return f"{old} stays on the ladder as a rung ({RUNGS_FILE})"


def add_lock_packages(root: Path, lock: Path) -> list[str]:
    """Add to ``constraints.txt`` every package of the rung's ``lock`` that it lacks, at the lock's version, in
    its alphabetical place; return the ``name==version`` lines added."""
    from course_facts.pins import normalized, pins

    path = root / "constraints.txt"
    have = {normalized(name) for name in pins(path)}
    locked = [line.strip() for line in lock.read_text(encoding="utf-8").splitlines() if "==" in line]
    new = sorted((line for line in locked if normalized(line.split("==")[0]) not in have), key=str.lower)
    if not new:
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    for pin in new:
        key = pin.lower()
        at = next(
            (n for n, line in enumerate(lines) if "==" in line and not line.startswith("#") and line.lower() > key),
            len(lines),
        )
        lines.insert(at, pin)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    pins.cache_clear()
    return new


def written_verdicts(root: Path) -> tuple[int, int]:
    """``(verdict blocks, notebooks)``: the claim boxes' lines that tools.verdicts writes from the ladder."""
    from tools.verdicts import BLOCK

    counts = []
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        counts.append(sum(len(BLOCK.findall("".join(cell["source"]))) for cell in cells))
    return sum(counts), sum(1 for count in counts if count)


def verdict_cells(root: Path, release: str) -> list[tuple[str, int, str, str]]:
    """``(notebook, cell number from 1, section heading, verdict words)`` for every markdown cell of a lesson that
    states a verdict on ``release`` (``"X.Y"`` also finds ``"X.Y.0"``)."""
    found = []
    for path in sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        heading = ""
        for number, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"], start=1):
            if cell["cell_type"] != "markdown":
                continue
            text = "".join(cell["source"])
            heading = next((line for line in text.splitlines() if line.startswith("## ")), heading)
            for match in VERDICT.finditer(text):
                named = match.group("release")
                if named == release or named.startswith(release + "."):
                    words = " ".join(match.group(0).replace("*", "").split())
                    found.append((path.name, number, heading.lstrip("# ").strip(), words))
    return found


def typed_releases(root: Path, old: str) -> list[str]:
    """``file:line: text`` for every line outside the pin files, the notebooks and the generated files that names
    the old release (``X.Y`` or ``X.Y.Z``): what a maintainer reads and changes by hand."""
    minor = ".".join(old.split(".")[:2])
    pattern = re.compile(rf"(?<![\d.]){re.escape(minor)}(?:\.\d+)?(?![\d.]\d)")
    found = []
    for path in sorted(tree_files(root)):
        name = path.relative_to(root).as_posix()
        if name in PIN_FILE_NAMES or name.startswith(NOT_BY_HAND) or path.suffix not in TEXT_SUFFIXES:
            continue
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (UnicodeDecodeError, OSError):
            continue  # a binary file: no release typed in it
        found += [f"{name}:{n}: {line.strip()[:100]}" for n, line in enumerate(lines, start=1) if pattern.search(line)]
    return found


def tree_files(root: Path) -> list[Path]:
    """The working tree's files: tracked and untracked ones git does not ignore (every file but ``.git``, the
    virtual environments and caches when ``root`` is not a git checkout, as in a scratch copy)."""
    if (root / ".git").exists():
        listed = subprocess.run(
            ["git", "-c", f"safe.directory={root}", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=root,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return [root / name for name in listed.split("\0") if name and (root / name).is_file()]
    skipped = {".git", "__pycache__", ".pytest_cache", ".ruff_cache", "runs"}
    return [
        path
        for path in root.rglob("*")
        if path.is_file()
        and not any(part in skipped or part.startswith(".venv") for part in path.relative_to(root).parts)
    ]


def copy_tree(root: Path, target: Path) -> int:
    """Copy the working tree to ``target`` (new or empty); return the number of files."""
    if target.exists() and any(target.iterdir()):
        raise BumpError(f"{target} is not empty: give --scratch a new or empty folder")
    if target.resolve().is_relative_to(root.resolve()):
        raise BumpError(f"{target} is inside the tree it would copy: give --scratch a folder outside {root}")
    files = tree_files(root)
    for path in files:
        destination = target / path.relative_to(root)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, destination)
    return len(files)


def pip_dry_run(root: Path, new: str) -> subprocess.CompletedProcess:
    """pip's answer to installing the new release with the course's other pins (nothing is installed)."""
    command = [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "-q"]
    command += [f"{PACKAGE}=={new}", "accelerate", "-c", "constraints.txt"]  # the ladder's pin rung installs these
    return subprocess.run(command, cwd=root, capture_output=True, text=True)


def run_rung(
    report: Report, dry_run: Callable[[Path, str], subprocess.CompletedProcess] = pip_dry_run
) -> dict[str, dict] | None:
    """Install and probe the ladder's newest rung on the new release; return its probes' results, or ``None`` (with
    the reason in the report) when the release cannot be installed or run here."""
    from tools import ladder

    trial = dry_run(report.root, report.new)
    if trial.returncode != 0:
        try:
            reason = ladder.resolver_reason(trial.stdout + trial.stderr)
        except ladder.LadderError:
            reason = "pip failed without an error line: " + (trial.stdout + trial.stderr).strip()[-300:]
        report.ladder.append(f"{PACKAGE} {report.new} cannot be installed with the course's other pins: {reason}.")
        return None
    rung = ladder.RELEASES[-1]
    if rung.version != report.new:
        raise BumpError(f"the ladder's newest rung is {rung.version}, not the new pin {report.new}")
    lock = ladder.lock_file(rung)
    had_lock = lock.is_file()
    try:
        seconds = ladder.install(rung)
        if seconds:  # `make ladder` finds the release installed: it records this time with the rung's results
            ladder.record_install_time(rung.version, seconds)
        if not had_lock and lock.is_file():
            report.ladder.append(
                f"wrote {lock.relative_to(report.root)} (the release's packages; commit it with the pins)"
            )
        if lock.is_file():
            report.added_constraints = add_lock_packages(report.root, lock)
        report.ladder.append(
            f"installed {ladder.venv_of(rung)} in {seconds} s" if seconds else f"{ladder.venv_of(rung)} was there"
        )
        result = ladder.probe(rung)
    except ladder.LadderError as error:
        report.ladder.append(f"the rung could not run: {ladder.error_line(error)}")
        return None
    report.ladder.append(f"ran {len(result['probes'])} probes on {report.new} in {result['probe_seconds']} s")
    return result["probes"]


def compare(report: Report, fresh: dict[str, dict]) -> list[str]:
    """The claims whose verdict on the new release differs from the old pin's committed one."""
    from tools import ladder

    results = ladder.read_results()
    committed = results.get("results", {}).get(report.old, {}).get("probes", {})
    table = results.get("probes", {}) or ladder.probe_table()
    changed = []
    for key, entry in fresh.items():
        before = committed.get(key, {}).get("verdict", "not probed")
        if before != entry["verdict"]:
            meta = table.get(key, {"claim": key, "where": "?"})
            changed.append(
                f"{key} (lesson {meta['where']}): {before} on {report.old}, {entry['verdict']} on {report.new}: "
                f"{meta['claim']} Evidence: {entry['evidence']}"
            )
    return changed


def bump(root: Path, new_text: str, offline: bool, dry_run=pip_dry_run) -> Report:
    """Steps 1 to 4 on the tree at ``root`` (the module docstring)."""
    from course_facts import pins

    pins.pins.cache_clear()
    old = pins.pins(root / "requirements.txt").get(PACKAGE)
    if old is None:
        raise BumpError(f"{root / 'requirements.txt'} pins no {PACKAGE}: add the line '{PACKAGE}==X.Y.Z' first")
    report = Report(old, parse_release(new_text, old), root)
    report.edited = rewrite_pins(root, old, report.new)
    report.rung = keep_former_pin(root, old)
    pins.pins.cache_clear()
    if offline:
        report.ladder.append("not run (--offline): the ladder needs the package index to install the release")
    else:
        fresh = run_rung(report, dry_run)
        if fresh is not None:
            report.changed_claims = compare(report, fresh)
    report.cells = verdict_cells(root, ".".join(old.split(".")[:2]))
    report.written_verdicts = written_verdicts(root)
    report.by_hand = typed_releases(root, old)
    report.not_done = not_done(report)
    return report


def not_done(report: Report) -> list[str]:
    steps = [
        "install the new pins: `make venv`, then compare `.venv/bin/pip freeze` with constraints.txt (a full freeze: "
        "when pip asks for newer tokenizers, huggingface-hub, accelerate, trl or peft, change them in the three pin "
        "files); a new required dependency of transformers goes into requirements.txt and environment.yml too",
        f"`make ladder` records the rung {report.new} (and runs every rung again: new probes, the former pin's "
        "rung), then `make ladder BISECT=1` narrows what changed, and `make ladder LADDER=ends CHECK=1` checks the "
        "committed results (tests/test_ladder.py fails until they ran)",
        "`python -m tools.notebook_format apply notebooks/*.ipynb` writes the claim boxes' verdict lines from the "
        "new results (tests/test_verdicts.py fails until it ran); re-read each box whose probe changed (above)",
        "regenerate what names the installed release: `python -m tools.cheatsheet`, `python -m tools.setup_facts`",
        "`make execute` every notebook (the outputs come from the new release), then `make test`: "
        "tests/test_contracts.py and the notebooks say what the new release broke",
    ]
    if report.cells:
        steps.insert(
            2,
            f"re-read the {len(report.cells)} cells listed in 3. and say 'the pinned release' instead of "
            f"{report.old.rsplit('.', 1)[0]} (tests/test_release_claims.py fails on a typed pin)",
        )
    if report.changed_claims is None:
        steps.insert(1, f"the ladder's rung did not run here, so no claim was compared on {report.new}")
    return steps


def render(report: Report) -> str:
    lines = [
        f"{PACKAGE}: {report.old} -> {report.new} in {report.root}",
        "",
        f"1. Pins rewritten ({PACKAGE} only): {', '.join(report.edited)}; {report.rung}.",
        "2. The ladder's newest rung: " + "; ".join(report.ladder) + ".",
    ]
    if report.added_constraints:
        lines.append(
            f"   Added to constraints.txt from the rung's lock ({len(report.added_constraints)}): "
            + ", ".join(report.added_constraints)
        )
    if report.changed_claims is None:
        lines.append("   Claims whose probe changed: unknown (the rung did not run).")
    elif report.changed_claims:
        lines.append(f"   Claims whose probe changed ({len(report.changed_claims)}):")
        lines += [f"   - {claim}" for claim in report.changed_claims]
    else:
        lines.append(f"   Claims whose probe changed: none; every probe gives {report.old}'s verdict.")
    notebooks = sorted({cell[0] for cell in report.cells})
    blocks, books = report.written_verdicts
    lines.append(
        f"3. Verdict lines written from the ladder's results: {blocks} boxes (claim checks, 'When it changed') in "
        f"{books} notebooks "
        "(`python -m tools.notebook_format apply` rewrites them once the ladder has the new rung)."
    )
    lines.append(
        f"   Cells that type a verdict on {report.old.rsplit('.', 1)[0]}, to re-read by hand: {len(report.cells)} "
        f"in {len(notebooks)} notebooks" + (" (cell numbers from 1):" if report.cells else ".")
    )
    for notebook in notebooks:
        cells: dict[int, tuple[str, list[str]]] = {}
        for _, number, heading, words in (cell for cell in report.cells if cell[0] == notebook):
            said = cells.setdefault(number, (heading or "top", []))[1]
            said.append(words.lower()) if words.lower() not in said else None
        shown = "; ".join(f"cell {n} ({heading}): {', '.join(said)}" for n, (heading, said) in cells.items())
        lines.append(f"   - {notebook}: {shown}")
    lines.append(
        f"4. Lines outside the pin files and the notebooks that name {report.old} by hand ({len(report.by_hand)}):"
    )
    lines += [f"   - {line}" for line in report.by_hand] or ["   - none"]
    lines.append("Not done by this command, left to you:")
    lines += [f"   - {step}" for step in report.not_done]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.bump", description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("release", help="the transformers release to pin, X.Y.Z")
    parser.add_argument("--scratch", type=Path, help="copy the working tree to this folder and work there")
    parser.add_argument("--offline", action="store_true", help="do not install or probe the release (no index)")
    args = parser.parse_args(argv)
    try:
        if args.scratch is not None:
            from course_facts.pins import pinned

            parse_release(args.release, pinned(PACKAGE))  # bad input fails before anything is copied
            count = copy_tree(ROOT, args.scratch)
            print(f"copied {count} files to {args.scratch}; working there (this tree is not changed)", flush=True)
            env = {**os.environ, "LADDER_VENVS": os.environ.get("LADDER_VENVS", str(ROOT / ".venv-ladder"))}
            command = [sys.executable, "-m", "tools.bump", args.release, *(["--offline"] if args.offline else [])]
            return subprocess.run(command, cwd=args.scratch, env=env).returncode
        print(render(bump(ROOT, args.release, args.offline)))
        return 0
    except BumpError as error:
        print(f"bump: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
