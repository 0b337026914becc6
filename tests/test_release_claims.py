"""No lesson names a release as "the first" unless the ladder's bisection found a change there, and no verdict
names a release that is neither the pin nor one the ladder ran.

A rung of the ladder is not a first release: "5.14.1, the first release that accepts X" is only true when the
bisection (``python -m tools.ladder bisect``) found the change between 5.14.0 and 5.14.1. The lessons' markdown is
read; every release that a sentence calls "the first" must be the ``first_new`` of a change in
``docs/ladder/results.json``. The reading matches the before-stop hook's (a release followed, within 40
characters and no full stop, by "the first") and adds the other order ("the first release that ... is X.Y.Z").

A verdict ("holds on X.Y", "does not hold on X.Y", "changed in X.Y.Z", "no longer holds ... X.Y.Z") names the
pinned release (``course_facts.pins.pinned_minor()``, so a bump makes every verdict on the old pin fail here until it is
re-read) or a release the ladder ran or read (a rung, a release the bisection ran, one the era read from its wheel).
These tests only read the notebooks.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from course_facts.pins import SOURCE_RELEASE, pinned, pinned_minor
from tools.bump import VERDICT
from tools.verdicts import typed_pin

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "ladder" / "results.json"
NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
RELEASE = r"\b([45]\.\d+\.\d+)\b"
CLAIMS = (
    # "5.14.1, the first release that accepts ...", the hook's reading
    re.compile(RELEASE + r"[^.]{0,40}?\bthe first\b", re.IGNORECASE),
    # "the first release with ... is 5.2.0"
    re.compile(r"\bthe first (?:release|version|transformers)\b[^.]{0,60}?" + RELEASE, re.IGNORECASE),
)


def first_claims(markdown: str) -> list[tuple[str, str]]:
    """``(release, the words around it)`` for every place the text calls a release "the first": the release before
    "the first" (the hook's reading) or, where there is none, the release after "the first release"."""
    before, after = CLAIMS
    found, taken = [], set()
    for match in before.finditer(markdown):
        found.append((match.group(1), " ".join(match.group(0).split())))
        taken.add(match.end())
    for match in after.finditer(markdown):
        if markdown.lower().find("the first", match.start()) + len("the first") not in taken:
            found.append((match.group(1), " ".join(match.group(0).split())))
    return found


def markdown_of(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")


def bisected_firsts() -> set[str]:
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    return {change["first_new"] for change in results.get("changes", [])}


@pytest.mark.parametrize(
    ("text", "releases"),
    [
        ("places the rename in **5.14.1** (refused on 5.14.1, the first release that accepts it)", ["5.14.1"]),
        ("**4.46.3**, the first that has `compute_loss_func`", ["4.46.3"]),
        ("The first release with `train_sampling_strategy` is 5.2.0; 5.1.0 has `group_by_length`.", ["5.2.0"]),
        ("raises `NameError` on any version, the first time an evaluation calls it", []),
        ("changed in 5.2.0. The first batch is padded", []),
        ("from **4.46.0**, the first release that accepts it (4.45.2 has none)", ["4.46.0"]),
    ],
)
def test_the_reading_finds_a_first_release_in_either_order(text: str, releases: list[str]) -> None:
    assert [release for release, _ in first_claims(text)] == releases


def test_the_lessons_exist_and_the_results_have_bisected_changes() -> None:
    assert len(NOTEBOOKS) >= 12
    assert len(bisected_firsts()) >= 5, "docs/ladder/results.json has no bisected changes: make ladder BISECT=1"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_every_first_release_in_a_lesson_is_a_bisected_change(path: Path) -> None:
    firsts = bisected_firsts()
    wrong = [f"{release}: ...{words}..." for release, words in first_claims(markdown_of(path)) if release not in firsts]
    assert wrong == [], (
        f"{path.name} calls a release 'the first' that the ladder's bisection does not start a change at "
        "(docs/ladder/results.json, changes[].first_new); name the bisected release or say 'a rung':\n  "
        + "\n  ".join(wrong)
    )


# "4.8.2, `transformers/trainer.py`, line 204:" then a fenced block: a quote of the wheel that `tools.ladder era` read
QUOTE = re.compile(
    re.escape(SOURCE_RELEASE) + r", `(transformers/[\w/]+\.py)`, line (\d+):\n```\w*\n(.*?)\n```", re.DOTALL
)


def era_quotes(markdown: str) -> list[tuple[str, int, str]]:
    return [(name, int(line), text) for name, line, text in QUOTE.findall(markdown)]


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_lessons_quote_4_8_2_from_the_wheel_and_only_what_it_says() -> None:
    era = json.loads(RESULTS.read_text(encoding="utf-8"))["era"]
    read = {(item["file"], item["line"]): item["text"] for item in era["excerpts"].values()}
    quotes = [(path.name, *quote) for path in NOTEBOOKS for quote in era_quotes(markdown_of(path))]
    assert len(quotes) >= 10, f"the lessons' never-held boxes quote {SOURCE_RELEASE}'s source"
    wrong = [
        f"{notebook}: {name}, line {line}"
        for notebook, name, line, text in quotes
        if (name, line) not in read or _words(text) not in _words(read[(name, line)])
    ]
    assert wrong == [], (
        f"quotes that are not {SOURCE_RELEASE}'s text at that line (run `python -m tools.ladder era`):\n"
        + "\n".join(wrong)
    )


def test_a_changed_quote_is_caught() -> None:
    text = f"{SOURCE_RELEASE}, `transformers/training_args.py`, line 139:\n"
    text += "```text\nmax_steps (int): Overrides nothing.\n```\n"
    ((name, line, quoted),) = era_quotes(text)
    assert (name, line) == ("transformers/training_args.py", 139)
    era = json.loads(RESULTS.read_text(encoding="utf-8"))["era"]
    assert _words(quoted) not in _words(era["excerpts"]["max_steps_doc"]["text"])


def ladder_releases() -> set[str]:
    """Every release the ladder ran or read: the rungs, the releases the bisection ran, the releases whose wheels
    the era read, and both ends of every change."""
    results = json.loads(RESULTS.read_text(encoding="utf-8"))
    era = results.get("era", {})
    found = set(results["releases"])
    found |= {v for v, entry in results.get("bisection", {}).get("releases", {}).items() if "probes" in entry}
    found |= {v for v, entry in era.get("read", {}).items() if "not_run" not in entry}
    for change in [*results.get("changes", []), *era.get("changes", [])]:
        found |= {change["last_old"], change["first_new"]}
    return found


def wrong_verdicts(markdown: str, known: set[str]) -> list[str]:
    """The verdicts of ``markdown`` that name a release other than the pin and the ``known`` ones."""
    allowed = {pinned_minor(), pinned(), *known}
    return [
        " ".join(match.group(0).split())
        for match in VERDICT.finditer(markdown)
        if match.group("release") not in allowed
    ]


@pytest.mark.parametrize(
    ("text", "releases"),
    [
        ("**holds on 5.1**, **does not hold on 5.1**", ["5.1", "5.1"]),
        ("> **Claim check** ... **Does not hold on 5.1.** The run shows", ["5.1"]),
        ("`optim='adamw_hf'` changed in **4.50.0**; 4.49.0 still behaves the old way", ["4.50.0"]),
        ("**No longer holds**: false today, and the 4.8.2 documentation says", ["4.8.2"]),
        ("no longer holds. The 4.8.2 wheel reads", []),  # another sentence
        ("**No longer holds.** Pass the ratio as `warmup_steps=0.1`", []),  # not a release
        ("holds on trl 1.16 too", []),
        ("It holds on every release; 5.1 keeps it.", []),
        ("the 4.8.2 wheel, read by `tools.ladder era`", []),
    ],
)
def test_the_reading_finds_the_release_of_each_verdict(text: str, releases: list[str]) -> None:
    assert [match.group("release") for match in VERDICT.finditer(text)] == releases


def test_a_verdict_on_a_release_the_ladder_never_ran_is_caught() -> None:
    known = ladder_releases()
    assert {pinned(), SOURCE_RELEASE, "4.46.0"} <= known
    text = f"**holds on {pinned_minor()}**; **does not hold on 5.23**; changed in **4.46.0**; changed in 4.46.9."
    assert wrong_verdicts(text, known) == ["does not hold on 5.23", "changed in 4.46.9"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_every_verdict_names_the_pin_or_a_release_the_ladder_ran(path: Path) -> None:
    wrong = wrong_verdicts(markdown_of(path), ladder_releases())
    assert wrong == [], (
        f"{path.name} states a verdict on a release that is neither the pin ({pinned_minor()}, requirements.txt) nor "
        "one the ladder ran or read (docs/ladder/results.json). After a bump (python -m tools.bump), re-read the "
        f"claim against a fresh run and write its verdict on {pinned_minor()}; a verdict on another release names "
        "one the ladder ran (docs/ladder.md):\n  " + "\n  ".join(wrong)
    )


# ---------------------------------------------------------------------------------------------------------------
# The pinned release is data: no markdown cell types it (tools/verdicts.py writes the claim boxes' verdict lines)
# ---------------------------------------------------------------------------------------------------------------
def typed_pins(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return [
        f"cell {number}: ...{words}..."
        for number, cell in enumerate(cells, start=1)
        if cell["cell_type"] == "markdown"
        for words in typed_pin("".join(cell["source"]))
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_no_markdown_cell_types_the_pinned_release(path: Path) -> None:
    typed = typed_pins(path)
    assert typed == [], (
        f"{path.name} types the pinned release ({pinned()}, requirements.txt) in its markdown; say 'the pinned "
        "release', or name the probe in the claim box's '<!-- verdict: PROBE -->' block and let "
        "`python -m tools.notebook_format apply` write the line (tools/verdicts.py):\n  " + "\n  ".join(typed)
    )


def test_a_typed_pin_is_caught_and_a_written_verdict_line_is_not() -> None:
    minor = pinned_minor()
    written = f"<!-- verdict: some_probe -->\nLadder, `some_probe`: **holds** on the pinned release, {pinned()}.\n"
    written += "<!-- /verdict -->"
    assert typed_pin(written) == []
    typed = typed_pin(f"It holds on {minor}. {written} Since **{pinned()}** too; 1{minor} and {minor}1 are not it.")
    assert [words.split("holds on ")[-1] if "holds" in words else words for words in typed][0].startswith(minor)
    assert len(typed) == 2
