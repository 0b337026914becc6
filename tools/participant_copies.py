"""Make the learners' copy of the course: every notebook with its outputs cleared, no solutions, and every
address pointing at the participants' repository.

Usage: python -m tools.participant_copies --repo OWNER/NAME [--out DIR]
       (``make participant-copies REPO=owner/name``)

``--repo`` is the GitHub repository the teacher pushes the copy to, for the learners. The copy goes to
``participant_copies/`` (gitignored) unless ``--out`` says otherwise. It holds the files of the repository as git
would commit them (tracked files and untracked files that are not ignored), except:

* every ``notebooks/NN_*.ipynb`` is written with its outputs and execution counts cleared, and its Colab badge
  and set-up cell (``COURSE_REPO``, what Colab clones) point at ``--repo``, as does ``[tool.course]`` in
  pyproject.toml: on Colab a learner's notebook clones the participants' repository, never the full course;
* ``helpers/solutions/`` is left out and replaced by ``helpers/solutions.py``, a stand-in that lets the exercise
  modules import, so ``qN.check()`` works as usual and ``qN.solution()`` prints "ask your teacher";
* README.md is the learners' README (:data:`LEARNER_README`, filled in with the repository and the lessons);
* teacher-only files are left out: this tool, the workshop guide and agenda, the tests that need the solutions
  or the committed outputs, and the tests that hold correct answers written out (:data:`TEACHER_ONLY`,
  :data:`ANSWER_TESTS`, :func:`needs_solutions`).

The folder then works alone: ``make lab`` and ``make test`` run in it as they do in the course repository.
"""

from __future__ import annotations

import argparse
import fnmatch
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

from helpers.registry import lessons  # noqa: E402
from tools.set_repo import RepositoryError, check_repository, point_at  # noqa: E402
from tools.setup_facts import setup_block  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
LEARNER_README = ROOT / "tools" / "participant_readme.md"
DEFAULT_OUT = ROOT / "participant_copies"
MARKER = ".participant-copy"
SOLUTIONS_DIR = "helpers/solutions/"
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
        "tests/test_participant_copies.py",
        "tests/test_workshop_agenda.py",
        "tests/test_loaded_times.py",
        "tests/test_setup_facts.py",  # checks the teacher's README, which the copy replaces
        "tests/test_exercises.py",  # runs every reference solution
        "tests/test_notebook_outputs.py",  # checks the committed outputs, which the copy has cleared
        "tests/test_cheatsheet.py",  # rebuilds the cheat sheet from a lesson's committed outputs
    }
)
WITHHELD_MESSAGE = "The reference solutions are not part of the participant copy: ask your teacher."
STAND_IN = f'''"""Stand-in for the reference solutions, which this participant copy does not include.

The exercise modules import ``from helpers.solutions import lesson_NN as solutions`` and name solutions such as
``solutions.my_callback``. Here every such name is a :class:`WithheldSolution`: the exercises load, ``qN.check()``
works as usual, and ``qN.solution()`` prints where to get the solution. Written by tools/participant_copies.py.
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


def learner_readme(repository: str, branch: str, template: Path = LEARNER_README) -> str:
    """The copy's README.md: the template with ``{{repository}}`` (owner/name), ``{{name}}``, ``{{branch}}``,
    ``{{syllabus}}`` (between the same markers as the course README's, under ``## Syllabus``, which every
    lesson's link line points at), ``{{sources}}`` (the course README's Sources section, which the lessons'
    claim boxes refer to) and ``{{setup}}`` (the measured install size and times) filled in.

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
        ("setup", setup_block()),
    ):
        text = text.replace("{{" + name + "}}", value)
    left = sorted(set(re.findall(r"\{\{(\w+)\}\}", text)))
    if left:
        raise ParticipantCopyError(f"{template.name} has placeholders this tool does not fill: {', '.join(left)}.")
    return text


def push_steps(repository: str, out: Path, branch: str) -> str:
    """The commands that publish the copy as the participants' repository (printed after a run)."""
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


SOLUTIONS_USE = re.compile(r"""helpers(\.|/|["']\s*/\s*["'])solutions""")  # helpers.solutions, "helpers" / "solutions"
# Tests that hold correct answers, written out (they would hand the learners the solutions), and their shared code.
ANSWER_TESTS = ("tests/test_answers_*.py", "tests/exercise_cases.py", "tests/test_exercise_kernel.py")


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
    """The notebook with every output, execution count and execution timing removed (validated)."""
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
            cell.metadata.pop("execution", None)
            cell.metadata.pop("ExecuteTime", None)
    nbformat.validate(notebook)
    return notebook


def prepare_target(out: Path) -> None:
    """Empty ``out`` if it is a former participant copy (it holds the marker file); refuse any other folder."""
    if out.exists():
        if not out.is_dir():
            raise ParticipantCopyError(f"{out} exists and is not a folder; choose another --out.")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise ParticipantCopyError(
                f"{out} is not empty and was not made by this tool (no {MARKER} file in it); "
                "choose an empty or new folder with --out, so nothing of yours is deleted."
            )
        shutil.rmtree(out)
    out.mkdir(parents=True)
    (out / MARKER).write_text("Made by tools/participant_copies.py; the tool replaces this folder on each run.\n")


def make_copies(repository: str, out: Path = DEFAULT_OUT, root: Path = ROOT) -> dict[str, list[str]]:
    """Write the participant copy to ``out``, pointed at ``repository``; return what was copied, cleared and
    left out.

    Raises:
        ParticipantCopyError: a malformed repository, not a git checkout, or an ``out`` that is not ours.
    """
    try:
        check_repository(repository)
    except RepositoryError as error:
        raise ParticipantCopyError(str(error)) from error
    out = out.resolve()
    if out == root.resolve() or out in root.resolve().parents:
        raise ParticipantCopyError(f"--out {out} holds the course repository itself; choose a new folder.")
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
    (out / "helpers" / "solutions.py").write_text(STAND_IN, encoding="utf-8")
    point_at(out, repository)
    branch = _branch(out)
    (out / "README.md").write_text(learner_readme(repository, branch), encoding="utf-8")
    return report


def _branch(root: Path) -> str:
    match = re.search(r'(?m)^branch = "(.*)"$', (root / "pyproject.toml").read_text(encoding="utf-8"))
    return match.group(1) if match else "main"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default="", help="the participants' GitHub repository, owner/name")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="target folder (default: participant_copies/)")
    options = parser.parse_args(argv)
    if not options.repo:
        print(
            "participant_copies: say which repository the learners will use: "
            "make participant-copies REPO=owner/name (a GitHub repository you push the copy to; "
            "every Colab badge and set-up cell of the copy will point at it).",
            file=sys.stderr,
        )
        return 2
    try:
        report = make_copies(options.repo, options.out)
    except ParticipantCopyError as error:
        print(f"participant_copies: {error}", file=sys.stderr)
        return 1
    print(f"{len(report['cleared'])} notebooks cleared and {len(report['copied'])} other files copied to {options.out}")
    print(
        f"left out ({len(report['left_out'])}): "
        + ", ".join(
            sorted({path if not path.startswith(SOLUTIONS_DIR) else SOLUTIONS_DIR for path in report["left_out"]})
        )
    )
    print(f"every Colab badge and set-up cell points at github.com/{options.repo}. To publish it for the learners:")
    print(push_steps(options.repo, options.out, _branch(options.out.resolve())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
