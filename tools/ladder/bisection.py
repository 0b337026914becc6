"""Bisection (``python -m tools.ladder bisect``): every change of verdict between two rungs, narrowed to two
adjacent final releases, each release run with its era's packages.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable

from tools.ladder.environments import install, probe, requirements_of, venv_of
from tools.ladder.package_index import command_newest, era_cap, fetch_index, final_releases
from tools.ladder.page import write_page
from tools.ladder.results_file import problems, read_results, write_results
from tools.ladder.rungs import INDEX, PAGE, RELEASES, RESULTS, ROOT, LadderError, Release, error_line, version_key


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
    if version_key(version) >= (4, 30):
        cap = era_cap(uploaded, accelerate)
        if cap is None:
            raise LadderError(f"no accelerate release is older than transformers {version}")
        pins.append(f"accelerate<={cap}")
        if version_key(cap) < (0, 23):  # accelerate before 0.23 imports pkg_resources, which setuptools 81 removed
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
        older = max(
            (r for r in RELEASES if version_key(r.version) < version_key(version)), key=lambda r: version_key(r.version)
        )
        newer = min(
            (r for r in RELEASES if version_key(r.version) > version_key(version)), key=lambda r: version_key(r.version)
        )
        item = era_release(version, older, newer, uploaded[version], accelerate)
        cached = store.get(version)
        if cached and cached.get("pins") == requirements_of(item):  # the same packages: the result stands
            if "not_run" in cached:
                return None
            if set(probes) <= set(cached["probes"]):
                return {key: cached["probes"][key]["verdict"] for key in probes}
        print(
            f"== transformers {version} ({item.why}; {', '.join(requirements_of(item)[1:]) or 'no pins'})", flush=True
        )
        entry = {"pins": requirements_of(item), "between": list(item.between)}
        try:
            entry["install_seconds"] = install(item)
            counters["installed"] += 1
            report = probe(item, probes)
        except LadderError as error:
            entry["not_run"] = error_line(error)
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
        releases={v: store[v] for v in sorted(store, key=version_key)},
    )
    if run_note is not None:
        bisection["runs"] = [*bisection.get("runs", []), run_note]
    if changes_found is not None:
        results["changes"] = changes_found
    write_results(results)
