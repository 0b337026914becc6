"""``docs/ladder/results.json``: reading it, merging a release's report into it, and checking that it agrees with
the rungs, the probe list and the bisected changes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tools.ladder.environments import requirements_of
from tools.ladder.rungs import MARKS, RELEASES, RESULTS, probe_table, release


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
        pins=list(requirements_of(release(version))),
    )
    if install_seconds is not None:
        entry["install_seconds"] = install_seconds
    every = {**results.get("results", {}), version: entry}
    order = [item.version for item in RELEASES]
    kept = {key: results[key] for key in ("changes", "bisection", "newest", "era") if key in results}
    return {
        "about": "Written by tools/ladder (make ladder); docs/ladder.md is generated from it. Do not edit.",
        "machine": f"{os.cpu_count()}-core CPU",
        "releases": [v for v in order if v in every],
        "probes": probe_table(),
        "results": {v: every[v] for v in order if v in every},
        **kept,
    }


def write_results(results: dict, path: Path = RESULTS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")


def relabel(results: dict, table: dict | None = None, source_claims: tuple = ()) -> dict:
    """The results with their lesson references (``where``) taken from the probe list and ``source_claims``, the
    measured verdicts untouched: after a lesson moves (``tools/renumber.py``) or a section is renumbered.

    Raises:
        ValueError: the probes or their claims differ, not only their references: run the ladder instead.
    """
    table = probe_table() if table is None else table
    stored = results.get("probes", {})
    if set(stored) != set(table) or any({**stored[key], "where": ""} != {**table[key], "where": ""} for key in table):
        raise ValueError(
            "the probe list differs from the results' in more than its lesson references: run the ladder "
            "(make ladder) rather than relabelling."
        )
    era = results.get("era", {}).get("claims", {})
    wheres = {claim.id: claim.where for claim in source_claims}
    if set(wheres) - set(era):
        raise ValueError("the era's source claims differ from the results': run `python -m tools.ladder era`.")
    claims = {key: {**meta, "where": wheres.get(key, meta["where"])} for key, meta in era.items()}
    relabelled = {**results, "probes": {key: {**stored[key], "where": table[key]["where"]} for key in stored}}
    if era:
        relabelled["era"] = {**results["era"], "claims": claims}
    return relabelled


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
