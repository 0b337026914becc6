"""Claim boxes' verdict lines, written from the ladder's data: the box names its probes, this module writes the words.

A claim box (``<details><summary><b>Claim check · ...``) that the release ladder tests ends with a block

```text
<!-- verdict: probe_id [probe_id ...] -->
(written here, never typed)
<!-- /verdict -->
```

and :func:`write_verdicts` fills it with one sentence per probe, read from ``docs/ladder/results.json`` (the pin's
verdict, the bisected change that led to it) and :mod:`course_facts.pins` (the pinned release): the release it holds on,
since when, and what it was before. ``make execute`` and ``python -m tools.notebook_format apply`` write them with
the other shared parts, so a bump (``python -m tools.bump``) followed by ``make ladder`` rewrites every verdict line
without a hand on a notebook.

Everywhere else a lesson's markdown does not type the pinned release: it says "the pinned release" or leaves the
number to a generated part; :func:`typed_pin` finds where it does (``tests/test_release_claims.py`` fails on any).
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from course_facts.pins import pinned, release_key

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "ladder" / "results.json"
BLOCK = re.compile(r"<!-- verdict: (?P<probes>[\w ]+?) -->\n(?P<body>.*?)<!-- /verdict -->", re.DOTALL)
WORDS = {"holds": "holds", "does not hold": "does not hold", "cannot run": "cannot run"}


class VerdictError(ValueError):
    """A verdict block names a probe the ladder's results lack; the message says what to do."""


@cache
def _results(path: Path = RESULTS) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def results() -> dict:
    """The committed ladder results (read once per process; :func:`reload` after ``make ladder`` wrote them)."""
    return _results(RESULTS)


def reload() -> None:
    _results.cache_clear()


def sentence(probe: str, data: dict, pin: str) -> str:
    """One verdict line: ``probe``'s verdict on the pin, since when, and what it was before (the bisected change
    into that verdict), from the results ``data``."""
    rows = data.get("results", {})
    if pin not in rows:
        raise VerdictError(
            f"docs/ladder/results.json has no row for the pinned transformers {pin}: run `make ladder` (and "
            "`make ladder BISECT=1`) before writing the verdicts"
        )
    if probe not in rows[pin]["probes"]:
        raise VerdictError(
            f"a claim box names the probe {probe!r}, which the ladder's results for {pin} lack: fix the name "
            "(tools/ladder/probes.py lists them) or run `make ladder` after adding the probe"
        )
    verdict = rows[pin]["probes"][probe]["verdict"]
    into = [
        change
        for change in data.get("changes", [])
        if change["probe"] == probe and release_key(change["first_new"]) <= release_key(pin)
    ]
    into.sort(key=lambda change: release_key(change["first_new"]))
    head = f"Ladder, `{probe}`: **{WORDS[verdict]}** on the pinned release, {pin}"
    if not into:
        oldest = data["releases"][0]
        return f"{head}, as on every release the ladder ran since {oldest}."
    last = into[-1]
    before = "it could not run" if last["old"] == "cannot run" else f"it {WORDS[last['old']]}"
    how = (
        "adjacent rungs"
        if last["last_old"] in data["releases"] and last["first_new"] in data["releases"]
        else ("bisected")
    )
    return f"{head}, since {last['first_new']}; on {last['last_old']} {before} ({how})."


def write_verdicts(markdown: str, data: dict | None = None, pin: str | None = None) -> str:
    """``markdown`` with every verdict block filled from the results (the blocks' own text is replaced)."""
    data = results() if data is None else data
    pin = pinned() if pin is None else pin

    def fill(match: re.Match) -> str:
        probes = match.group("probes").split()
        lines = [sentence(probe, data, pin) for probe in probes]
        return f"<!-- verdict: {' '.join(probes)} -->\n" + "\n".join(lines) + "\n<!-- /verdict -->"

    return BLOCK.sub(fill, markdown)


def named_probes(markdown: str) -> list[str]:
    """The probes the verdict blocks of ``markdown`` name, in order."""
    return [probe for match in BLOCK.finditer(markdown) for probe in match.group("probes").split()]


def pin_pattern(pin: str) -> re.Pattern:
    """The pinned release typed as ``X.Y`` or ``X.Y.Z`` (not inside a longer number)."""
    minor = ".".join(pin.split(".")[:2])
    return re.compile(rf"(?<![\d.]){re.escape(minor)}(?:\.\d+)?(?![\d])")


def typed_pin(markdown: str, pin: str | None = None) -> list[str]:
    """The places ``markdown`` types the pinned release outside its generated verdict blocks, with their words."""
    pin = pinned() if pin is None else pin
    typed = BLOCK.sub("", markdown)
    return [" ".join(typed[max(0, m.start() - 40) : m.end() + 20].split()) for m in pin_pattern(pin).finditer(typed)]
