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

from course_facts.pins import OFFLINE_ENV, pinned  # noqa: E402
from tools import ladder  # noqa: E402


@pytest.fixture(scope="module")
def results() -> dict:
    assert ladder.RESULTS.is_file(), "docs/ladder/results.json is missing: run `make ladder`"
    return ladder.read_results()


# probes.py and the parts it loads by path (the kit and the probes, by lesson topic)
PROBE_MODULES = ("probes.py", "probe_kit.py", "probes_signatures.py", "probes_defaults.py", "probes_callbacks.py")


def test_the_newest_rung_is_the_pin_and_every_release_is_written_once() -> None:
    """The pin is requirements.txt's (course_facts.pins): the ladder has no constant of its own, nor torch, nor the
    offline settings, nor the source posts' release."""
    assert ladder.RELEASES[-1].version == pinned() and ladder.TORCH == f"torch=={pinned('torch')}"
    assert ladder.OFFLINE is OFFLINE_ENV and ladder.probe_env()["HF_HUB_OFFLINE"] == "1"
    from course_facts.pins import SOURCE_RELEASE

    assert ladder.ERA == SOURCE_RELEASE
    typed = [
        f"{path.name}:{number}"
        for path in sorted((ROOT / "tools" / "ladder").glob("*.py"))
        # the probes run inside other releases' environments: they cannot read course_facts.pins
        if path.name not in PROBE_MODULES
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pinned() in line or f"torch=={pinned('torch')}" in line or f'"{SOURCE_RELEASE}"' in line
    ]
    assert typed == [], f"a pinned release typed in the ladder's code: {typed}"


def test_the_ladder_is_a_package_of_small_modules_that_shadow_nothing() -> None:
    """probes.py runs by path (its folder is first on sys.path there) and loads its parts beside it by path: no
    module there may take the name of a standard-library module. Each holds one concern, none over 800 lines."""
    modules = sorted((ROOT / "tools" / "ladder").glob("*.py"))
    assert {"__init__.py", "__main__.py", *PROBE_MODULES} <= {path.name for path in modules}
    assert not (ROOT / "tools" / "ladder.py").exists()
    assert [path.stem for path in modules if path.stem in sys.stdlib_module_names] == []
    long = {path.name: n for path in modules if (n := len(path.read_text().splitlines())) > 800}
    assert long == {}, long


def test_the_commands_run_as_a_module() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "tools.ladder", "list"], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert [line.split()[0] for line in run.stdout.splitlines()] == [item.version for item in ladder.RELEASES]
    bad = subprocess.run(
        [sys.executable, "-m", "tools.ladder", "install", "4.8.2"], capture_output=True, text=True, cwd=ROOT
    )
    assert bad.returncode == 1 and "is not on the ladder" in bad.stderr


def test_results_agree_with_the_probe_list_and_the_releases(results) -> None:
    assert ladder.problems(results) == []


def test_the_ladder_is_big_enough(results) -> None:
    assert len(results["releases"]) >= 8
    assert len(results["probes"]) >= 15
    assert results["releases"][-1] == pinned()
    assert results["releases"] == sorted(results["releases"], key=ladder.version_key)


def test_every_release_ran_in_its_own_environment(results) -> None:
    for version in results["releases"]:
        entry = results["results"][version]
        assert entry["versions"]["transformers"] == version
        assert entry["versions"]["torch"].split("+")[0] == pinned("torch")
        assert entry["probe_seconds"] > 0 and entry["install_seconds"] > 0
        assert ladder.lock_file(ladder.release(version)).is_file(), f"no lock file for {version}"


def test_the_page_is_generated_from_the_results(results) -> None:
    assert ladder.PAGE.read_text(encoding="utf-8") == ladder.render(results), "run `python -m tools.ladder page`"


def test_problems_finds_a_stale_release_and_a_probe_without_results(results) -> None:
    stale = copy.deepcopy(results)
    stale["releases"].append("9.9.9")
    stale["results"]["9.9.9"] = copy.deepcopy(stale["results"][pinned()])
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
    assert [r.version for r in ladder.select("ends")] == [ladder.RELEASES[0].version, pinned()]
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
    env = ladder.probe_env()
    run = subprocess.run(
        [sys.executable, str(ladder.PROBES_FILE), str(out)], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    fresh = json.loads(out.read_text())
    assert fresh["versions"]["transformers"] == pinned()
    committed = results["results"][pinned()]["probes"]
    disagree = {
        key: (committed[key]["verdict"], value["verdict"])
        for key, value in fresh["probes"].items()
        if committed[key]["verdict"] != value["verdict"]
    }
    assert disagree == {}


# ---------------------------------------------------------------------------------------------------------------
# Bisection, the index and the newest release: the logic, offline, on inputs shaped like the real ones
# ---------------------------------------------------------------------------------------------------------------
def _index(*files: tuple[str, str, object]) -> dict:
    """A PEP 691 index page with the given (file name, upload time, yanked) files."""
    return {"files": [{"filename": name, "upload-time": time, "yanked": yanked} for name, time, yanked in files]}


def test_final_releases_are_final_in_version_order_with_yanked_ones_marked() -> None:
    index = _index(
        ("transformers-4.10.0-py3-none-any.whl", "2021-09-01T00:00:00Z", False),
        ("transformers-4.10.0.tar.gz", "2021-08-31T00:00:00Z", False),
        ("transformers-4.9.2-py3-none-any.whl", "2021-08-01T00:00:00Z", False),
        ("transformers-4.46.0-py3-none-any.whl", "2024-10-24T00:00:00Z", "does not work with 3.8 "),
        ("transformers-4.46.0.tar.gz", "2024-10-24T00:00:00Z", "does not work with 3.8 "),
        ("transformers-5.0.0rc1-py3-none-any.whl", "2025-11-01T00:00:00Z", False),
        ("transformers-4.47.0.dev0.tar.gz", "2024-11-01T00:00:00Z", False),
        ("transformers-4.47.0-py3-none-any.whl", "2024-12-01T00:00:00Z", True),
        ("transformers-4.47.0.tar.gz", "2024-12-01T00:00:00Z", False),
    )
    releases = ladder.final_releases(index)
    assert [item["version"] for item in releases] == ["4.9.2", "4.10.0", "4.46.0", "4.47.0"]
    assert releases[1]["uploaded"] == "2021-08-31T00:00:00Z"  # the earliest file
    assert releases[2]["yanked"] == "does not work with 3.8"
    assert releases[3]["yanked"] == ""  # only one of its files is yanked: pip can still install it


def test_era_cap_is_the_newest_release_published_before() -> None:
    accelerate = ladder.final_releases(
        _index(
            ("accelerate-1.0.1-py3-none-any.whl", "2024-10-12T00:00:00Z", False),
            ("accelerate-1.1.0-py3-none-any.whl", "2024-11-01T00:00:00Z", False),
            ("accelerate-1.0.2-py3-none-any.whl", "2024-10-20T00:00:00Z", "broken"),
        )
    )
    assert ladder.era_cap("2024-10-24T08:15:07Z", accelerate) == "1.0.1"  # 1.0.2 is yanked, 1.1.0 came later
    assert ladder.era_cap("2020-01-01T00:00:00Z", accelerate) is None


def test_bisect_narrows_each_change_to_adjacent_releases_and_shares_the_runs() -> None:
    finals = [f"1.{minor}.0" for minor in range(20)]
    truth = {
        "arrives": lambda minor: "cannot run" if minor < 13 else "holds",
        "breaks": lambda minor: "holds" if minor < 6 else "does not hold",
        "two_steps": lambda minor: "cannot run" if minor < 3 else "holds" if minor < 15 else "does not hold",
        "steady": lambda minor: "holds",
    }
    runs: list[str] = []

    def measure(version: str, probes: list[str]) -> dict[str, str] | None:
        runs.append(version)
        minor = int(version.split(".")[1])
        if minor == 5:
            return None  # 1.5.0 cannot be installed
        return {key: truth[key](minor) for key in probes}

    rungs = ["1.0.0", "1.10.0", "1.19.0"]
    verdicts = {v: {key: f(int(v.split(".")[1])) for key, f in truth.items()} for v in rungs}
    found = ladder.bisect_changes(rungs, verdicts, finals, measure)
    pairs = {(c["probe"], c["last_old"], c["first_new"], c["old"], c["new"]) for c in found}
    assert pairs == {
        ("breaks", "1.4.0", "1.6.0", "holds", "does not hold"),  # 1.5.0 skipped, and said so
        ("two_steps", "1.2.0", "1.3.0", "cannot run", "holds"),
        ("arrives", "1.12.0", "1.13.0", "cannot run", "holds"),
        ("two_steps", "1.14.0", "1.15.0", "holds", "does not hold"),
    }
    assert next(c for c in found if c["probe"] == "breaks")["skipped"] == ["1.5.0"]
    assert len(runs) == len(set(runs)), "a release was run twice"
    assert "1.0.0" not in runs and "1.10.0" not in runs, "a rung's committed verdicts were measured again"
    assert len(runs) < 12, f"{len(runs)} releases run: the probes of an interval did not share them"


def test_newest_published_reads_pip_index_versions() -> None:
    listing = (
        "WARNING: pip index is currently an experimental command.\n"
        "transformers (5.25.0)\nAvailable versions: 5.25.0, 5.24.0, 5.23.0\n"
    )
    assert ladder.newest_published(listing) == "5.25.0"
    with pytest.raises(ladder.LadderError, match="no version line"):
        ladder.newest_published("ERROR: No matching distribution found for transformerz\n")


# pip 23.2's answer to `pip install --dry-run transformers==5.25.0` on this machine (the list of versions shortened)
PIP_KERNELS = """WARNING: Location 'file:///opt/pypi/simple/kernels/' is ignored: it is neither a file nor a directory.
ERROR: Ignored the following versions that require a different python version: 2.5.0 Requires-Python >=3.12
ERROR: Could not find a version that satisfies the requirement kernels<0.20,>=0.19.1 (from transformers) (from \
versions: 0.1.7, 0.2.0, 0.5.0.dev0, 0.16.2, 0.17.0, 0.17.1, 0.17.2)
ERROR: No matching distribution found for kernels<0.20,>=0.19.1
"""
PIP_CONFLICT = """ERROR: Cannot install transformers==5.25.0 because these package versions have conflicting \
dependencies.

The conflict is caused by:
    The user requested transformers==5.25.0
    The user requested (constraint) transformers==5.24.0
"""


def test_resolver_reason_quotes_pip_and_names_the_newest_served_version() -> None:
    reason = ladder.resolver_reason(PIP_KERNELS)
    assert reason == (
        'pip says "No matching distribution found for kernels<0.20,>=0.19.1"; the index serves kernels up to 0.17.2'
    )
    conflict = ladder.resolver_reason(PIP_CONFLICT)
    assert "Cannot install transformers==5.25.0" in conflict and "conflict is caused by" in conflict
    with pytest.raises(ladder.LadderError, match="without an error line"):
        ladder.resolver_reason("WARNING: Location 'file:///opt' is ignored\n")


def test_latest_summary_names_the_newest_published_the_tested_and_why() -> None:
    reason = ladder.resolver_reason(PIP_KERNELS)
    text = ladder.latest_summary("5.25.0", "5.23.1", "5.23.1", reason)
    assert text.splitlines() == [
        "transformers: newest published 5.25.0; installed and tested 5.23.1; the course pins 5.23.1.",
        f"5.25.0 could not be installed here: {reason}.",
        "5.23.1 is the course's pin: `make test` already runs the suite on it in .venv, so `make test-latest` has "
        "nothing else to test.",
    ]
    same = ladder.latest_summary("5.25.0", "5.25.0", "5.23.1", "")
    assert "could not" not in same and "5.25.0 is the newest published release." in same
    assert "nothing else to test" not in same


def test_latest_says_when_the_pin_is_the_newest_release_and_stops_before_installing() -> None:
    """When the newest release that installs is the pin, `make test-latest` says so and builds and runs nothing:
    `make test` tests that release already."""
    pinned_newest = ladder.latest_summary("5.25.0", "5.25.0", "5.25.0", "", installed=False)
    assert pinned_newest.splitlines() == [
        "transformers: newest published 5.25.0; the newest that installs with the pins 5.25.0; the course pins 5.25.0.",
        "5.25.0 is the newest published release.",
        "5.25.0 is the course's pin: `make test` already runs the suite on it in .venv, so `make test-latest` has "
        "nothing else to test.",
    ]
    held_back = ladder.latest_summary("5.26.0", "5.25.0", "5.25.0", "a reason", installed=False)
    assert "5.26.0 could not be installed here: a reason." in held_back and "nothing else to test" in held_back
    found = {"published": "5.26.0", "installable": "5.25.0", "reason": "", "checked": "2026-12-06"}
    assert ladder.pin_is_newest(found, "5.25.0") and not ladder.pin_is_newest(found, "5.24.0")
    assert not ladder.pin_is_newest({**found, "installable": None}, "5.25.0")
    script = (ROOT / "tools" / "test_latest.sh").read_text(encoding="utf-8")
    asked, venv, tests = (script.index(word) for word in ("--stop-if-pinned", '-m venv "$VENV"', "-m pytest"))
    assert asked < venv < tests, "test_latest.sh must ask the index before it builds or runs anything"
    assert script.count('"$PYTHON" -m tools.ladder newest') == 1, "the index is asked twice"
    from tools.ladder.cli import PINNED_IS_NEWEST

    assert f'"$asked" -eq {PINNED_IS_NEWEST} ]' in script


# ---------------------------------------------------------------------------------------------------------------
# The committed bisection and the page
# ---------------------------------------------------------------------------------------------------------------
def test_the_committed_changes_are_adjacent_and_agree_with_the_rungs(results) -> None:
    assert ladder.change_problems(results) == []
    assert len(results["changes"]) >= 10
    assert results["bisection"]["runs"], "the bisection's run time is not recorded"
    assert results["bisection"]["runs"][-1]["seconds"] > 0


def test_change_problems_finds_a_gap_and_a_broken_chain(results) -> None:
    changed = copy.deepcopy(results)
    bisected = next(c for c in changed["changes"] if c["last_old"] not in changed["releases"])
    bisected["last_old"] = bisected["rungs"][0]  # a rung further back: not adjacent, unless nothing is between
    gap = ladder.change_problems(changed)
    assert any("not adjacent" in problem for problem in gap), gap
    dropped = copy.deepcopy(results)
    dropped["changes"] = dropped["changes"][1:]
    assert any("do not lead from" in problem for problem in ladder.change_problems(dropped))
    assert ladder.change_problems({**results, "changes": None}) == [
        "no bisected changes in the results: run `make ladder BISECT=1`"
    ]


def test_the_page_leads_with_the_sentences_and_its_grid_fits_a_laptop(results) -> None:
    page = ladder.render(results)
    headings = [line for line in page.splitlines() if line.startswith("## ")]
    assert headings[0] == "## Find your sentence" and headings[1] == "## Every release, every sentence"
    for change in results["changes"]:
        assert f"changed in **{change['first_new']}**" in page
        assert f"{change['last_old']} still" in page
    section = page.split("## Every release, every sentence")[1].split("\n## ")[0]
    grid = [line for line in section.splitlines() if line.startswith("| ")]
    assert len(grid) == len(results["probes"]) + 1
    cells = [[cell.strip() for cell in line.strip("|").split("|")] for line in grid]
    assert max(len(row[0]) + len(row[1]) for row in cells) <= 8, "row labels too wide for 1280 px"
    assert max(len(cell) for row in cells for cell in row[2:]) <= 6, "a release column wider than its version"
    legend = page.split("## Find your sentence")[0]
    assert "·" not in legend, "the legend uses '·' as a separator and as a mark"
    assert set(ladder.MARKS.values()) <= set(legend)
