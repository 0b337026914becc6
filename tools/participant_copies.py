"""Make the learners' copy of the course: every notebook with its outputs cleared, no solutions, and every
address pointing at the participants' repository.

Usage: python -m tools.participant_copies --repo OWNER/NAME [--out DIR]
       (``make participant-copies REPO=owner/name``)
       python -m tools.participant_copies --measure
       (make a copy, commit it, clone it as a learner would, and time ``make venv`` and ``make test`` in the clone:
       the figures the learners' README gives, in docs/setup_facts.json under ``participant_suite``)

``--repo`` is the GitHub repository the teacher pushes the copy to, for the learners. The copy goes next to the
course checkout, into a folder named after the repository (``../NAME``), unless ``--out`` says otherwise; never
into the checkout itself, where ``git init`` would make a repository inside a repository. A second run replaces
the copy's files and keeps its ``.git``, so the teacher commits the update and pushes it. The copy holds the files
of the repository as git would commit them (tracked files and untracked files that are not ignored), except:

* every ``notebooks/NN_*.ipynb`` is written with its outputs and execution counts cleared, without its cells
  tagged :data:`TEACHER_TAG` (lesson 12's run of the reference solution, which the copy does not have), and its
  Colab badge
  and set-up cell (``COURSE_REPO``, what Colab clones) point at ``--repo``, as does ``[tool.course]`` in
  pyproject.toml: on Colab a learner's notebook clones the participants' repository, never the full course;
* ``exercises/solutions/`` is left out and replaced by ``exercises/solutions.py``, a stand-in that lets the exercise
  modules import, so ``qN.check()`` works as usual and ``qN.solution()`` prints "ask your teacher";
* README.md is the learners' README (:data:`LEARNER_README`, filled in with the repository, the lessons and the
  measured figures of a participant copy's own ``make test``);
* teacher-only files are left out: this tool, the workshop guide and agenda, the tests that need the solutions
  or the committed outputs, and the tests that hold correct answers written out (:data:`TEACHER_ONLY`,
  :data:`ANSWER_TESTS`, :func:`needs_solutions`).

The folder then works alone: ``make lab`` and ``make test`` run in it as they do in the course repository. The
tool's marker file (:data:`MARKER`, which lets a later run replace the folder) is listed in the copy's
``.gitignore``, so ``git add -A`` leaves it out of the learners' repository.
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat

from course_facts.registry import lessons  # noqa: E402
from tools.set_repo import RepositoryError, check_repository, point_at  # noqa: E402
from tools.setup_facts import PARTICIPANT_SUITE, measure_suite, setup_block  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LEARNER_README = ROOT / "tools" / "participant_readme.md"
MARKER = ".participant-copy"
MARKER_TEXT = (
    "Made by the course's participant-copy tool (make participant-copies), which replaces this folder's files.\n"
)
IGNORE_MARKER = f"\n# The participant-copy tool's marker: not part of the learners' repository.\n/{MARKER}\n"
MEASURE_REPOSITORY = "participants/trainer-course"  # --measure: the copy is never pushed, any name does
SOLUTIONS_DIR = "exercises/solutions/"
NOTEBOOK_GLOB = "notebooks/[0-9][0-9]_*.ipynb"
TEACHER_ONLY = frozenset(
    {
        "docs/workshop.md",
        "tools/participant_copies.py",
        "tools/participant_readme.md",  # becomes the copy's README.md
        "tools/workshop_agenda.py",
        "tools/loaded_times.py",
        "tools/setup_facts.py",
        "tests/test_gpu_run.py",  # gpu_run.record writes GPU times into the teacher's README and agendas
        "tests/test_gpu_bundle.py",  # downloads the GPU bundle's wheels (about 90 MB) for the maintainers' GPU run
        "tests/test_participant_copies.py",
        "tests/test_workshop_agenda.py",
        "tests/test_loaded_times.py",
        "tests/test_setup_facts.py",  # checks the teacher's README, which the copy replaces
        "tests/test_exercises.py",  # runs every reference solution
        "tests/test_notebook_outputs.py",  # checks the committed outputs, which the copy has cleared
        "tests/test_cheatsheet.py",  # rebuilds the cheat sheet from a lesson's committed outputs
    }
)
TEACHER_TAG = "teacher-only"
"""The tag of a notebook cell the participants' copy leaves out: a run that needs the reference solutions."""
WITHHELD_MESSAGE = "The reference solutions are not part of the participant copy: ask your teacher."
STAND_IN = f'''"""Stand-in for the reference solutions, which this participant copy does not include.

The exercise modules import ``from exercises.solutions import lesson_NN as solutions`` and name solutions such as
``solutions.my_callback``. Here every such name is a :class:`WithheldSolution`: the exercises load, ``qN.check()``
works as usual, and ``qN.solution()`` prints where to get the solution. Written by the course's participant-copy
tool, with the rest of this copy.
"""

from __future__ import annotations

from typing import Any

WITHHELD_MESSAGE = "{WITHHELD_MESSAGE}"


class WithheldSolution:
    """Takes the place of a solution (a module, function, class or value) that was left out of this copy."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{{WITHHELD_MESSAGE}} (solution `{{self.name}}`)"

    def __getattr__(self, attribute: str) -> WithheldSolution:
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return WithheldSolution(f"{{self.name}}.{{attribute}}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(f"{{WITHHELD_MESSAGE}} (`{{self.name}}` cannot be run here.)")

    def __iter__(self) -> Any:
        return iter(())


def __getattr__(name: str) -> WithheldSolution:
    if name.startswith("__"):
        raise AttributeError(name)
    return WithheldSolution(name)
'''


class ParticipantCopyError(RuntimeError):
    """The copy cannot be made as asked (no repository, not a git checkout, or a target folder that is not ours)."""


def syllabus(repository: str, branch: str) -> str:
    """The lessons as a table for the learners' README: link, title, CPU time, Open-in-Colab badge."""
    rows = ["| lesson | title | CPU time | Colab |", "|---|---|---|---|"]
    for entry in lessons():
        cpu = entry.seconds("cpu")
        url = f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/{entry.file}"
        badge = f"[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"
        time = f"{cpu:.0f} s" if cpu else "not measured"
        rows.append(f"| [{entry.number}](notebooks/{entry.file}) | {entry.title} | {time} | {badge} |")
    return "\n".join(rows)


def sources_section(readme: Path = ROOT / "README.md") -> str:
    """The body of the course README's ``## Sources`` section (the table of the sources' short names that the
    lessons' claim boxes use, and what a verdict says), for the learners' README.

    Raises:
        ParticipantCopyError: the course README has no such section.
    """
    text = readme.read_text(encoding="utf-8")
    if "\n## Sources\n" not in text:
        raise ParticipantCopyError(f"{readme} has no '## Sources' section for the learners' README.")
    return text.split("\n## Sources\n", 1)[1].split("\n## ", 1)[0].strip()


def learner_readme(
    repository: str, branch: str, template: Path = LEARNER_README, facts: dict[str, Any] | None = None
) -> str:
    """The copy's README.md: the template with ``{{repository}}`` (owner/name), ``{{name}}``, ``{{branch}}``,
    ``{{syllabus}}`` (between the same markers as the course README's, under ``## Syllabus``, which every
    lesson's link line points at), ``{{sources}}`` (the course README's Sources section, which the lessons'
    claim boxes refer to) and ``{{setup}}`` (the measured install size and times, with the figures of a
    participant copy's own ``make test``, never the full course's: ``facts``, else docs/setup_facts.json) filled in.

    Raises:
        ParticipantCopyError: the template still has a placeholder this function does not know.
    """
    text = template.read_text(encoding="utf-8")
    for name, value in (
        ("repository", repository),
        ("name", repository.split("/", 1)[1]),
        ("branch", branch),
        ("syllabus", syllabus(repository, branch)),
        ("sources", sources_section()),
        ("setup", setup_block(facts, suite_key=PARTICIPANT_SUITE)),
    ):
        text = text.replace("{{" + name + "}}", value)
    left = sorted(set(re.findall(r"\{\{(\w+)\}\}", text)))
    if left:
        raise ParticipantCopyError(f"{template.name} has placeholders this tool does not fill: {', '.join(left)}.")
    return text


def default_out(repository: str, root: Path = ROOT) -> Path:
    """Where the copy goes without ``--out``: next to the course checkout, named after the repository."""
    return root.resolve().parent / repository.split("/", 1)[1]


def shown_path(out: Path) -> str:
    """``out`` as the printed steps name it: relative to the current folder when that is shorter."""
    relative = os.path.relpath(out.resolve(), Path.cwd())
    return relative if len(relative) < len(str(out.resolve())) else str(out.resolve())


def push_steps(repository: str, out: str | Path, branch: str, update: bool = False) -> str:
    """The commands that publish the copy as the participants' repository (printed after a run); for a copy that
    is already a repository (``update``), the commands that publish the new files."""
    if update:
        return f"cd {out}\ngit add -A && git commit -qm 'Update the course' && git push"
    return (
        f"cd {out}\n"
        f"git init -q -b {branch} && git add -A && git commit -qm 'Course for participants'\n"
        f"git remote add origin https://github.com/{repository}.git\n"
        f"git push -u origin {branch}"
    )


def repository_files(root: Path = ROOT) -> list[str]:
    """Paths (relative, POSIX) that git would commit: tracked files plus untracked files that are not ignored."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        raise ParticipantCopyError(
            f"could not list the course files with git ({error}); run this tool inside the course's git checkout."
        ) from error
    return sorted({path for path in listed.split("\0") if path and (root / path).is_file()})


# exercises.solutions, exercises/solutions, "exercises" / "solutions"
SOLUTIONS_USE = re.compile(r"""exercises(\.|/|["']\s*/\s*["'])solutions""")
# Tests that hold correct answers, written out (they would hand the learners the solutions), and their shared code.
ANSWER_TESTS = ("tests/lesson_*/test_answers.py", "tests/exercise_cases.py", "tests/test_exercise_kernel.py")


def needs_solutions(path: Path) -> bool:
    """True for a test file that uses the reference solutions (it cannot pass in a participant copy)."""
    return path.suffix == ".py" and SOLUTIONS_USE.search(path.read_text(encoding="utf-8")) is not None


def is_left_out(relative: str, root: Path = ROOT) -> bool:
    """Whether a repository file stays out of the participant copy."""
    if relative.startswith(SOLUTIONS_DIR) or relative in TEACHER_ONLY:
        return True
    if any(fnmatch.fnmatch(relative, pattern) for pattern in ANSWER_TESTS):
        return True
    return relative.startswith("tests/") and needs_solutions(root / relative)


def cleared_notebook(path: Path) -> nbformat.NotebookNode:
    """The notebook with every output, execution count and execution timing removed, and without the cells
    tagged :data:`TEACHER_TAG` (validated)."""
    notebook = nbformat.read(path, as_version=4)
    notebook.cells = [cell for cell in notebook.cells if TEACHER_TAG not in cell.metadata.get("tags", [])]
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
            cell.metadata.pop("ExecuteTime", None)
    nbformat.validate(notebook)
    return notebook


def prepare_target(out: Path) -> None:
    """Empty ``out`` if it is a former participant copy (it holds the marker file), keeping its ``.git`` (the
    learners' repository, already published); refuse any other folder."""
    if out.exists():
        if not out.is_dir():
            raise ParticipantCopyError(f"{out} exists and is not a folder; choose another --out.")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise ParticipantCopyError(
                f"{out} is not empty and was not made by this tool (no {MARKER} file in it); "
                "choose an empty or new folder with --out, so nothing of yours is deleted."
            )
        for entry in out.iterdir():
            if entry.name == ".git":
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(MARKER_TEXT, encoding="utf-8")


def make_copies(repository: str, out: Path | None = None, root: Path = ROOT) -> dict[str, list[str]]:
    """Write the participant copy to ``out`` (:func:`default_out` when None), pointed at ``repository``; return
    what was copied, cleared and left out.

    Raises:
        ParticipantCopyError: a malformed repository, not a git checkout, or an ``out`` that is not ours, inside
            the course checkout or holding it.
    """
    try:
        check_repository(repository)
    except RepositoryError as error:
        raise ParticipantCopyError(str(error)) from error
    out = (default_out(repository, root) if out is None else out).resolve()
    course = root.resolve()
    if out == course or out in course.parents:
        raise ParticipantCopyError(f"--out {out} holds the course repository itself; choose a new folder.")
    if course in out.parents:
        raise ParticipantCopyError(
            f"--out {out} is inside the course checkout {course}: the learners' repository would be a repository "
            f"inside a repository. Choose a folder outside it, such as {default_out(repository, root)} (the default)."
        )
    files = repository_files(root)
    prepare_target(out)
    notebooks = {str(path.relative_to(root)) for path in root.glob(NOTEBOOK_GLOB)}
    report: dict[str, list[str]] = {"copied": [], "cleared": [], "left_out": []}
    for relative in files:
        if is_left_out(relative, root):
            report["left_out"].append(relative)
            continue
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if relative in notebooks:
            nbformat.write(cleared_notebook(root / relative), target)
            report["cleared"].append(relative)
        else:
            shutil.copy2(root / relative, target)
            report["copied"].append(relative)
    (out / "exercises" / "solutions.py").write_text(STAND_IN, encoding="utf-8")
    ignore = out / ".gitignore"
    ignore.write_text((ignore.read_text(encoding="utf-8") if ignore.is_file() else "") + IGNORE_MARKER, "utf-8")
    point_at(out, repository)
    branch = _branch(out)
    (out / "README.md").write_text(learner_readme(repository, branch), encoding="utf-8")
    return report


def _branch(root: Path) -> str:
    match = re.search(r'(?m)^branch = "(.*)"$', (root / "pyproject.toml").read_text(encoding="utf-8"))
    return match.group(1) if match else "main"


def left_out_entries(left_out: list[str]) -> list[str]:
    """What the tool reports as left out: each file, and ``exercises/solutions/`` once for all its files."""
    return sorted({SOLUTIONS_DIR if path.startswith(SOLUTIONS_DIR) else path for path in left_out})


def publish_locally(out: Path, branch: str) -> None:
    """What the teacher's publishing steps do before the push: ``git init``, ``git add -A``, ``git commit``.

    Raises:
        ParticipantCopyError: git failed (what it said is in the message).
    """
    identity = ["-c", "user.name=Course teacher", "-c", "user.email=teacher@example.invalid"]
    for command in (
        ["git", "init", "-q", "-b", branch],
        ["git", "add", "-A"],
        ["git", *identity, "commit", "-qm", "Course for participants"],
    ):
        done = subprocess.run(command, cwd=out, capture_output=True, text=True)
        if done.returncode:
            raise ParticipantCopyError(f"{' '.join(command)} failed in {out}: {done.stderr.strip()}")


def measure_copy() -> dict[str, Any]:
    """Make a participant copy, commit it as the teacher's steps do, and time what a learner runs in a fresh clone
    of it (``make venv``, then ``make test``): recorded as ``participant_suite`` in docs/setup_facts.json."""
    with tempfile.TemporaryDirectory(prefix="course-participants-") as folder:
        out = Path(folder) / "participants"
        make_copies(MEASURE_REPOSITORY, out)
        publish_locally(out, _branch(out))
        return measure_suite(source=out, key=PARTICIPANT_SUITE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default="", help="the participants' GitHub repository, owner/name")
    parser.add_argument("--out", type=Path, default=None, help="target folder (default: ../NAME, next to the course)")
    parser.add_argument("--measure", action="store_true", help="time make venv and make test in a copy's clone")
    options = parser.parse_args(argv)
    if options.measure:
        try:
            values = measure_copy()
        except (ParticipantCopyError, RuntimeError) as error:
            print(f"participant_copies: {error}", file=sys.stderr)
            return 1
        print(f"a participant copy's make test: {values['tests']} tests, {values['test_seconds']:.0f} s")
        return 0
    if not options.repo:
        print(
            "participant_copies: say which repository the learners will use: "
            "make participant-copies REPO=owner/name (a GitHub repository you push the copy to; "
            "every Colab badge and set-up cell of the copy will point at it).",
            file=sys.stderr,
        )
        return 2
    out = default_out(options.repo) if options.out is None and "/" in options.repo else options.out
    update = out is not None and (out / ".git").is_dir()
    try:
        report = make_copies(options.repo, out)
    except ParticipantCopyError as error:
        print(f"participant_copies: {error}", file=sys.stderr)
        return 1
    entries = left_out_entries(report["left_out"])
    solutions = sum(path.startswith(SOLUTIONS_DIR) for path in report["left_out"])
    print(f"{len(report['cleared'])} notebooks cleared and {len(report['copied'])} other files copied to {out}")
    print(
        f"left out ({len(entries)}"
        + (f"; {SOLUTIONS_DIR} counts once for its {solutions} files" if solutions else "")
        + "): "
        + ", ".join(entries)
    )
    said = "To publish the update:" if update else "To publish it for the learners:"
    print(f"every Colab badge and set-up cell points at github.com/{options.repo}. {said}")
    print(push_steps(options.repo, shown_path(out), _branch(out.resolve()), update))
    return 0


if __name__ == "__main__":
    sys.exit(main())
