"""tools/pattern_check.py on made-up notebooks: each rule catches what it is for, and passes what it allows."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from tools import pattern_check

SETUP = "import helpers\nprofile = helpers.setup_notebook()\n"


def _check(tmp_path: Path, *cells: tuple[str, list[str]]) -> pattern_check.Report:
    nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["hide-input"]}, "source": [SETUP]}]}
    nb["cells"] += [{"cell_type": "code", "metadata": {"tags": tags}, "source": [source]} for source, tags in cells]
    path = tmp_path / "99_toy.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return pattern_check.check_notebook(path)


def test_a_pattern_with_commented_loaders_passes(tmp_path: Path) -> None:
    pattern = (
        "from helpers import run_dir\nfrom helpers.models import load_model\n"
        "# your project: AutoModelForSequenceClassification.from_pretrained(name)\nmodel = load_model()\n"
        "folder = run_dir('x')\n"
    )
    report = _check(tmp_path, (pattern, ["pattern"]))
    assert report.pattern == [] and report.needs_tucked == [] and report.helper_cells == []


def test_a_pattern_calling_an_instrument_or_the_profile_fails(tmp_path: Path) -> None:
    report = _check(
        tmp_path,
        ("import helpers\ntrainer = helpers.quiet(trainer)\n", ["pattern"]),
        ("n = profile.max_length\n", ["pattern"]),
    )
    assert any("helpers.quiet" in problem for problem in report.pattern)
    assert any("profile" in problem for problem in report.pattern)


def test_a_loader_without_its_comment_fails(tmp_path: Path) -> None:
    report = _check(tmp_path, ("from helpers.data import load_reviews\nreviews = load_reviews()\n", ["pattern"]))
    assert any("your project" in problem for problem in report.pattern)


def test_a_shown_cell_using_a_tucked_name_fails(tmp_path: Path) -> None:
    report = _check(
        tmp_path,
        ("class Hidden:\n    pass\n", ["hide-input"]),
        ("x = Hidden()\n", []),
        ("from exercises.checks import lesson_99 as exercises\nexercises.q1.check()\nHidden\n", []),
    )
    assert len(report.needs_tucked) == 1 and "Hidden" in report.needs_tucked[0]


def test_instrument_cells_are_counted_loaders_and_plots_are_not(tmp_path: Path) -> None:
    report = _check(
        tmp_path,
        ("import helpers\nhelpers.quiet(t)\n", []),
        ("from helpers.performance import compare_step_times\n", []),
        ("from helpers.plots import finish, new_axes\ndata = helpers.load_reviews()\n", []),
    )
    assert len(report.helper_cells) == 2


def test_a_lessons_own_loader_passes_in_its_lesson_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(pattern_check.LESSON_LOADERS, "99", frozenset({"toy_data.load_toy"}))
    pattern = "from helpers.toy_data import load_toy\n# your project: load_dataset('x')\ntoy = load_toy()\n"
    report = _check(tmp_path, (pattern, ["pattern"]), ("import helpers\nt = helpers.toy_data.load_toy()\n", []))
    assert report.pattern == [] and report.helper_cells == []  # a loader, not an instrument cell
    monkeypatch.setitem(pattern_check.LESSON_LOADERS, "99", frozenset({"toy_data.load_other"}))
    report = _check(tmp_path, (pattern, ["pattern"]))
    assert any("helpers.toy_data.load_toy" in problem for problem in report.pattern)


def test_a_lessons_own_loader_still_needs_its_comment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(pattern_check.LESSON_LOADERS, "99", frozenset({"toy_data.load_toy"}))
    report = _check(tmp_path, ("from helpers.toy_data import load_toy\ntoy = load_toy()\n", ["pattern"]))
    assert any("load_toy() needs" in problem for problem in report.pattern)


def test_every_lesson_loader_exists_and_its_files_are_copied() -> None:
    files = pattern_check.loader_files()
    for names in pattern_check.LESSON_LOADERS.values():
        for name in names:
            module, attribute = name.rsplit(".", 1)
            assert hasattr(importlib.import_module(f"helpers.{module}"), attribute), name
            base = f"{module}.py" in ("models.py", "data.py")  # the script test copies these for every lesson
            assert base or module in files or f"{module}.py" in files, (name, files)
    # the loader modules' own helpers imports come along (capstone imports helpers.device); instruments do not
    assert "device.py" in files and "trainers.py" not in files and "models.py" not in files
