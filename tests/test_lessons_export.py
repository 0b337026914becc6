"""The package and the lessons never drift apart: ``helpers/lessons/lesson_NN.py`` is exactly what lesson NN's
``#| export`` cells give (``make export``), each module imports on its own, and no lesson or check uses the code
of a later lesson."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from course_facts.registry import lessons

ROOT = Path(__file__).resolve().parent.parent
from tools import export_lessons  # noqa: E402

LESSON_IMPORT = re.compile(r"^\s*(?:from|import)\s+helpers\.lessons\.lesson_(\d\d)\b", re.MULTILINE)


def test_every_lesson_module_is_what_its_notebook_exports() -> None:
    found = export_lessons.differences()
    assert not found, "run `make export`:\n" + "\n".join(found)


LESSON_MODULES = sorted((ROOT / "helpers" / "lessons").glob("lesson_*.py"))

# One interpreter loads what every lesson module imports (torch, transformers' Trainer, helpers) once, then forks a
# child per module: each child imports that one module into an interpreter where no lesson module was ever loaded,
# which is what a fresh interpreter would show, without paying the 8 s of imports twelve times.
FORKED_IMPORTS = r"""
import json, os, sys, traceback
import helpers, torch
from transformers import Trainer, TrainingArguments
assert not [name for name in sys.modules if name.startswith("helpers.lessons.")], "a lesson was loaded early"
results = {}
for module in sys.argv[1:]:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            __import__(module)
            message = ""
        except BaseException:
            message = traceback.format_exc()[-4000:] or "raised"
        os.write(write, message.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        message = pipe.read()
    status = os.waitpid(pid, 0)[1]
    results[module] = message or ("" if status == 0 else f"the child ended with status {status}")
print(json.dumps(results))
"""
BROKEN_MODULE = "course_test_broken_lesson"  # an exported cell that uses a notebook variable it never defined


@pytest.fixture(scope="module")
def fresh_imports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """{module: "" if it imported, else its traceback}, each module imported in a process of its own."""
    folder = tmp_path_factory.mktemp("broken")
    (folder / f"{BROKEN_MODULE}.py").write_text("import torch\n\nscores = torch.tensor(notebook_only_scores)\n")
    modules = [f"helpers.lessons.{path.stem}" for path in LESSON_MODULES] + [BROKEN_MODULE]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(folder)])}
    done = subprocess.run(
        [sys.executable, "-c", FORKED_IMPORTS, *modules], capture_output=True, text=True, cwd=ROOT, env=environment
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("path", LESSON_MODULES, ids=lambda p: p.stem)
def test_a_lesson_module_imports_in_a_fresh_interpreter(path: Path, fresh_imports: dict[str, str]) -> None:
    """An exported cell that used a notebook variable it did not define would fail here (NameError)."""
    assert fresh_imports[f"helpers.lessons.{path.stem}"] == ""


def test_the_fresh_import_check_catches_a_notebook_variable(fresh_imports: dict[str, str]) -> None:
    assert "NameError" in fresh_imports[BROKEN_MODULE] and "notebook_only_scores" in fresh_imports[BROKEN_MODULE]


def _code(path: Path) -> str:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")


@pytest.mark.parametrize("lesson", lessons(), ids=lambda lesson: lesson.number)
def test_a_lesson_imports_the_code_of_earlier_lessons_only(lesson) -> None:
    used = set(LESSON_IMPORT.findall(_code(lesson.path)))
    later = sorted(number for number in used if number >= lesson.number)
    assert not later, f"{lesson.file} imports helpers.lessons.lesson_{later[0]}: a lesson teaches its own code first"


@pytest.mark.parametrize("path", sorted((ROOT / "exercises" / "checks").glob("lesson_*.py")), ids=lambda p: p.stem)
def test_a_lessons_checks_use_that_lesson_and_earlier_ones_only(path: Path) -> None:
    number = path.stem.removeprefix("lesson_")
    used = set(LESSON_IMPORT.findall(path.read_text(encoding="utf-8")))
    assert all(found <= number for found in used), f"{path.name} imports the code of a later lesson: {sorted(used)}"


def test_no_lesson_module_is_edited_by_hand_or_orphaned() -> None:
    numbers = {lesson.number for lesson in lessons()}
    for path in (ROOT / "helpers" / "lessons").glob("lesson_*.py"):
        assert path.stem.removeprefix("lesson_") in numbers, f"{path.name} belongs to no lesson of lessons.toml"
        assert export_lessons.GENERATED in path.read_text(encoding="utf-8"), f"{path.name} was not generated"


def test_the_export_tool_refuses_a_forward_import(tmp_path: Path) -> None:
    with pytest.raises(export_lessons.ExportError, match="earlier lessons only"):
        export_lessons._check_lesson_imports("03", ["from helpers.lessons.lesson_07 import WeightedLossTrainer"], "x")
    export_lessons._check_lesson_imports("09", ["from helpers.lessons.lesson_07 import WeightedLossTrainer"], "x")


def test_the_export_tool_names_a_cell_that_is_not_plain_python() -> None:
    with pytest.raises(export_lessons.ExportError, match="not plain Python"):
        export_lessons._split_imports("!pip install x\n", "notebooks/99_x.ipynb")


def test_exported_imports_are_gathered_at_the_top() -> None:
    imports, rest = export_lessons._split_imports("import torch\n\nx = 1\nfrom os import path\n", "x")
    assert imports == ["import torch", "from os import path"] and rest == "x = 1"
    importlib.import_module("helpers.lessons")


def test_make_execute_exports_before_it_runs_a_notebook(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lesson's checks import its module when called: the module must hold the cells that are about to run."""
    import importlib
    import importlib.util

    from tools import execute_notebooks

    order: list[str] = []
    monkeypatch.setattr(export_lessons, "main", lambda argv: order.append("export") or 0)
    monkeypatch.setattr(execute_notebooks, "execute", lambda path: order.append(f"run {path.name}") or 1.0)
    monkeypatch.setattr(execute_notebooks, "update_readme", lambda: order.append("readme"))
    for teacher_tool in ("tools.workshop_agenda", "tools.loaded_times"):  # a participant copy has neither
        if importlib.util.find_spec(teacher_tool) is not None:
            monkeypatch.setattr(importlib.import_module(teacher_tool), "main", lambda argv: 0)
    first = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))[1]
    assert execute_notebooks.main([str(first)]) == 0
    assert order == ["export", f"run {first.name}", "readme"]


def _imported_modules(path: Path) -> set[str]:
    """Every module that ``path`` imports, at the top or inside a function (relative imports resolved)."""
    import ast

    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


HAND_WRITTEN = sorted(path for path in (ROOT / "helpers").rglob("*.py") if "lessons" not in path.parts)
# Imports from hand-written code into generated code that are known and wait for their fix; each entry says what.
# None now (lesson 06's group_gradient_norms moved into helpers/gradient_norms.py); the test still fails on a new one.
KNOWN_UPWARD: set[tuple[str, str]] = set()


@pytest.mark.parametrize("path", HAND_WRITTEN, ids=lambda p: str(p.relative_to(ROOT)))
def test_hand_written_runtime_imports_no_generated_code_and_no_other_audience(path: Path) -> None:
    """``helpers`` (the notebooks' runtime) sits under the generated ``helpers.lessons``, the exercises, the checker
    and the tools: it imports none of them (one direction; tests/test_contracts.py has the package's other rules)."""
    name = str(path.relative_to(ROOT))
    upward = sorted(
        module
        for module in _imported_modules(path)
        if module.split(".")[0] in {"exercises", "check_old_code", "tools"}
        or (
            module.startswith("helpers.lessons")
            and not any(name == known and f"{module}.".startswith(f"{up}.") for known, up in KNOWN_UPWARD)
        )
    )
    assert not upward, f"{name} imports {upward}: hand-written runtime code may not import generated code or code above"


def test_known_upward_imports_are_still_there() -> None:
    """An entry of KNOWN_UPWARD whose import is gone must leave the list (so the list cannot hide a new one)."""
    for name, module in KNOWN_UPWARD:
        assert module in _imported_modules(ROOT / name), f"{name} no longer imports {module}: remove it from the list"


@pytest.mark.parametrize("path", sorted((ROOT / "course_facts").rglob("*.py")), ids=lambda p: p.name)
def test_course_facts_need_the_standard_library_only(path: Path) -> None:
    """The Makefile and the shell scripts read the course facts with any Python 3, before .venv exists."""
    top = {module.split(".")[0] for module in _imported_modules(path)}
    outside = sorted(top - set(sys.stdlib_module_names) - {"course_facts", "__future__"})
    assert not outside, f"{path.name} imports {outside}: course_facts must need the standard library only"


def test_a_lesson_that_only_imports_gets_no_module(tmp_path: Path) -> None:
    assert not export_lessons._defines("__all__ = ['x']\n__all__ += ['y']\n# a comment")
    assert export_lessons._defines("def f() -> int:\n    return 1\n")
    assert export_lessons._defines("LIMIT = 3\n")
