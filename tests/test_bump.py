"""``python -m tools.bump X.Y.Z``: a bump rewrites the three pin files and nothing else, and reports the rest.

Offline: the bump runs with ``--offline`` (no ladder install) in scratch copies of the tree; the ladder step is
tested with a recorded pip refusal and with the committed probe results.
"""

from __future__ import annotations

import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from course_facts.pins import pinned, pinned_minor
from tools import bump

ROOT = Path(__file__).resolve().parent.parent
MADE_UP = "5.99.0"


def _hashes(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in bump.tree_files(root)
    }


def _bump(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tools.bump", *args], cwd=cwd, capture_output=True, text=True, timeout=300
    )


def test_a_bump_to_a_made_up_release_in_a_scratch_copy_edits_only_the_pin_files(tmp_path) -> None:
    tree = tmp_path / "tree"  # a copy of this checkout, so that the test sees nothing another process changes
    bump.copy_tree(ROOT, tree)
    before = _hashes(tree)
    scratch = tmp_path / "scratch"
    result = _bump(MADE_UP, "--scratch", str(scratch), "--offline", cwd=tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert _hashes(tree) == before, "--scratch changed the tree it copied"
    after = _hashes(scratch)
    assert set(after) == set(before), "the scratch copy is not the whole tree"
    assert sorted(name for name in after if after[name] != before[name]) == sorted(
        [*bump.PIN_FILE_NAMES, bump.RUNGS_FILE]
    )
    rungs_before = (tree / bump.RUNGS_FILE).read_text(encoding="utf-8").splitlines()
    rungs_after = (scratch / bump.RUNGS_FILE).read_text(encoding="utf-8").splitlines()
    added = [line for line in rungs_after if line not in rungs_before]
    assert added == [f'    Release("{pinned()}", "a former pin of the course (kept by `python -m tools.bump`)", ()),']
    below = rungs_after[rungs_after.index(added[0]) + 1]
    assert below.startswith(bump.PIN_RUNG), "the former pin goes just below the pin's rung"
    for name in bump.PIN_FILE_NAMES:
        old_lines = (tree / name).read_text(encoding="utf-8").splitlines()
        new_lines = (scratch / name).read_text(encoding="utf-8").splitlines()
        changed = [(a.strip(), b.strip()) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
        assert [(a.lstrip("- "), b.lstrip("- ")) for a, b in changed] == [
            (f"transformers=={pinned()}", f"transformers=={MADE_UP}")
        ], name
    read = subprocess.run([sys.executable, "-m", "tools.pins"], cwd=scratch, capture_output=True, text=True)
    assert read.stdout.strip() == MADE_UP, "the scratch copy does not read the new pin through course_facts.pins"
    out = result.stdout
    assert f"transformers: {pinned()} -> {MADE_UP}" in out
    assert "not run (--offline)" in out and "Claims whose probe changed: unknown" in out
    assert f"{pinned()} stays on the ladder as a rung (tools/ladder/rungs.py)" in out
    assert "Not done by this command, left to you:" in out and "make ladder" in out and "make execute" in out


def test_the_report_counts_the_written_verdicts_and_lists_cells_that_type_the_old_release(tmp_path) -> None:
    tree = tmp_path / "tree"
    bump.copy_tree(ROOT, tree)
    blocks, books = bump.written_verdicts(ROOT)
    assert blocks >= 30 and books >= 10, "the claim boxes name their probes (tools/verdicts.py writes the lines)"
    assert bump.verdict_cells(ROOT, pinned_minor()) == [], "a lesson types a verdict on the pin"
    lesson = sorted((tree / "notebooks").glob("0[1-9]_*.ipynb"))[0]
    book = json.loads(lesson.read_text(encoding="utf-8"))
    book["cells"].insert(3, {"cell_type": "markdown", "metadata": {}, "source": [f"It holds on {pinned_minor()}."]})
    lesson.write_text(json.dumps(book), encoding="utf-8")
    result = _bump(MADE_UP, "--offline", cwd=tree)  # in place, in the copy
    assert result.returncode == 0, result.stderr
    out = result.stdout
    said = f"3. Verdict lines written from the ladder's results: {blocks} boxes (claim checks, 'When it changed') in "
    assert said + f"{books} notebooks" in out
    assert f"Cells that type a verdict on {pinned_minor()}, to re-read by hand: 1 in 1 notebooks" in out
    assert f"   - {lesson.name}: cell 4 (" in out and f"holds on {pinned_minor()}" in out
    assert "notebook_format apply" in out and "re-read the 1 cells listed in 3." in out


def test_the_former_pin_is_kept_once_and_new_lock_packages_join_the_constraints(tmp_path) -> None:
    (tmp_path / "tools" / "ladder").mkdir(parents=True)
    rungs = tmp_path / bump.RUNGS_FILE
    rungs.write_text(f'RELEASES = (\n    Release("5.0.0", "a rung", ()),\n{bump.PIN_RUNG}\n)\n')
    assert bump.keep_former_pin(tmp_path, "5.1.0") == "5.1.0 stays on the ladder as a rung (tools/ladder/rungs.py)"
    assert bump.keep_former_pin(tmp_path, "5.1.0") == "5.1.0 is already a rung of tools/ladder/rungs.py"
    assert rungs.read_text().count('Release("5.1.0",') == 1
    rungs.write_text("RELEASES = ()\n")
    with pytest.raises(bump.BumpError, match="add the rung 5.1.0 by hand"):
        bump.keep_former_pin(tmp_path, "5.1.0")
    (tmp_path / "constraints.txt").write_text(
        "# a freeze\nFilelock==1.0\njinja2==3.0\ntransformers==5.2.0\nruff==0.1\n"
    )
    lock = tmp_path / "lock.txt"
    lock.write_text("# transformers 5.2.0 on the ladder\nfilelock==1.0\nkernels==0.19.1\ntomlkit==0.15.3\n")
    assert bump.add_lock_packages(tmp_path, lock) == ["kernels==0.19.1", "tomlkit==0.15.3"]
    assert (tmp_path / "constraints.txt").read_text().splitlines() == [
        "# a freeze",
        "Filelock==1.0",
        "jinja2==3.0",
        "kernels==0.19.1",
        "tomlkit==0.15.3",
        "transformers==5.2.0",
        "ruff==0.1",
    ]
    assert bump.add_lock_packages(tmp_path, lock) == []


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("5.99", "not a final release X.Y.Z"),
        ("5.99.0rc1", "not a final release X.Y.Z"),
        ("latest", "not a final release X.Y.Z"),
        (pinned(), f"already pins transformers=={pinned()}"),
    ],
)
def test_bad_input_gets_a_clear_error_and_changes_nothing(argument, message, tmp_path, capsys) -> None:
    scratch = tmp_path / "scratch"
    assert bump.main([argument, "--scratch", str(scratch), "--offline"]) == 2
    error = capsys.readouterr().err
    assert error.startswith("bump: ") and message in error, error
    assert not scratch.exists(), "bad input was copied before it was refused"


def test_pin_files_that_disagree_are_refused_before_any_is_written(tmp_path) -> None:
    (tmp_path / "requirements.txt").write_text("torch==2.0.0\ntransformers==5.1.0\n")
    (tmp_path / "constraints.txt").write_text("transformers==5.0.0\n")
    (tmp_path / "environment.yml").write_text("dependencies:\n  - pip:\n      - transformers==5.1.0\n")
    with pytest.raises(bump.BumpError, match="constraints.txt has 0 lines 'transformers==5.1.0'.*nothing was changed"):
        bump.rewrite_pins(tmp_path, "5.1.0", "5.2.0")
    assert (tmp_path / "requirements.txt").read_text() == "torch==2.0.0\ntransformers==5.1.0\n"
    (tmp_path / "constraints.txt").write_text("transformers==5.1.0\n")
    assert bump.rewrite_pins(tmp_path, "5.1.0", "5.2.0") == list(bump.PIN_FILE_NAMES)
    assert (tmp_path / "environment.yml").read_text().endswith("      - transformers==5.2.0\n")
    with pytest.raises(bump.BumpError, match="not empty"):
        bump.copy_tree(ROOT, tmp_path)


# pip's refusal of `pip install --dry-run transformers==5.25.0` on this machine (the list of versions shortened)
PIP_REFUSAL = """ERROR: Could not find a version that satisfies the requirement kernels<0.20,>=0.19.1 \
(from transformers) (from versions: 0.1.7, 0.16.2, 0.17.2)
ERROR: No matching distribution found for kernels<0.20,>=0.19.1
"""


def test_a_release_that_cannot_be_installed_is_reported_with_pips_reason() -> None:
    report = bump.Report(pinned(), "5.25.0", ROOT)
    refused = subprocess.CompletedProcess([], 1, stdout="", stderr=PIP_REFUSAL)
    assert bump.run_rung(report, lambda root, new: refused) is None
    (said,) = report.ladder
    assert said.startswith("transformers 5.25.0 cannot be installed with the course's other pins: ")
    assert "kernels<0.20,>=0.19.1" in said and "the index serves kernels up to 0.17.2" in said
    report.not_done = bump.not_done(report)
    text = bump.render(report)
    assert "Claims whose probe changed: unknown (the rung did not run)" in text
    assert "no claim was compared on 5.25.0" in text


def test_a_changed_probe_is_listed_with_its_lesson() -> None:
    results = json.loads((ROOT / "docs" / "ladder" / "results.json").read_text(encoding="utf-8"))
    fresh = copy.deepcopy(results["results"][pinned()]["probes"])
    key = next(iter(fresh))
    fresh[key]["verdict"] = "cannot run" if fresh[key]["verdict"] != "cannot run" else "holds"
    report = bump.Report(pinned(), MADE_UP, ROOT)
    (line,) = bump.compare(report, fresh)
    assert line.startswith(f"{key} (lesson {results['probes'][key]['where']}): ")
    assert f"on {pinned()}, {fresh[key]['verdict']} on {MADE_UP}" in line
    assert bump.compare(report, results["results"][pinned()]["probes"]) == []
