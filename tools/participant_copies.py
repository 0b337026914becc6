"""Make the learners' copy of the course: every notebook with its outputs cleared, and no solutions.

Usage: python tools/participant_copies.py [--out DIR]        (``make participant-copies``)

The copy goes to ``participant_copies/`` (gitignored) unless ``--out`` says otherwise. It holds the files of
the repository as git would commit them (tracked files and untracked files that are not ignored), except:

* every ``notebooks/NN_*.ipynb`` is written with its outputs and execution counts cleared;
* ``helpers/solutions/`` is left out and replaced by ``helpers/solutions.py``, a stand-in that lets the exercise
  modules import, so ``qN.check()`` works as usual and ``qN.solution()`` prints "ask your teacher";
* teacher-only files are left out (this tool, the workshop guide and agenda, and the tests that need the
  solutions or the committed outputs: see :data:`TEACHER_ONLY` and :func:`needs_solutions`).

The folder then works alone: ``make lab`` and ``make test`` run in it as they do in the course repository.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "participant_copies"
MARKER = ".participant-copy"
SOLUTIONS_DIR = "helpers/solutions/"
NOTEBOOK_GLOB = "notebooks/[0-9][0-9]_*.ipynb"
TEACHER_ONLY = frozenset(
    {
        "docs/workshop.md",
        "tools/participant_copies.py",
        "tools/workshop_agenda.py",
        "tests/test_participant_copies.py",
        "tests/test_workshop_agenda.py",
        "tests/test_exercises.py",  # runs every reference solution
        "tests/test_notebook_outputs.py",  # checks the committed outputs, which the copy has cleared
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

WITHHELD_MESSAGE = {WITHHELD_MESSAGE!r}


class WithheldSolution:
    """Takes the place of a solution (a module, function, class or value) that was left out of this copy."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"{{WITHHELD_MESSAGE}} (solution `{{self.name}}`)"

    def __getattr__(self, attribute: str) -> "WithheldSolution":
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
    """The copy cannot be made as asked (not a git checkout, or a target folder that is not ours to replace)."""


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


def needs_solutions(path: Path) -> bool:
    """True for a test file that imports the reference solutions (it cannot pass in a participant copy)."""
    return path.suffix == ".py" and "helpers.solutions" in path.read_text(encoding="utf-8")


def is_left_out(relative: str, root: Path = ROOT) -> bool:
    """Whether a repository file stays out of the participant copy."""
    if relative.startswith(SOLUTIONS_DIR) or relative in TEACHER_ONLY:
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


def make_copies(out: Path = DEFAULT_OUT, root: Path = ROOT) -> dict[str, list[str]]:
    """Write the participant copy to ``out``; return what was copied, cleared and left out."""
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
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="target folder (default: participant_copies/)")
    options = parser.parse_args(argv)
    try:
        report = make_copies(options.out)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
