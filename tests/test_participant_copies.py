"""tools/participant_copies.py: the learners' copy has no outputs and no solutions, points every Colab badge and
set-up cell at the participants' repository (`make participant-copies REPO=owner/name`), has a README written for
learners with the figures of a copy's own suite, and its exercises still load. It is written outside the course
checkout, its marker stays out of the learners' repository, and the workshop guide's steps work end to end: make
the copy, commit it, clone it as a learner, run its tests there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
from tools import participant_copies  # noqa: E402
from tools.notebook_format import SETUP_MARKER, course_config  # noqa: E402

PARTICIPANTS = "learners-org/trainer-course-2027"  # a repository name no file of the course contains
COURSE_REPOSITORY = course_config()["repository"]
README_TESTS = ["tests/test_notebook_nav.py", "tests/test_sources.py"]  # the copy's tests that read its README
CLONE_TESTS = [*README_TESTS, "tests/test_lab.py"]  # the part of its suite run in a learner's clone


@pytest.fixture(scope="module")
def copy_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("participants") / "course"
    participant_copies.make_copies(PARTICIPANTS, out)
    return out


def _text_files(folder: Path) -> dict[str, str]:
    found = {}
    for path in folder.rglob("*"):
        if path.is_file() and path.suffix in {".md", ".ipynb", ".py", ".toml", ".txt", ".yml", ".sh", ""}:
            try:
                found[str(path.relative_to(folder))] = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
    return found


def test_every_badge_and_set_up_cell_points_at_the_participants_repository(copy_dir: Path) -> None:
    """On Colab a learner's notebook clones what COURSE_REPO names, and a badge opens what its address names:
    both must be the participants' repository, which holds no solutions and no outputs."""
    assert PARTICIPANTS != COURSE_REPOSITORY
    files = _text_files(copy_dir)
    leaks = [name for name, text in files.items() if COURSE_REPOSITORY in text]
    assert not leaks, f"the copy still names the full course {COURSE_REPOSITORY}: {leaks}"
    colab = re.compile(r"colab\.research\.google\.com/github/[^)\s\"]+")
    pages = [text for name, text in files.items() if name.endswith((".md", ".ipynb"))]  # not the tools' templates
    badges = [url for text in pages for url in colab.findall(text)]
    notebooks = sorted((copy_dir / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert len(badges) >= 2 * len(notebooks), "a badge in each notebook and in the README's syllabus"
    assert all(url.startswith(f"colab.research.google.com/github/{PARTICIPANTS}/blob/") for url in badges), badges
    for path in notebooks:
        setup = [cell for cell in nbformat.read(path, as_version=4).cells if cell.source.startswith(SETUP_MARKER)]
        assert len(setup) == 1 and f'COURSE_REPO = "{PARTICIPANTS}"' in setup[0].source, path.name
    with open(copy_dir / "pyproject.toml", "rb") as handle:
        assert tomllib.load(handle)["tool"]["course"]["repository"] == PARTICIPANTS


def test_the_copy_needs_a_well_formed_repository(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert participant_copies.main(["--out", str(tmp_path / "copy")]) == 2
    assert "make participant-copies REPO=owner/name" in capsys.readouterr().err
    with pytest.raises(participant_copies.ParticipantCopyError, match="owner/name"):
        participant_copies.make_copies("not a repository", tmp_path / "copy")
    assert not (tmp_path / "copy").exists(), "nothing is written for a bad repository"


def test_make_passes_the_repository_on() -> None:
    shown = subprocess.run(
        ["make", "-n", "--no-print-directory", "participant-copies", f"REPO={PARTICIPANTS}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert f"-m tools.participant_copies --repo {PARTICIPANTS}" in shown, shown


def test_the_copy_has_a_readme_for_learners(copy_dir: Path) -> None:
    readme = (copy_dir / "README.md").read_text(encoding="utf-8")
    for teacher_only in ("docs/workshop.md", "participant-copies", "against its solution", "{{"):
        assert teacher_only not in readme, f"the learners' README says {teacher_only!r}"
    assert f"git clone https://github.com/{PARTICIPANTS}.git" in readme
    for entry in participant_copies.lessons():
        assert f"(notebooks/{entry.file})" in readme, f"lesson {entry.number} is missing from the syllabus"
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    missing = [link for link in local if not (copy_dir / link).exists()]
    assert local and not missing, missing


def test_the_copys_own_tests_of_its_readme_pass(copy_dir: Path, learner_clone: dict) -> None:
    """The lessons' link lines point at ``README.md#syllabus`` and their claim boxes at the README's Sources table:
    the copy's own tests of both pass against the learners' README (``make test`` in the copy runs them). They run
    once, in the learner's clone of a copy (:func:`learner_clone`), whose files are the copy's."""
    readme = (copy_dir / "README.md").read_text(encoding="utf-8")
    assert "\n## Syllabus\n" in readme and "\n## Sources\n" in readme
    assert all((copy_dir / test).is_file() for test in README_TESTS), "the copy lost the tests that read its README"
    assert (learner_clone["clone"] / "README.md").read_text(encoding="utf-8") == readme
    ran = learner_clone["ran"]
    assert ran.returncode == 0, ran.stdout[-3000:]
    for test in README_TESTS:
        outcomes = re.findall(rf"^(\w+) {re.escape(test)}::", ran.stdout, re.MULTILINE)  # -rA: every outcome
        assert outcomes and set(outcomes) == {"PASSED"}, (test, ran.stdout[-3000:])


def test_the_copy_passes_its_own_lint(copy_dir: Path) -> None:
    """``make test`` in the copy starts with ``make lint``: the stand-in for the solutions passes it too."""
    ruff = Path(sys.executable).parent / "ruff"
    folders = ["helpers", "tools", "tests", "notebooks"]
    for command in (["check"], ["format", "--check"]):
        result = subprocess.run([str(ruff), *command, *folders], cwd=copy_dir, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-1000:]


def test_the_workshop_guide_tells_teachers_and_learners_the_same_steps() -> None:
    """The guide's "Before the session": make the copies for the participants' repository, publish them, and
    have learners clone that repository (not the full course or a fork of it)."""
    guide = (ROOT / "docs" / "workshop.md").read_text(encoding="utf-8")
    section = guide.split("## Before the session", 1)[1].split("\n## ", 1)[0]
    made = re.search(r"make participant-copies REPO=([\w.-]+/[\w.-]+)", section)
    assert made, "the guide does not say how to make the copies for a repository"
    repository = made.group(1)
    assert f"git clone https://github.com/{repository}.git" in section, "learners clone another repository"
    assert "fork of the course" not in section
    out = participant_copies.default_out(repository)
    assert out.parent == ROOT.parent, "the copy goes next to the course checkout, not into it"
    steps = participant_copies.push_steps(repository, f"../{out.name}", "main")
    assert all(line in section for line in steps.splitlines()), "the guide's publishing steps differ from the tool's"
    update = participant_copies.push_steps(repository, f"../{out.name}", "main", update=True).splitlines()[-1]
    assert f"`{update}`" in " ".join(section.split()), "the guide's update steps differ from the tool's"


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
        kept = [cell for cell in original.cells if participant_copies.TEACHER_TAG not in cell.metadata.get("tags", [])]
        pointed = [cell.source.replace(COURSE_REPOSITORY, PARTICIPANTS) for cell in kept]
        assert [cell.source for cell in notebook.cells] == pointed, "only the repository and teacher-only cells"


def test_no_solutions_and_no_teacher_files(copy_dir: Path) -> None:
    assert not (copy_dir / "exercises" / "solutions").exists()
    for relative in participant_copies.TEACHER_ONLY:
        assert not (copy_dir / relative).exists(), f"{relative} is for teachers"
    for path in (copy_dir / "tests").glob("*.py"):
        assert not participant_copies.needs_solutions(path), f"{path.name} needs the solutions"
    answers = [path for pattern in participant_copies.ANSWER_TESTS for path in ROOT.glob(pattern)]
    assert answers and not [path for path in answers if (copy_dir / path.relative_to(ROOT)).exists()], "answers"
    written_out = [str(path) for path in copy_dir.rglob("*.py") if "CORRECT = {" in path.read_text(encoding="utf-8")]
    assert not written_out, written_out


def test_the_folder_has_what_it_needs_to_work_alone(copy_dir: Path) -> None:
    for relative in (
        "Makefile",
        "pyproject.toml",
        "requirements.txt",
        "requirements-nodeps.txt",
        "helpers/__init__.py",
        "exercises/checks/core.py",
        "exercises/solutions.py",
    ):
        assert (copy_dir / relative).is_file(), f"{relative} is missing"
    assert (copy_dir / participant_copies.MARKER).is_file()


def test_exercises_load_and_solutions_say_ask_your_teacher(copy_dir: Path) -> None:
    """In a fresh interpreter that imports the copy's helpers: every lesson's exercises load, the stubs are
    'not attempted', and solution() prints the withheld message instead of crashing."""
    script = (
        "import importlib, pkgutil, helpers, exercises.checks\n"
        "assert helpers.__file__.startswith(COPY), helpers.__file__\n"
        "from exercises.checks import Exercise, NOT_ATTEMPTED\n"
        "count = 0\n"
        "for info in pkgutil.iter_modules(exercises.checks.__path__):\n"
        "    if info.name.startswith('lesson_'):\n"
        "        module = importlib.import_module('exercises.checks.' + info.name)\n"
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
    lessons = list((ROOT / "exercises" / "checks").glob("lesson_*.py"))
    if lessons:
        assert participant_copies.WITHHELD_MESSAGE in result.stdout
        assert "def " not in result.stdout and "class " not in result.stdout, "a solution's source leaked"


def test_refuses_to_replace_a_folder_it_did_not_make(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(participant_copies.ParticipantCopyError, match="not made by this tool"):
        participant_copies.make_copies(PARTICIPANTS, tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_a_second_run_replaces_the_first(copy_dir: Path) -> None:
    (copy_dir / "stale.txt").write_text("left over")
    report = participant_copies.make_copies(PARTICIPANTS, copy_dir)
    assert not (copy_dir / "stale.txt").exists()
    assert any(path.startswith("exercises/solutions/") for path in report["left_out"]) or not list(
        (ROOT / "exercises" / "solutions").glob("*.py")
    )
    assert (copy_dir / "Makefile").is_file() and (copy_dir / participant_copies.MARKER).is_file()


@pytest.mark.parametrize(
    "source, needs",
    [
        ("from exercises.solutions import lesson_04", True),
        ('check_paths([ROOT / "exercises" / "solutions"])', True),
        ("path = 'exercises/solutions/lesson_04.py'", True),
        ("from exercises.checks import lesson_04", False),
    ],
)
def test_a_test_that_uses_the_solutions_is_recognised(tmp_path: Path, source: str, needs: bool) -> None:
    path = tmp_path / "test_x.py"
    path.write_text(source + "\n", encoding="utf-8")
    assert participant_copies.needs_solutions(path) is needs


def test_an_unknown_placeholder_in_the_learners_readme_is_refused(tmp_path: Path) -> None:
    template = tmp_path / "readme.md"
    template.write_text("clone {{repository}}; see {{wiki}}\n", encoding="utf-8")
    with pytest.raises(participant_copies.ParticipantCopyError, match="wiki"):
        participant_copies.learner_readme(PARTICIPANTS, "main", template)


def test_the_copy_goes_next_to_the_checkout_and_never_inside_it(tmp_path: Path) -> None:
    out = participant_copies.default_out(PARTICIPANTS)
    assert out == ROOT.resolve().parent / "trainer-course-2027" and ROOT.resolve() not in out.parents
    inside = ROOT / "participant_copies" / "inside-test"
    with pytest.raises(participant_copies.ParticipantCopyError, match="inside the course checkout"):
        participant_copies.make_copies(PARTICIPANTS, inside)
    assert not inside.exists()
    with pytest.raises(participant_copies.ParticipantCopyError, match="holds the course repository itself"):
        participant_copies.make_copies(PARTICIPANTS, ROOT.parent)


def _git(folder: Path, *arguments: str) -> str:
    return subprocess.run(["git", *arguments], cwd=folder, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def learner_clone(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """As the workshop guide says: the copy (outside any checkout), ``git init``, ``git add -A``, ``git commit``,
    the tool run a second time; a learner's ``git clone``, all its tests collected and a part of them run there
    (the copy's README tests among them). What each step left, for the tests that read it."""
    base = tmp_path_factory.mktemp("published")
    out = base / "trainer-course-2027"
    participant_copies.make_copies(PARTICIPANTS, out)
    gitignore = (out / ".gitignore").read_text().splitlines()
    participant_copies.publish_locally(out, "main")
    found = {"out": out, "gitignore": gitignore, "committed": _git(out, "ls-files").splitlines()}
    found["status"] = _git(out, "status", "--porcelain")
    participant_copies.make_copies(PARTICIPANTS, out)
    found["status_after_second_run"] = _git(out, "status", "--porcelain")
    clone = base / "learner"
    subprocess.run(["git", "clone", "--quiet", str(out), str(clone)], check=True)
    path = os.pathsep.join(filter(None, [str(clone), os.environ.get("PYTHONPATH")]))
    environment = {**os.environ, "PYTHONPATH": path, "PYTHONDONTWRITEBYTECODE": "1"}
    pytest_command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    found["collected"] = subprocess.run(
        [*pytest_command, "--collect-only", "tests"], cwd=clone, env=environment, capture_output=True, text=True
    )
    found["ran"] = subprocess.run(
        [*pytest_command, "-rA", *CLONE_TESTS], cwd=clone, env=environment, capture_output=True, text=True, timeout=600
    )
    return {**found, "clone": clone}


def test_the_guides_steps_publish_a_repository_a_learner_clones_and_tests(learner_clone: dict) -> None:
    """End to end, as the workshop guide says (:func:`learner_clone`): the marker stays out of the commit; a
    learner's ``git clone`` has every notebook and test, all its tests are collected, and a part of them runs
    green there (``make test`` in a clone is what ``python -m tools.participant_copies --measure`` times: the
    README's figures). A second run of the tool keeps the copy's ``.git`` and, with nothing changed in the course,
    leaves nothing to commit."""
    out, clone, marker = learner_clone["out"], learner_clone["clone"], participant_copies.MARKER
    assert f"/{marker}" in learner_clone["gitignore"]
    committed = learner_clone["committed"]
    assert marker not in committed and (out / marker).is_file(), "the marker is committed, or gone"
    assert "README.md" in committed and "exercises/solutions.py" in committed
    assert not learner_clone["status"], "git add -A left files out"
    assert (out / ".git").is_dir() and not learner_clone["status_after_second_run"], "a second run changed the copy"
    assert not (clone / marker).exists()
    assert sorted(path.name for path in (clone / "notebooks").glob("[0-9][0-9]_*.ipynb")) == sorted(
        path.name for path in ROOT.glob(participant_copies.NOTEBOOK_GLOB)
    )
    collected = learner_clone["collected"]
    assert collected.returncode == 0, collected.stdout[-3000:]
    count = int(re.search(r"(\d+) tests? collected", collected.stdout).group(1))
    ran = learner_clone["ran"]
    assert ran.returncode == 0, ran.stdout[-3000:]
    print(f"\nthe learner's clone: {count} tests collected; {ran.stdout.strip().splitlines()[-1]}")


def test_no_learner_facing_file_of_the_copy_names_a_file_the_copy_lacks(copy_dir: Path) -> None:
    """The README, the lessons, the helpers (whose docstrings a learner reads with help()), the data sheet, the
    cheat sheet and the book's configuration name no file that was left out (docs/workshop.md, the tools and tests
    for teachers). ``exercises/solutions`` is the stand-in module here."""
    files = participant_copies.repository_files()
    missing = sorted({path for path in files if participant_copies.is_left_out(path)} - {"exercises/solutions"})
    missing = [path for path in missing if not path.startswith(participant_copies.SOLUTIONS_DIR)]
    assert "docs/workshop.md" in missing and "tools/participant_copies.py" in missing
    read = [copy_dir / "README.md", copy_dir / participant_copies.MARKER, copy_dir / "data" / "README.md"]
    read += [copy_dir / "docs" / "cheatsheet.md", *sorted((copy_dir / "docs" / "book").glob("*.py"))]
    read += sorted((copy_dir / "notebooks").glob("*.ipynb")) + sorted((copy_dir / "helpers").rglob("*.py"))
    named = {
        str(path.relative_to(copy_dir)): sorted(name for name in missing if name in path.read_text(encoding="utf-8"))
        for path in read
        if path.is_file()
    }
    named = {name: found for name, found in named.items() if found}
    assert not named, named
    lesson = next((copy_dir / "notebooks").glob("12_*.ipynb")).read_text(encoding="utf-8")
    assert "Teachers:" not in lesson and "RUN_REFERENCE" not in lesson


def test_lesson_12_reaches_learners_without_the_reference_run(copy_dir: Path) -> None:
    """The course's lesson 12 runs the reference solution in cells tagged teacher-only; the copy, which has no
    solutions, leaves those cells out, so it shows no switch and no "skipped" message, and keeps its exercises."""
    name = next(ROOT.glob("notebooks/12_*.ipynb")).name
    original = nbformat.read(ROOT / "notebooks" / name, as_version=4)
    tag = participant_copies.TEACHER_TAG
    teacher = [cell.source for cell in original.cells if tag in cell.metadata.get("tags", [])]
    assert any("solution_obj" in source for source in teacher), "the reference run is not tagged teacher-only"
    copied = nbformat.read(copy_dir / "notebooks" / name, as_version=4)
    sources = [cell.source for cell in copied.cells]
    assert not [cell for cell in copied.cells if tag in cell.metadata.get("tags", [])]
    assert not [source for source in sources if "solution_obj" in source or "Skipped" in source]
    assert len(sources) == len(original.cells) - len(teacher)
    assert any("exercises.q2.check()" in source for source in sources)


def test_cleared_notebook_drops_teacher_only_cells(tmp_path: Path) -> None:
    notebook = nbformat.v4.new_notebook()
    kept = nbformat.v4.new_code_cell("print('for everyone')")
    dropped = nbformat.v4.new_code_cell("print('for teachers')")
    dropped.metadata["tags"] = ["hide-input", participant_copies.TEACHER_TAG]
    notebook.cells = [kept, dropped]
    path = tmp_path / "99_x.ipynb"
    nbformat.write(notebook, path)
    assert [cell.source for cell in participant_copies.cleared_notebook(path).cells] == [kept.source]


def test_the_learners_readme_gives_the_figures_of_a_copys_own_suite() -> None:
    """Never the full course's suite (its test count, its test files): a copy's, or 'not measured yet'."""
    from tools.setup_facts import load_facts

    facts = load_facts()
    full = facts["suite"]
    copy_suite = {**full, "tests": 4321, "parts": {**full["parts"], "unit_count": 4300}}
    copy_suite["parts"]["slowest_files"] = [["test_notebook_nav.py", 1.5]]
    readme = participant_copies.learner_readme(PARTICIPANTS, "main", facts={**facts, "participant_suite": copy_suite})
    assert "4321 tests" in readme and "test_notebook_nav.py" in readme
    assert f"{full['tests']} tests" not in readme and "test_capstone.py" not in readme
    unmeasured = {key: value for key, value in facts.items() if key != "participant_suite"}
    readme = participant_copies.learner_readme(PARTICIPANTS, "main", facts=unmeasured)
    assert "not measured yet for this copy" in readme and f"{full['tests']} tests" not in readme
    if "participant_suite" in facts:
        measured = facts["participant_suite"]
        assert measured["tests"] < full["tests"], "the copy runs fewer tests than the course"
        assert f"{measured['tests']} tests" in participant_copies.learner_readme(PARTICIPANTS, "main")


def test_the_left_out_count_is_the_number_of_entries_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert participant_copies.main(["--repo", PARTICIPANTS, "--out", str(tmp_path / "copy")]) == 0
    printed = capsys.readouterr().out
    line = next(line for line in printed.splitlines() if line.startswith("left out ("))
    count = int(re.match(r"left out \((\d+)", line).group(1))
    listed = line.split("): ", 1)[1].split(", ")
    assert count == len(listed) == len(set(listed)) and participant_copies.SOLUTIONS_DIR in listed
    # the steps name the copy by its shorter path (relative when the checkout lies near it, as in /tmp/course)
    assert "git init -q -b main" in printed and f"cd {participant_copies.shown_path(tmp_path / 'copy')}\n" in printed
