"""The release ladder's committed results agree with its probe list and releases, and its page is generated from them.

The ladder itself (installing 12 transformers releases) runs with `make ladder`; these tests check what it wrote,
and run the probes once on the course's own transformers to check that the committed row of the pin is current.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

from tools import ladder  # noqa: E402


@pytest.fixture(scope="module")
def results() -> dict:
    assert ladder.RESULTS.is_file(), "docs/ladder/results.json is missing: run `make ladder`"
    return ladder.read_results()


def test_results_agree_with_the_probe_list_and_the_releases(results) -> None:
    assert ladder.problems(results) == []


def test_the_ladder_is_big_enough(results) -> None:
    assert len(results["releases"]) >= 8
    assert len(results["probes"]) >= 15
    assert results["releases"][-1] == ladder.COURSE_PIN
    assert results["releases"] == sorted(results["releases"], key=ladder._key)


def test_every_release_ran_in_its_own_environment(results) -> None:
    for version in results["releases"]:
        entry = results["results"][version]
        assert entry["versions"]["transformers"] == version
        assert entry["versions"]["torch"].startswith("2.13.0")
        assert entry["probe_seconds"] > 0 and entry["install_seconds"] > 0
        assert ladder.lock_file(ladder.release(version)).is_file(), f"no lock file for {version}"


def test_the_page_is_generated_from_the_results(results) -> None:
    assert ladder.PAGE.read_text(encoding="utf-8") == ladder.render(results), "run `python -m tools.ladder page`"


def test_problems_finds_a_stale_release_and_a_probe_without_results(results) -> None:
    stale = copy.deepcopy(results)
    stale["releases"].append("9.9.9")
    stale["results"]["9.9.9"] = copy.deepcopy(stale["results"][ladder.COURSE_PIN])
    assert any("differ from the ladder" in problem for problem in ladder.problems(stale))
    missing = copy.deepcopy(results)
    first = next(iter(missing["probes"]))
    del missing["results"][missing["releases"][0]]["probes"][first]
    assert ladder.problems(missing) == [f"{missing['releases'][0]}: no result for {first}"]
    table = {**ladder.probe_table(), "new_claim": {"claim": "x", "source": "course", "where": "01"}}
    assert any("new_claim" in problem for problem in ladder.problems(results, table))


def test_changes_lists_every_change_of_verdict() -> None:
    synthetic = {
        "releases": ["1", "2", "3", "4"],
        "results": {
            version: {"probes": {"p": {"verdict": verdict, "evidence": "e"}}}
            for version, verdict in zip(["1", "2", "3", "4"], ["cannot run", "holds", "holds", "does not hold"])
        },
    }
    assert ladder.changes(synthetic, "p") == [("1", "cannot run", "2", "holds"), ("3", "holds", "4", "does not hold")]


def test_select_and_unknown_releases() -> None:
    assert [r.version for r in ladder.select("ends")] == [ladder.RELEASES[0].version, ladder.COURSE_PIN]
    assert len(ladder.select("all")) == len(ladder.RELEASES)
    with pytest.raises(ladder.LadderError, match="not on the ladder"):
        ladder.select("4.8.2")


def test_probes_import_no_transformers_until_they_run() -> None:
    code = (
        "import sys; from tools import ladder; table = ladder.probe_table(); "
        "assert 'transformers' not in sys.modules and 'torch' not in sys.modules; print(len(table))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) == len(ladder.probe_table())


@pytest.mark.slow
def test_committed_pin_row_matches_a_fresh_run_on_the_course_environment(results, tmp_path) -> None:
    """Run every probe on the installed transformers (the course's pin): the committed verdicts must not be stale."""
    out = tmp_path / "report.json"
    env = ladder._probe_env()
    run = subprocess.run(
        [sys.executable, str(ladder.PROBES_FILE), str(out)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    fresh = json.loads(out.read_text())
    assert fresh["versions"]["transformers"] == ladder.COURSE_PIN
    committed = results["results"][ladder.COURSE_PIN]["probes"]
    disagree = {
        key: (committed[key]["verdict"], value["verdict"])
        for key, value in fresh["probes"].items()
        if committed[key]["verdict"] != value["verdict"]
    }
    assert disagree == {}
