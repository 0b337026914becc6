"""The register of rules (tools/rules.py, docs/rules.md): each rule's sentence is in its lesson's main text, the
page is what the markers give, and every lesson 00 to 18 has its rules registered."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tools import rules

REGISTERED = rules.collect()
LESSONS = [f"{number:02d}" for number in range(19)]  # the lessons issue 59 asks the register to cover


@pytest.mark.parametrize("rule", REGISTERED, ids=lambda rule: f"{rule.lesson}-{rule.test.split('::')[1]}-{rule.line}")
def test_rule_sentence_is_in_the_main_text(rule: rules.Rule) -> None:
    assert rules.problems(rule) == []


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_has_rules_registered(lesson: str) -> None:
    assert any(rule.lesson == lesson for rule in REGISTERED), (
        f"lesson {lesson} has no rule registered: add tests/lesson_{lesson}/test_rules.py with a "
        "@pytest.mark.rule(...) marker for each rule its main text states (tools/rules.py)"
    )


def test_page_is_current() -> None:
    current = rules.PAGE.read_text(encoding="utf-8") if rules.PAGE.exists() else ""
    assert current == rules.page(REGISTERED), "docs/rules.md is stale: run python -m tools.rules"


def _notebook(tmp_path: Path, *markdown: str) -> Path:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    cells = [{"cell_type": "markdown", "metadata": {}, "source": text} for text in markdown]
    path = folder / "07_demo.ipynb"
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))
    return folder


def _rule(text: str, section: str = "5. Accumulation") -> rules.Rule:
    return rules.Rule("07", section, rules.normalise(text), ("accumulation 3",), "tests/x.py::test_x", 1)


def test_sentence_found_across_line_breaks_under_its_heading(tmp_path: Path) -> None:
    folder = _notebook(tmp_path, "## 5. Accumulation\n\nSum the loss and\n   divide by `num_items_in_batch`.")
    assert rules.problems(_rule("Sum the loss and divide by `num_items_in_batch`."), folder) == []


def test_sentence_only_in_a_box_or_under_another_heading_fails(tmp_path: Path) -> None:
    folder = _notebook(
        tmp_path,
        "## 4. Other\n\nAlways sum.",
        "## 5. Accumulation\n\n<details><summary>Box</summary>\n\nNever average.\n</details>",
    )
    (boxed,) = rules.problems(_rule("Never average."), folder)
    assert "not in the main text" in boxed
    (elsewhere,) = rules.problems(_rule("Always sum."), folder)
    assert "under another heading" in elsewhere
    (no_heading,) = rules.problems(_rule("Always sum.", section="9. Missing"), folder)
    assert "no heading starts with" in no_heading


def test_collector_reads_markers_without_importing(tmp_path: Path) -> None:
    path = tmp_path / "lesson_07" / "test_rules.py"
    path.parent.mkdir()
    path.write_text(
        textwrap.dedent(
            """
            import pytest
            raise SystemExit("never imported")

            @pytest.mark.rule(lesson="07", section="5. A", text="Sum  it.", covers=["uneven batch", "accumulation 3"])
            @pytest.mark.rule(lesson="07", section="Recap", text="Always sum.", covers=["2 processes"])
            def test_sum():
                pass
            """
        )
    )
    found = rules.rules_in(path)
    assert [(rule.section, rule.text, rule.covers) for rule in found] == [
        ("5. A", "Sum it.", ("uneven batch", "accumulation 3")),
        ("Recap", "Always sum.", ("2 processes",)),
    ]
    assert found[0].test.endswith("lesson_07/test_rules.py::test_sum")


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('lesson="7", section="A", text="t", covers=["c"]', "two-digit number"),
        ('lesson="08", section="A", text="t", covers=["c"]', "belongs in tests/lesson_08/test_rules.py"),
        ('lesson="07", section="A", text="t", covers=[]', "covers= must be a non-empty list"),
        ('lesson="07", section="A", text="t"', "missing covers"),
        ('lesson="07", section="A", text=TEXT, covers=["c"]', "must be a literal"),
    ],
)
def test_collector_rejects_a_malformed_marker(tmp_path: Path, marker: str, message: str) -> None:
    path = tmp_path / "lesson_07" / "test_rules.py"
    path.parent.mkdir()
    path.write_text(f"import pytest\n\n@pytest.mark.rule({marker})\ndef test_x():\n    pass\n")
    with pytest.raises(rules.RuleError, match=message):
        rules.rules_in(path)
