"""tools/renumber.py: a lesson's number lives in the registry; moving it renames its files and the rest follows.

The end-to-end test copies the course to a scratch folder, moves the last lesson to a free number there, and runs
that lesson's own tests (its exercises, under their new ids) and the registry's, in the copy.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from course_facts.registry import lessons
from tools import renumber

ROOT = Path(__file__).resolve().parent.parent


def _copy_course(target: Path) -> Path:
    listing = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    tracked = subprocess.run(listing, cwd=ROOT, capture_output=True, text=True, check=True)
    for name in filter(None, tracked.stdout.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


def test_moving_a_lesson_renames_its_files_and_its_tests_pass_in_the_copy(tmp_path: Path) -> None:
    course = _copy_course(tmp_path / "course")
    last = lessons()[-1]
    new = f"{int(last.number) + 5:02d}"
    moved = subprocess.run(
        [sys.executable, "-m", "tools.renumber", last.number, new], cwd=course, capture_output=True, text=True
    )
    assert moved.returncode == 0, moved.stderr[-3000:]
    topic = last.file[len(last.number) :]
    assert (course / "notebooks" / f"{new}{topic}").is_file()
    assert not (course / "notebooks" / last.file).exists()
    for folder in ("exercises/checks", "exercises/solutions"):
        assert (course / folder / f"lesson_{new}.py").is_file() and not (
            course / folder / f"lesson_{last.number}.py"
        ).exists()
    registry = [entry.number for entry in lessons(course / "lessons.toml")]
    assert new in registry and last.number not in registry
    before = lessons()[-2]
    navigation = (course / "notebooks" / before.file).read_text(encoding="utf-8")
    assert f"{new}{topic}" in navigation and last.file not in navigation, "the previous lesson links to the new file"
    code = (
        f"from exercises.checks import lesson_{new} as m; "
        "print(' '.join(sorted(v.name for v in vars(m).values() if type(v).__name__ == 'Exercise')))"
    )
    ids = subprocess.run([sys.executable, "-c", code], cwd=course, capture_output=True, text=True, check=True)
    assert ids.stdout.split() and all(name.startswith(f"{new}.") for name in ids.stdout.split()), ids.stdout
    tests = [f"tests/lesson_{new}/test_answers.py", "tests/test_registry.py", "tests/test_lessons_export.py"]
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
        cwd=course,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]


@pytest.mark.parametrize(
    "old, new, message",
    [("13", "1x", "two digits"), ("99", "98", "no lesson '99'"), ("13", "12", "exists already")],
)
def test_a_move_that_cannot_be_done_says_why(tmp_path: Path, old: str, new: str, message: str) -> None:
    course = tmp_path / "course"
    (course / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "lessons.toml", course / "lessons.toml")
    with pytest.raises(renumber.RenumberError, match=message):
        renumber.renumber(old, new, course)


def test_prose_is_rewritten_but_other_numbers_are_left_alone() -> None:
    text = "See lesson 13 and lessons 13 to 14; lesson 130 and lesson_13 and lesson_130; 13_x.ipynb."
    rewritten = renumber._rewrite(text, "13", "18", "13_x.ipynb", "18_x.ipynb")
    assert rewritten == "See lesson 18 and lessons 18 to 14; lesson 130 and lesson_18 and lesson_130; 18_x.ipynb."


def test_section_references_run_folders_and_the_sources_table_follow() -> None:
    text = "Tested in 16 §1; 03 §4; 116 §2 and 5.16 §3."
    assert renumber._rewrite(text, "16", "17", "16_x.ipynb", "17_x.ipynb") == (
        "Tested in 17 §1; 03 §4; 116 §2 and 5.16 §3."
    )
    cell = 'helpers.run_dir(\\"16_args\\"), f"16_{name}", "116_x", run_dir("05_other")'
    assert renumber._run_folders(cell, "16", "17") == (
        'helpers.run_dir(\\"17_args\\"), f"17_{name}", "116_x", run_dir("05_other")'
    )
    readme = (
        "## Syllabus\n| 16 | x |\n## Sources\n| source | lessons |\n|---|---|\n"
        "| **Guide** | a post, 2021 | 4.x | 00, 16, 17 |\n| **Other** | 16 posts | 4.x | 02 |\n## Next\n| 16 |\n"
    )
    assert renumber._sources_table(readme, "16", "03") == readme.replace("00, 16, 17", "00, 03, 17")


def test_relabel_takes_the_references_and_refuses_a_changed_claim() -> None:
    from tools.ladder.results_file import relabel

    table = {"p": {"claim": "c", "source": "s", "where": "17 §1"}}
    results = {"probes": {"p": {"claim": "c", "source": "s", "where": "16 §1"}}, "results": {"5.0": {"x": 1}}}
    assert relabel(results, table) == {**results, "probes": table}
    with pytest.raises(ValueError, match="run the ladder"):
        relabel(results, {"p": {"claim": "another", "source": "s", "where": "17 §1"}})
