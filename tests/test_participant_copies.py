"""tools/participant_copies.py: the learners' copy has no outputs and no solutions, and its exercises still load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import participant_copies  # noqa: E402


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("participants") / "course"
    participant_copies.make_copies(out)
    return out


def test_every_notebook_is_copied_valid_and_without_outputs(copy_dir: Path) -> None:
    originals = sorted(path.name for path in ROOT.glob(participant_copies.NOTEBOOK_GLOB))
    copies = sorted(path.name for path in (copy_dir / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert copies == originals and copies
    for name in copies:
        notebook = nbformat.read(copy_dir / "notebooks" / name, as_version=4)
        nbformat.validate(notebook)
        for cell in notebook.cells:
            if cell.cell_type == "code":
                assert cell.outputs == [] and cell.execution_count is None, f"{name} still holds outputs"
                assert "execution" not in cell.metadata
        original = nbformat.read(ROOT / "notebooks" / name, as_version=4)
        assert [cell.source for cell in notebook.cells] == [cell.source for cell in original.cells]


def test_no_solutions_and_no_teacher_files(copy_dir: Path) -> None:
    assert not (copy_dir / "helpers" / "solutions").exists()
    for relative in participant_copies.TEACHER_ONLY:
        assert not (copy_dir / relative).exists(), f"{relative} is for teachers"
    for path in (copy_dir / "tests").glob("*.py"):
        assert "helpers.solutions" not in path.read_text(), f"{path.name} needs the solutions"


def test_the_folder_has_what_it_needs_to_work_alone(copy_dir: Path) -> None:
    for relative in (
        "Makefile",
        "pyproject.toml",
        "requirements.txt",
        "requirements-nodeps.txt",
        "helpers/__init__.py",
        "helpers/checks/core.py",
        "helpers/solutions.py",
    ):
        assert (copy_dir / relative).is_file(), f"{relative} is missing"
    assert (copy_dir / participant_copies.MARKER).is_file()


def test_exercises_load_and_solutions_say_ask_your_teacher(copy_dir: Path) -> None:
    """In a fresh interpreter that imports the copy's helpers: every lesson's exercises load, the stubs are
    'not attempted', and solution() prints the withheld message instead of crashing."""
    script = (
        "import importlib, pkgutil, helpers, helpers.checks\n"
        "assert helpers.__file__.startswith(COPY), helpers.__file__\n"
        "from helpers.checks import Exercise, NOT_ATTEMPTED\n"
        "count = 0\n"
        "for info in pkgutil.iter_modules(helpers.checks.__path__):\n"
        "    if info.name.startswith('lesson_'):\n"
        "        module = importlib.import_module('helpers.checks.' + info.name)\n"
        "        for exercise in [v for v in vars(module).values() if isinstance(v, Exercise)]:\n"
        "            assert exercise.evaluate(exercise.stub).status == NOT_ATTEMPTED, exercise.name\n"
        "            exercise.solution()\n"
        "            count += 1\n"
        "print('exercises:', count)\n"
    )
    path = os.pathsep.join(filter(None, [str(copy_dir), os.environ.get("PYTHONPATH")]))  # keeps the network guard
    environment = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, "-c", f"COPY = {str(copy_dir)!r}\n" + script],
        cwd=copy_dir,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    lessons = list((ROOT / "helpers" / "checks").glob("lesson_*.py"))
    if lessons:
        assert participant_copies.WITHHELD_MESSAGE in result.stdout
        assert "def " not in result.stdout and "class " not in result.stdout, "a solution's source leaked"


def test_refuses_to_replace_a_folder_it_did_not_make(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(participant_copies.ParticipantCopyError, match="not made by this tool"):
        participant_copies.make_copies(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_second_run_replaces_the_first(copy_dir: Path) -> None:
    (copy_dir / "stale.txt").write_text("left over")
    report = participant_copies.make_copies(copy_dir)
    assert not (copy_dir / "stale.txt").exists()
    assert any(path.startswith("helpers/solutions/") for path in report["left_out"]) or not list(
        (ROOT / "helpers" / "solutions").glob("*.py")
    )
    assert (copy_dir / "Makefile").is_file() and (copy_dir / participant_copies.MARKER).is_file()
