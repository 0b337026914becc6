"""The register of the course's rules: every rule a lesson states, the cases tried, and the test that tries it.

Usage:
    python -m tools.rules            write docs/rules.md from the markers in tests/lesson_NN/test_rules.py
    python -m tools.rules --check    exit 1 if docs/rules.md is not what the markers give, or a marker's
                                     sentence is not in its lesson's main text

A rule test is a pytest test with one marker per rule it tries (the marker is registered in pyproject.toml)::

    @pytest.mark.rule(lesson="07", section="5. Gradient accumulation", text="<the sentence, verbatim>",
                      covers=["uneven last micro-batch", "accumulation 3"])
    def test_sum_recipe_is_exact_on_any_split(): ...

The markers live in tests/lesson_NN/test_rules.py, or on an existing test elsewhere in tests/ that already tries
the rule. They are read from the test files' syntax tree (nothing is imported), so the register is built in a
fraction of a second. ``text`` must be found verbatim in the *main text* of the lesson's notebook: its markdown
cells, without the collapsed boxes (``<details>`` ... ``</details>``), whitespace collapsed to single spaces, under
a ``#`` heading whose text starts with ``section``. A rule told only inside a box is not in the main text, and a
learner who skims past the box never reads it.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
NOTEBOOKS = ROOT / "notebooks"
PAGE = ROOT / "docs" / "rules.md"
RULE_FILE = re.compile(r"(?:^|/)lesson_(\d\d)/test_rules\.py$")
_BOX = re.compile(r"<details\b.*?</details>", re.DOTALL | re.IGNORECASE)
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_FIELDS = ("lesson", "section", "text", "covers")


class RuleError(ValueError):
    """A marker that cannot be registered (what is wrong, and where)."""


@dataclass(frozen=True)
class Rule:
    """One rule as its marker states it, and the test that tries it."""

    lesson: str
    section: str
    text: str
    covers: tuple[str, ...]
    test: str  # tests/lesson_NN/test_rules.py::test_name
    line: int


def normalise(text: str) -> str:
    """Whitespace runs become one space; ends stripped."""
    return " ".join(text.split())


def _literal(node: ast.expr, where: str, field: str) -> object:
    try:
        return ast.literal_eval(node)
    except ValueError as error:
        raise RuleError(
            f"{where}: the rule marker's {field}= must be a literal (a string or a list of strings)"
        ) from error


def _marker_call(decorator: ast.expr) -> ast.Call | None:
    """The ``pytest.mark.rule(...)`` call of a decorator, or None."""
    if not isinstance(decorator, ast.Call):
        return None
    func = decorator.func
    if isinstance(func, ast.Attribute) and func.attr == "rule":
        inner = func.value
        if isinstance(inner, ast.Attribute) and inner.attr == "mark":
            return decorator
    return None


def rules_in(path: Path) -> list[Rule]:
    """The rule markers on the test functions (and test methods) of one test file, in file order.

    Raises:
        RuleError: a marker lacks a field, has an extra one, or its values are not literals of the right type.
    """
    relative = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    file_lesson = RULE_FILE.search(path.as_posix())
    found: list[Rule] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for decorator in node.decorator_list:
            call = _marker_call(decorator)
            if call is None:
                continue
            where = f"{relative}:{call.lineno} ({node.name})"
            if call.args:
                raise RuleError(
                    f"{where}: give the rule marker's fields by name: {', '.join(f + '=' for f in _FIELDS)}"
                )
            fields = {keyword.arg: _literal(keyword.value, where, str(keyword.arg)) for keyword in call.keywords}
            missing = [name for name in _FIELDS if name not in fields]
            extra = [str(name) for name in fields if name not in _FIELDS]
            if missing or extra:
                raise RuleError(
                    f"{where}: the rule marker takes exactly {', '.join(_FIELDS)}"
                    + (f"; missing {', '.join(missing)}" if missing else "")
                    + (f"; unknown {', '.join(extra)}" if extra else "")
                )
            lesson, section, text, covers = (fields[name] for name in _FIELDS)
            if not (isinstance(lesson, str) and re.fullmatch(r"\d\d", lesson)):
                raise RuleError(f'{where}: lesson= is the two-digit number as a string, such as "07"; got {lesson!r}')
            if file_lesson and file_lesson.group(1) != lesson:
                raise RuleError(f"{where}: a rule of lesson {lesson} belongs in tests/lesson_{lesson}/test_rules.py")
            for name, value in (("section", section), ("text", text)):
                if not (isinstance(value, str) and value.strip()):
                    raise RuleError(f"{where}: {name}= must be a non-empty string")
            if not (
                isinstance(covers, list | tuple)
                and covers
                and all(isinstance(case, str) and case.strip() for case in covers)
            ):
                raise RuleError(
                    f"{where}: covers= must be a non-empty list of the cases tried, such as ['accumulation 3']"
                )
            found.append(
                Rule(
                    lesson=lesson,
                    section=normalise(str(section)),
                    text=normalise(str(text)),
                    covers=tuple(normalise(case) for case in covers),  # type: ignore[union-attr]
                    test=f"{relative.as_posix()}::{node.name}",
                    line=call.lineno,
                )
            )
    return found


def rule_files(tests: Path = TESTS) -> list[Path]:
    """The test files that carry rule markers: tests/lesson_NN/test_rules.py first, in lesson order, then any other
    tests/test_*.py whose existing test already tries a rule (a marker there is read the same way)."""
    own = sorted(path for path in tests.glob("lesson_*/test_rules.py") if RULE_FILE.search(path.as_posix()))
    others = sorted(
        path
        for path in tests.rglob("test_*.py")
        if path not in own and "mark.rule(" in path.read_text(encoding="utf-8")
    )
    return own + others


def collect(tests: Path = TESTS) -> list[Rule]:
    """Every registered rule, by lesson, then file and line."""
    found = [rule for path in rule_files(tests) for rule in rules_in(path)]
    return sorted(
        found,
        key=lambda rule: (
            rule.lesson,
            not RULE_FILE.match(rule.test.split("::")[0].split("/")[-1]),
            rule.test.split("::")[0],
            rule.line,
        ),
    )


def notebook_for(lesson: str, notebooks: Path = NOTEBOOKS) -> Path:
    """notebooks/NN_*.ipynb for a two-digit lesson number."""
    matches = sorted(notebooks.glob(f"{lesson}_*.ipynb"))
    if len(matches) != 1:
        raise RuleError(f"lesson {lesson}: expected one notebooks/{lesson}_*.ipynb, found {len(matches)}")
    return matches[0]


def main_text_sections(path: Path) -> list[tuple[str, str]]:
    """The main text of a notebook as ``(heading, text)`` pairs: markdown cells without their ``<details>`` boxes,
    one pair per heading, whitespace collapsed. A heading's text includes its deeper headings' text (a ``###``
    counts under its ``##``); text before the first heading comes under the heading ``""``."""
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    markdown = "\n\n".join(_BOX.sub(" ", "".join(cell["source"])) for cell in cells if cell["cell_type"] == "markdown")
    sections: list[tuple[str, int, list[str]]] = [("", 0, [])]  # (heading, level, lines)
    for line in markdown.splitlines():
        heading = _HEADING.match(line)
        if heading:
            sections.append((normalise(heading.group(2)), len(heading.group(1)), []))
        sections[-1][2].append(line)
    result: list[tuple[str, str]] = []
    for index, (title, level, lines) in enumerate(sections):
        body = list(lines)
        for _sub_title, sub_level, sub_lines in sections[index + 1 :]:
            if level == 0 or sub_level <= level:
                break
            body.extend(sub_lines)
        result.append((title, normalise("\n".join(body))))
    return result


def problems(rule: Rule, notebooks: Path = NOTEBOOKS) -> list[str]:
    """Why a rule's sentence is not where its marker says (empty when it is)."""
    where = f"{rule.test} (lesson {rule.lesson})"
    try:
        sections = main_text_sections(notebook_for(rule.lesson, notebooks))
    except RuleError as error:
        return [f"{where}: {error}"]
    matching = [body for title, body in sections if title.startswith(rule.section)]
    if not matching:
        headings = "; ".join(title for title, _ in sections if title)
        return [f"{where}: no heading starts with section={rule.section!r}. The headings: {headings}"]
    if not any(rule.text in body for body in matching):
        anywhere = any(rule.text in body for _, body in sections)
        hint = (
            "it is in the main text, under another heading: fix section="
            if anywhere
            else "not in the main text (markdown cells outside <details> boxes): quote the sentence as the lesson "
            "writes it, or write the rule into the main text"
        )
        return [f"{where}: text={rule.text!r} is {hint}"]
    return []


def page(rules: list[Rule]) -> str:
    """docs/rules.md: one table per lesson."""
    lines = [
        "# The course's rules, and the tests that try them",
        "",
        "<!-- generated by `python -m tools.rules` from the @pytest.mark.rule markers of the tests",
        "     (tests/lesson_NN/test_rules.py and a few existing tests); do not edit by hand -->",
        "",
        "Every rule a lesson states for a learner to apply, the cases a test tries it on beyond the lesson's own run,",
        "and the test. `make test` fails when a rule's sentence is no longer in its lesson's main text.",
        "",
        f"{len(rules)} rules, {sum(len(rule.covers) for rule in rules)} cases tried.",
    ]
    by_lesson: dict[str, list[Rule]] = {}
    for rule in rules:
        by_lesson.setdefault(rule.lesson, []).append(rule)
    for lesson in sorted(by_lesson):
        name = notebook_for(lesson).name if list(NOTEBOOKS.glob(f"{lesson}_*.ipynb")) else lesson
        lines += ["", f"## Lesson {lesson} ([{name}](../notebooks/{name}))", ""]
        lines += ["| section | rule | cases tried | test |", "|---|---|---|---|"]
        for rule in by_lesson[lesson]:
            path, name = rule.test.split("::")
            cells = (rule.section, rule.text, "; ".join(rule.covers), f"`{path.rsplit('/', 1)[-1]}::{name}`")
            lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/rules.md is stale or a rule is not found")
    args = parser.parse_args(argv)
    try:
        rules = collect()
    except RuleError as error:
        print(f"rules: {error}", file=sys.stderr)
        return 1
    expected = page(rules)
    if args.check:
        found = [problem for rule in rules for problem in problems(rule)]
        for problem in found:
            print(f"rules: {problem}", file=sys.stderr)
        current = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if current != expected:
            print("rules: docs/rules.md is not what the markers give: run python -m tools.rules", file=sys.stderr)
            return 1
        return 1 if found else 0
    PAGE.write_text(expected, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}: {len(rules)} rules, {sum(len(r.covers) for r in rules)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
