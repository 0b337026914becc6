"""course_facts.registry: lessons.toml is the one list of lessons, read by every page and tool."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_facts import registry
from course_facts.registry import RegistryError, lesson, lessons, neighbours, record_time

ROOT = Path(__file__).resolve().parent.parent


def test_every_lesson_has_its_notebook_and_every_notebook_its_lesson() -> None:
    files = [entry.file for entry in lessons()]
    assert files == sorted(path.name for path in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert all(3 <= len(entry.goals) <= 6 for entry in lessons()), "3 to 6 learning goals each"
    assert [entry.number for entry in lessons()] == sorted(entry.number for entry in lessons())


def test_lookup_by_number_file_or_stem_and_neighbours() -> None:
    first, second = lessons()[:2]
    assert lesson(first.number) == lesson(first.file) == lesson(first.stem) == first
    assert neighbours(first.number) == (None, second)
    assert neighbours(lessons()[-1].number)[1] is None
    with pytest.raises(RegistryError, match="no lesson '99'"):
        lesson("99")


def test_record_time_changes_only_that_lessons_lines(tmp_path: Path) -> None:
    copy = tmp_path / "lessons.toml"
    shutil.copy(registry.REGISTRY, copy)
    target = lessons(copy)[3]
    record_time(target.file, "cpu", 12.345, "2-core CPU", copy)
    record_time(target.file, "gpu", 3.21, "NVIDIA H200", copy)
    after = {entry.number: entry for entry in lessons(copy)}
    assert after[target.number].seconds("cpu") == 12.3 and after[target.number].machine("gpu") == "NVIDIA H200"
    assert after[target.number].pitfalls == target.pitfalls and after[target.number].goals == target.goals
    untouched = [entry for entry in lessons(copy) if entry.number != target.number]
    assert untouched == [entry for entry in lessons() if entry.number != target.number]
    before_lines = registry.REGISTRY.read_text(encoding="utf-8").splitlines()
    changed = [line for line in copy.read_text(encoding="utf-8").splitlines() if line not in before_lines]
    assert all(re.match(r"(cpu|cpu_loaded|gpu)_(s|machine) = ", line) for line in changed), changed


def test_a_new_measurement_lands_after_the_lessons_fields_not_between_file_and_title(tmp_path: Path) -> None:
    copy = tmp_path / "lessons.toml"
    text = registry.REGISTRY.read_text(encoding="utf-8")
    copy.write_text(re.sub(r"(?m)^gpu_(s|machine) = .*\n", "", text), encoding="utf-8")
    target = lessons(copy)[2]
    record_time(target.file, "gpu", 4.56, "NVIDIA H200", copy)
    block = copy.read_text(encoding="utf-8").split(f'file = "{target.file}"\n', 1)[1].split("[[lesson", 1)[0]
    keys = re.findall(r"(?m)^([a-z_]+) = ", block)
    assert keys[0] == "title" and keys[-2:] == ["gpu_s", "gpu_machine"], keys


def test_the_registry_and_the_package_import_without_the_libraries() -> None:
    """``import course_facts.registry`` is a TOML reader: no torch, transformers or datasets, few modules."""
    code = (
        "import sys; before = len(sys.modules); import course_facts.registry, helpers; "
        "heavy = [name for name in ('torch', 'transformers', 'datasets') if name in sys.modules]; "
        "print(len(sys.modules) - before, heavy)"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    added, heavy = run.stdout.split(" ", 1)
    assert heavy.strip() == "[]", f"importing helpers loaded {heavy.strip()}"
    assert int(added) <= 150, f"import course_facts.registry loaded {added} modules (at most 150)"


def test_the_packages_names_load_on_first_use() -> None:
    import helpers

    assert helpers.load_reviews is helpers.data.load_reviews and helpers.models.__name__ == "helpers.models"
    with pytest.raises(AttributeError, match="no attribute 'not_a_helper'"):
        helpers.not_a_helper  # noqa: B018


@pytest.mark.parametrize(
    "row, message",
    [
        ('number = "05"\nfile = "5_x.ipynb"', "NN_topic.ipynb"),
        ('number = "05"\nfile = "06_x.ipynb"', "starts with its own number"),
        ('number = "05"', "missing file"),
    ],
)
def test_a_malformed_row_is_a_clear_error(tmp_path: Path, row: str, message: str) -> None:
    rest = 'title = "t"\nsummary = "s"\ngoals = ["a"]\nexplain_minutes = 1\nexercise_minutes = 1\n'
    path = tmp_path / "lessons.toml"
    path.write_text(f"[[lesson]]\n{row}\n{rest}", encoding="utf-8")
    with pytest.raises(RegistryError, match=message):
        lessons(path)


def test_two_lessons_with_one_number_are_refused(tmp_path: Path) -> None:
    rest = 'title = "t"\nsummary = "s"\ngoals = ["a"]\nexplain_minutes = 1\nexercise_minutes = 1\n'
    path = tmp_path / "lessons.toml"
    path.write_text(f'[[lesson]]\nnumber = "05"\nfile = "05_a.ipynb"\n{rest}' * 2, encoding="utf-8")
    with pytest.raises(RegistryError, match="more than one lesson"):
        lessons(path)


def test_no_tool_or_browser_test_names_a_notebook_file() -> None:
    """Adding a lesson is one row of lessons.toml: nothing under tools/ or tests/browser/ names a lesson file."""
    names = [entry.file for entry in lessons()] + [entry.stem for entry in lessons()]
    found = []
    for path in [*ROOT.glob("tools/**/*.py"), *ROOT.glob("tools/**/*.sh"), *ROOT.glob("tests/browser/*.py")]:
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(ROOT)}: {name}" for name in names if name in text]
    assert not found, found
