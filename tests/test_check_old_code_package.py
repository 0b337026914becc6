"""The check_old_code package itself: one concern a module, small typed documented modules, imports that only go down,
one reader of the ladder."""

from __future__ import annotations

import ast

from course_facts.registry import ROOT

PACKAGE = ROOT / "check_old_code"


def _package_imports() -> dict[str, set[str]]:
    """``{module: the package's modules it imports}``, read from each module's ``from .x import ...`` lines."""
    graph = {}
    for path in sorted(PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[path.stem] = {
            node.module or "__init__" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.level == 1
        }
        assert not any(isinstance(node, ast.ImportFrom) and node.level > 1 for node in ast.walk(tree)), path
    return graph


def test_package_modules_are_small_typed_and_documented() -> None:
    paths = sorted(PACKAGE.glob("*.py"))
    assert len(paths) >= 10
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert len(text.splitlines()) <= 800, path.name
        tree = ast.parse(text)
        assert ast.get_docstring(tree), f"{path.name} has no module docstring"
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                assert ast.get_docstring(node), f"{path.name}: {node.name} has no docstring"
            if isinstance(node, ast.FunctionDef):
                assert node.returns is not None or node.name == "__init__", f"{path.name}: {node.name} return type"


def test_package_imports_have_no_cycle() -> None:
    graph = _package_imports()
    assert set().union(*graph.values()) <= set(graph), "a module imports one that is not in the package"
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"import cycle: {' -> '.join((*path, name))}"
        if name not in done:
            for imported in sorted(graph[name]):
                visit(imported, (*path, name))
            done.add(name)

    for name in sorted(graph):
        visit(name, ())
    assert all(
        "__init__" not in imported and "cli" not in imported
        for name, imported in graph.items()
        if name not in ("__init__", "__main__")
    )


def test_only_ladder_results_reads_the_ladder() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        if path.stem in ("ladder_results", "__init__"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}
        assert not imported & {"ladder", "LADDER_RESULTS", "ROOT"}, path.name
        reads_json = any(
            isinstance(node, ast.Import) and "json" in {a.name for a in node.names} for node in ast.walk(tree)
        )
        assert not reads_json or path.stem == "sources", f"{path.name} reads JSON: only sources (notebooks) may"
