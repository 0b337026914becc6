"""Static rules of a lesson's shown code and its pattern (issue 58; docs/authoring.md, "The pattern").

- The pattern's cells (tag ``pattern`` / ``pattern:<name>``, :mod:`tools.examples`) call no course helper but the
  offline loaders and the run folder (:data:`LOADERS`, plus a lesson's own in :data:`LESSON_LOADERS`), each
  loader call with a ``# your project: ...`` comment on its line or the line above; they never read ``profile``.
- A shown code cell (not tucked: no ``hide-input``/``hide-cell`` tag, not ``source_hidden``; the set-up cell and
  the exercise cells, which call ``.check()``, aside) uses no name that only a tucked cell binds.
- At most one shown cell a lesson calls a course helper beyond the loaders, the run folder, the plots and the
  exercise checks (the lesson names that cell's helper as an instrument).

``python -m tools.pattern_check notebooks/NN_x.ipynb ...`` prints what breaks a rule; the tests in
tests/test_patterns.py assert none does.
"""

from __future__ import annotations

import ast
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from tools.examples import pattern_tags

# The course calls a pattern may make: `helpers.<module>.<name>` (or `helpers.<name>`).
LOADERS = frozenset({"models.load_model", "models.load_tokenizer", "models.local_model_dir", "data.load_reviews"})
RUN_FOLDER = frozenset({"run_dir"})
# A lesson whose data or model exists only in the course names its own loaders here (one list: the script test,
# tests/test_examples.py, copies exactly the helpers modules these need, :func:`loader_files`). Each call still
# carries its `# your project:` comment.
LESSON_LOADERS: dict[str, frozenset[str]] = {
    # the `evaluate` metric scripts (and their names), loaded from the Hub as evaluate.load("accuracy") (section 6)
    "04": frozenset({"evaluate_metrics.metric_path", "evaluate_metrics.METRIC_NAMES"}),
    # the 1 : 9 Rotten Tomatoes reviews as frozen MiniLM sentence features
    "07": frozenset({"data.imbalanced_review_features"}),
    # the capstone's imbalanced, tokenized splits and its model (frozen MiniLM layers, mean pooled, new head)
    "12": frozenset({"capstone.load_data", "capstone.model_init"}),
    # the course's small model: frozen MiniLM word embeddings and one linear layer
    "14": frozenset({"embedding_head.course_embedding_classifier"}),
    "20": frozenset({"embedding_head.course_embedding_classifier"}),
    # the max-digit rows, the BPE tokenizer trained on them, the random-weight Llama built from a config
    "18": frozenset(
        {"language_model.max_digit_dataset", "language_model.train_tokenizer", "language_model.tiny_llama"}
    ),
    # the chat conversations, their BPE tokenizer, the random-weight Llama
    "19": frozenset(
        {"language_model.conversation_dataset", "language_model.chat_tokenizer", "language_model.tiny_llama"}
    ),
}
YOUR_PROJECT = "# your project:"
# Helpers a shown cell outside the pattern may call without counting as an instrument cell: the loaders above,
# the notebook conveniences that load and tokenize the course data, the run folder, plots and exercise checks
# (the same list as /work/shared/tools/copyable.py, the reviewers' checker).
CONVENIENCES = frozenset(
    {
        "load_reviews",
        "load_model_and_tokenizer",
        "load_tokenizer",
        "load_model",
        "tokenize_reviews",
        "run_dir",
        "new_axes",
        "finish",
        "select_examples",
        "local_model_dir",
        "setup_notebook",
        "format_table",
    }
)


@dataclass
class Report:
    """What a notebook breaks: one entry a problem, each naming the cell."""

    lesson: str
    pattern: list[str] = field(default_factory=list)
    needs_tucked: list[str] = field(default_factory=list)
    helper_cells: list[str] = field(default_factory=list)


def is_tucked(cell: dict) -> bool:
    metadata = cell.get("metadata", {})
    tags = metadata.get("tags", [])
    return bool(metadata.get("jupyter", {}).get("source_hidden")) or "hide-input" in tags or "hide-cell" in tags


def _parse(source: str) -> ast.Module | None:
    clean = "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines())
    try:
        return ast.parse(clean)
    except SyntaxError:
        return None


def bound_and_used(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Names a cell binds (assignments, defs, imports, parameters, loop targets) and names it reads."""
    bound: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (bound if isinstance(node.ctx, (ast.Store, ast.Del)) else used).add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bound.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound, used


def helper_calls(tree: ast.AST) -> set[str]:
    """Every ``helpers`` name a cell reaches: ``helpers.x.y`` attributes and ``from helpers.x import y``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "helpers":
            prefix = ".".join(node.module.split(".")[1:])
            found |= {f"{prefix}.{alias.name}" if prefix else alias.name for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name.removeprefix("helpers.") for alias in node.names if alias.name.startswith("helpers.")}
        elif isinstance(node, ast.Attribute):
            chain, value = [node.attr], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id == "helpers":
                found.add(".".join(reversed(chain)))
    # keep the longest chains only: helpers.models.load_model also walks helpers.models
    return {name for name in found if not any(other.startswith(name + ".") for other in found)}


def _is_instrument(name: str, lesson: str = "") -> bool:
    """A course helper that is neither a convenience, a plot, an exercise check nor the lesson's own loader."""
    last = name.split(".")[-1]
    if name in LESSON_LOADERS.get(lesson, frozenset()):
        return False
    return not (last in CONVENIENCES or name.startswith(("plots", "checks")) or name in ("plots", "checks"))


def _helpers_imports(path: Path) -> set[str]:
    """The ``helpers`` modules a module (or a package's ``__init__``) imports anywhere in it, by name: ``from
    helpers.x import y``, ``import helpers.x``, and ``helpers.<name>`` resolved through the package's lazy names."""
    import helpers

    lazy = {name: module.removeprefix("helpers.") for name, module in helpers._LAZY_NAMES.items()}
    found: set[str] = set()
    for name in helper_calls(ast.parse(path.read_text(encoding="utf-8"))):
        first = name.split(".")[0]
        if first in helpers._SUBMODULES:
            found.add(first)
        elif first in lazy:
            found.add(lazy[first])
    return found


def loader_files(base: tuple[str, ...] = ("__init__.py", "models.py", "data.py")) -> list[str]:
    """The files of ``helpers/`` (a package as its folder) a script needs for every lesson's loaders: the modules
    of :data:`LESSON_LOADERS` and the ``helpers`` modules they import, transitively, beyond ``base``."""
    root = Path(__file__).resolve().parents[1] / "helpers"
    todo = {name.split(".")[0] for names in LESSON_LOADERS.values() for name in names}
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        seen.add(module)
        path = root / module / "__init__.py" if (root / module).is_dir() else root / f"{module}.py"
        todo |= _helpers_imports(path) - seen
    files = {module if (root / module).is_dir() else f"{module}.py" for module in seen}
    return sorted(files - set(base))


def _loader_names(lesson: str) -> frozenset[str]:
    return LOADERS | RUN_FOLDER | LESSON_LOADERS.get(lesson, frozenset())


def _pattern_problems(cell: dict, where: str, lesson: str) -> list[str]:
    source = "".join(cell["source"])
    tree = _parse(source)
    if tree is None:
        return [f"{where}: not valid Python"]
    problems = []
    if is_tucked(cell):
        problems.append(f"{where}: a pattern cell is shown; remove its hide-input/hide-cell tag")
    allowed = _loader_names(lesson) | {"load_reviews"}  # helpers.load_reviews is helpers.data.load_reviews
    for name in sorted(helper_calls(tree)):
        if name not in allowed:
            problems.append(f"{where}: calls helpers.{name}; a pattern may call only {sorted(allowed)}")
    if "profile" in bound_and_used(tree)[1]:
        problems.append(f"{where}: reads the set-up cell's `profile`; write the sizes and precision out")
    lines = source.splitlines()
    loader_short = {a.split(".")[-1] for a in _loader_names(lesson) - RUN_FOLDER}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in loader_short:
                here = lines[node.lineno - 1]
                above = lines[node.lineno - 2] if node.lineno > 1 else ""
                if YOUR_PROJECT not in here and not above.lstrip().startswith(YOUR_PROJECT):
                    problems.append(
                        f"{where} line {node.lineno}: the loader call {name}() needs a `{YOUR_PROJECT} ...` comment "
                        "(on its line or the line above) naming what a learner's own project writes instead"
                    )
    return problems


def check_notebook(path: Path) -> Report:
    """The rules above, on one notebook."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    lesson = path.name[:2]
    report = Report(lesson)
    code = [(index, cell) for index, cell in enumerate(nb["cells"]) if cell["cell_type"] == "code"]
    tucked_bound: set[str] = set()
    shown_bound: set[str] = set()
    for position, (index, cell) in enumerate(code):
        where = f"cell {index}"
        if pattern_tags(cell):
            report.pattern += _pattern_problems(cell, where, lesson)
        if position == 0:  # the set-up cell: tucked by design, binds helpers and profile for every lesson
            continue
        source = "".join(cell["source"])
        tree = _parse(source)
        if tree is None:
            continue
        bound, used = bound_and_used(tree)
        if is_tucked(cell):
            tucked_bound |= bound - shown_bound - {"helpers", "profile"}
            continue
        if ".check()" in source:  # an exercise cell
            continue
        missing = sorted((used - bound - shown_bound) & tucked_bound)
        if missing:
            report.needs_tucked.append(f"{where} uses {', '.join(missing)}, bound only in a tucked cell")
        instruments = sorted(name for name in helper_calls(tree) if _is_instrument(name, lesson))
        if instruments:
            report.helper_cells.append(f"{where}: {', '.join(instruments)}")
        shown_bound |= bound
    return report


def main(argv: list[str]) -> int:
    failed = 0
    for argument in argv:
        report = check_notebook(Path(argument))
        problems = report.pattern + report.needs_tucked
        if len(report.helper_cells) > 1:
            problems.append(
                f"{len(report.helper_cells)} shown cells call course instruments (at most 1): "
                + "; ".join(report.helper_cells)
            )
        print(f"{argument}: {'ok' if not problems else f'{len(problems)} problem(s)'}")
        for problem in problems:
            print(f"  {problem}")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
