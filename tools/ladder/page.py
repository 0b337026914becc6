"""``docs/ladder.md``, generated from the results file (never typed): each sentence with the release where it
changed, the grid of every rung, the evidence, the bisection, the era and the rungs.
"""

from __future__ import annotations

import re

from course_facts.pins import SOURCE_RELEASE
from tools.ladder.results_file import changes
from tools.ladder.rungs import MARKS, PAGE, REGISTRY, release, version_key


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
        "0.13.2, which 4.23 is the first transformers to accept), so "
        + SOURCE_RELEASE
        + ", the version the 2021 posts were "
        "written for, is read from its wheel, not run (the last section).",
        "",
        "This page is written by `tools/ladder/` from `docs/ladder/results.json` (`make ladder`, "
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
        for version, entry in sorted(shown, key=lambda pair: version_key(pair[0])):
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
            f"- {version}: {_escape(reason)}"
            for version, reason in sorted(not_run.items(), key=lambda i: version_key(i[0]))
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
