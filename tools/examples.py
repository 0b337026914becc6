"""The lessons' patterns as scripts: ``examples/<stem>.py`` generated from each notebook's tagged cells.

A lesson marks the code cells of its pattern with the cell tag ``pattern`` (script ``examples/<notebook
stem>.py``); a second pattern uses ``pattern:<name>`` (script ``examples/NN_<name>.py``). The script is the
tagged cells in order, under a short header, with two changes that make it a Hugging Face style example:

- the pattern's one ``args = TrainingArguments(kw=value, ...)`` (or a TRL ``...Config(...)``) becomes an
  ``HfArgumentParser`` over that class whose defaults are the notebook's keyword values, so every field can be
  set from the command line (``--output_dir``, ``--max_steps``, ``--per_device_train_batch_size``, ...);
- after each ``trainer = ...Trainer(...)`` at the top level, or in the body of a function the tagged cells
  define (a lesson that builds one Trainer a trial), the script adds a callback, ``ShowPlan``, that prints the
  global batch (per device x accumulation x processes) and the planned optimizer steps when training starts.

A pattern that IS a script (its tagged cells are ``%%writefile PATH`` then ``%%writefile -a PATH``, as lesson
10's ``train.py``) is copied as it stands, magic lines removed: it parses its own arguments and prints its own
plan line, so nothing is rewritten or added.

``python -m tools.examples`` writes the scripts; ``python -m tools.examples --check`` writes nothing and fails
when a script differs from its notebook (or no notebook makes it). docs/authoring.md, "The pattern", says the
rules a pattern follows; tests/test_patterns.py and tests/test_examples.py check them.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
EXAMPLES = ROOT / "examples"
TAG = "pattern"
TAG_NAME_RE = re.compile(r"^[a-z0-9_]+$")
ARGUMENT_CLASS_RE = re.compile(r"(Arguments|Config)$")
FUNCTION_ARGUMENT_CLASS_RE = re.compile(r"Arguments$")
NUMBER_RE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")

SHOW_PLAN = '''from transformers import HfArgumentParser, TrainerCallback


class ShowPlan(TrainerCallback):
    """Prints the global batch and the planned optimizer steps when training starts."""

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            per_device = args.per_device_train_batch_size
            accumulation = args.gradient_accumulation_steps
            batch = per_device * accumulation * args.world_size
            print(
                f"global batch {batch} = {per_device} per device x {accumulation} "
                f"accumulation x {args.world_size} processes; "
                f"{state.max_steps} optimizer steps planned"
            )
'''


class PatternError(ValueError):
    """A notebook's tagged cells cannot be turned into a script; the message says what to change."""


@dataclass(frozen=True)
class Cell:
    """One tagged code cell: its index in the notebook and its source."""

    index: int
    source: str


def pattern_tags(cell: dict) -> list[str]:
    """The ``pattern`` / ``pattern:<name>`` tags of a notebook cell."""
    tags = cell.get("metadata", {}).get("tags", [])
    return [tag for tag in tags if tag == TAG or tag.startswith(TAG + ":")]


def script_name(notebook: Path, tag: str) -> str:
    """``NN_<notebook slug>.py`` for the tag ``pattern``, ``NN_<name>.py`` for ``pattern:<name>``."""
    if tag == TAG:
        return f"{notebook.stem}.py"
    name = tag.split(":", 1)[1]
    if not TAG_NAME_RE.match(name):
        raise PatternError(f"{notebook.name}: tag {tag!r}: a pattern's name is lower case letters, digits and _.")
    return f"{notebook.stem[:2]}_{name}.py"


def read_notebook(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def tagged_cells(nb: dict, notebook: Path) -> dict[str, list[Cell]]:
    """Script file name -> the code cells tagged for it, in notebook order."""
    scripts: dict[str, list[Cell]] = {}
    for index, cell in enumerate(nb["cells"]):
        for tag in pattern_tags(cell):
            if cell["cell_type"] != "code":
                raise PatternError(f"{notebook.name} cell {index}: tag {tag!r} is on a markdown cell; tag code cells.")
            scripts.setdefault(script_name(notebook, tag), []).append(Cell(index, "".join(cell["source"])))
    return scripts


def lesson_title(nb: dict) -> str:
    """``03 · Learning-rate schedules``, from the title cell ``# NN · Title``."""
    first = "".join(nb["cells"][0]["source"]).splitlines()[0]
    return first.removeprefix("# ").strip()


def _name_of(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _top_level_call(statement: ast.stmt, name_re: re.Pattern[str]) -> tuple[str, ast.Call] | None:
    """``(target, call)`` when ``statement`` is ``target = Something(...)`` with a matching class name."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1):
        return None
    target, value = statement.targets[0], statement.value
    if isinstance(target, ast.Name) and isinstance(value, ast.Call) and name_re.search(_name_of(value.func)):
        return target.id, value
    return None


WRITEFILE_RE = re.compile(r"^%%writefile(\s+-a)?\s+(\S+)\s*$")


def _writefile(cell: Cell) -> tuple[bool, str, str] | None:
    """``(appends, target, body)`` of a ``%%writefile [-a] target`` cell; None for any other cell."""
    first, _, body = cell.source.partition("\n")
    match = WRITEFILE_RE.match(first.strip())
    if not match:
        return None
    return bool(match.group(1)), match.group(2), body


def _script_cells(notebook: Path, name: str, cells: list[Cell]) -> list[str] | None:
    """The bodies of a pattern written as one file by ``%%writefile``; None when no tagged cell writes a file."""
    written = [_writefile(cell) for cell in cells]
    if not any(written):
        return None
    where = f"{notebook.name} ({name})"
    if not all(written):
        plain = next(cell.index for cell, found in zip(cells, written) if not found)
        raise PatternError(
            f"{where}: cell {plain} is not a %%writefile cell, but other tagged cells are; a pattern is either "
            "plain cells or one file written by `%%writefile PATH` then `%%writefile -a PATH` cells."
        )
    targets = {target for _, target, _ in written}  # type: ignore[misc]
    appends = [appends for appends, _, _ in written]  # type: ignore[misc]
    if len(targets) != 1 or appends[0] or not all(appends[1:]):
        raise PatternError(
            f"{where}: a pattern written to a file is one `%%writefile PATH` cell, then `%%writefile -a PATH` "
            f"cells to the same PATH; found targets {sorted(targets)}, appends {appends}."
        )
    bodies = [body.strip("\n") for _, _, body in written]  # type: ignore[misc]
    for cell, body in zip(cells, bodies):
        magic = [line for line in body.splitlines() if line.lstrip().startswith(("%", "!"))]
        if magic:
            raise PatternError(f"{notebook.name} cell {cell.index}: the file is plain Python; remove {magic[0]!r}.")
    try:
        ast.parse("\n".join(bodies))
    except SyntaxError as error:
        raise PatternError(f"{where}: the written file is not valid Python ({error.msg}).") from error
    return bodies


def _statements(tree: ast.Module) -> list[tuple[ast.stmt, bool]]:
    """Each top-level statement, and each statement inside a top-level function, with ``True`` for the latter."""
    found: list[tuple[ast.stmt, bool]] = []
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.extend((node, True) for node in ast.walk(statement) if isinstance(node, ast.stmt))
        else:
            found.append((statement, False))
    return found


def _arguments_calls(tree: ast.Module) -> list[tuple[ast.Assign, ast.Call]]:
    """``args = X(...)`` calls: at the top level any ``...Arguments``/``...Config`` class; inside a top-level
    function (a factory that builds its Trainer) only ``...Arguments``, so that a model's ``LlamaConfig(...)``
    built in a function is not taken for the run's arguments."""
    found = []
    for node, in_function in _statements(tree):
        call = _top_level_call(node, FUNCTION_ARGUMENT_CLASS_RE if in_function else ARGUMENT_CLASS_RE)
        if call:
            found.append((node, call[1]))  # type: ignore[arg-type]
    return found


def _trainer_assignments(tree: ast.Module) -> list[tuple[str, ast.Assign]]:
    """``name = ...Trainer(...)`` at the top level and anywhere in the functions defined at the top level."""
    trainer_re = re.compile(r"Trainer$")
    found = []
    for node, _ in _statements(tree):
        call = _top_level_call(node, trainer_re)
        if call:
            found.append((call[0], node))  # type: ignore[arg-type]
    return found


def _returned_trainers(tree: ast.Module) -> list[ast.Return]:
    """``return ...Trainer(...)`` inside the functions defined at the top level (a factory of Trainers)."""
    return [
        node
        for node, in_function in _statements(tree)
        if in_function
        and isinstance(node, ast.Return)
        and isinstance(node.value, ast.Call)
        and _name_of(node.value.func).endswith("Trainer")
    ]


def _rewrite_arguments(lines: list[str], statement: ast.Assign, call: ast.Call, where: str) -> list[str]:
    """The lines of ``args = TrainingArguments(kw=v, ...)`` as an HfArgumentParser with those defaults."""
    cls = ast.unparse(call.func)
    if call.args or any(keyword.arg is None for keyword in call.keywords):
        raise PatternError(
            f"{where}: `{cls}(...)` takes keyword arguments only in a pattern (no positional argument, no "
            "**kwargs), so that the script can turn each into a command-line default: write output_dir=..."
        )
    target = statement.targets[0].id  # type: ignore[attr-defined]
    first = lines[statement.lineno - 1]
    indent = first[: statement.col_offset]
    head = first[: statement.col_offset] + "parser.set_defaults" + first[call.func.end_col_offset :]
    if call.func.end_lineno != statement.lineno:
        raise PatternError(f"{where}: write `{target} = {cls}(` on one line.")
    body = [head, *lines[statement.lineno : statement.end_lineno]]
    return [
        f"{indent}parser = HfArgumentParser({cls})  # each field is a command-line flag",
        *body,
        f"{indent}({target},) = parser.parse_args_into_dataclasses()",
    ]


def _drop_display_semicolons(tree: ast.Module, lines: list[str]) -> None:
    """Remove the ``;`` that ends a top-level expression (``trainer.train();``): in a notebook it hides the value's
    display, in a script it is noise. ``lines`` is edited in place; line numbers do not change."""
    for statement in tree.body:
        if isinstance(statement, ast.Expr) and statement.end_lineno is not None:
            line = lines[statement.end_lineno - 1]
            head, tail = line[: statement.end_col_offset], line[statement.end_col_offset :]
            if tail.lstrip().startswith(";") and not tail.lstrip()[1:].strip(" ;"):
                lines[statement.end_lineno - 1] = head


def _drop_repeated_imports(tree: ast.Module, lines: list, imported: set[tuple[str, str, str | None]]) -> None:
    """Blank out what an earlier cell of the script (or its header) already imported: a one-line top-level
    import keeps only its new names, and one with none left becomes ``None`` (dropped when the cell is written).
    ``imported`` holds ``(module, name, asname)``, ``module`` empty for ``import x``; it grows with this cell."""
    for statement in tree.body:
        if not isinstance(statement, (ast.Import, ast.ImportFrom)) or statement.end_lineno != statement.lineno:
            continue
        if isinstance(statement, ast.ImportFrom) and statement.level:
            continue  # relative imports are left as they stand
        module = (statement.module or "") if isinstance(statement, ast.ImportFrom) else ""
        names = [(module, alias.name, alias.asname) for alias in statement.names]
        new = [name for name in names if name not in imported]
        imported.update(names)
        if len(new) == len(names):
            continue
        index = statement.lineno - 1
        line = lines[index]
        comment = line[statement.end_col_offset :].strip()
        if not new:
            lines[index] = None if not comment else f"{' ' * statement.col_offset}{comment}"
            continue
        spelled = ", ".join(name if asname is None else f"{name} as {asname}" for _, name, asname in new)
        head = f"from {module} import " if isinstance(statement, ast.ImportFrom) else "import "
        lines[index] = f"{' ' * statement.col_offset}{head}{spelled}" + (f"  {comment}" if comment else "")


def script_source(notebook: Path, nb: dict, name: str, cells: list[Cell]) -> str:
    """The generated script for the cells tagged for ``name``."""
    relative = notebook.relative_to(ROOT) if notebook.is_relative_to(ROOT) else notebook
    out = [
        f'"""{lesson_title(nb)}: the pattern, as a script.',
        "",
        f"Generated from {relative.as_posix()} by `python -m tools.examples`; do not edit.",
        f"Run: python {name} [--output_dir DIR] [--max_steps N] [any other TrainingArguments flag]",
        '"""',
        "",
    ]
    bodies = _script_cells(notebook, name, cells)
    if bodies is not None:  # the pattern is a script already: copied as it stands
        for cell, body in zip(cells, bodies):
            out.extend([f"# %% {notebook.name} cell {cell.index}", body, "", ""])
        return "\n".join(out).rstrip() + "\n"
    out.extend([SHOW_PLAN, ""])
    arguments = trainers = 0
    imported: set[tuple[str, str, str | None]] = set()
    _drop_repeated_imports(ast.parse(SHOW_PLAN), SHOW_PLAN.splitlines(), imported)  # records the header's imports
    for cell in cells:
        where = f"{notebook.name} cell {cell.index}"
        lines = cell.source.splitlines()
        magic = [line for line in lines if line.lstrip().startswith(("%", "!"))]
        if magic:
            raise PatternError(f"{where}: a pattern cell is plain Python; remove {magic[0].strip()!r}.")
        try:
            tree = ast.parse(cell.source)
        except SyntaxError as error:
            raise PatternError(f"{where}: not valid Python ({error.msg}, line {error.lineno}).") from error
        _drop_display_semicolons(tree, lines)
        _drop_repeated_imports(tree, lines, imported)
        edits: list[tuple[int, int, list[str]]] = []  # (first line, last line, replacement), 1-based
        for statement, call in _arguments_calls(tree):
            arguments += 1
            replaced = _rewrite_arguments(lines, statement, call, where)
            edits.append((statement.lineno, statement.end_lineno or statement.lineno, replaced))
        for returned in _returned_trainers(tree):
            trainers += 1
            end = returned.end_lineno or returned.lineno
            kept = lines[returned.lineno - 1 : end]
            indent = " " * returned.col_offset
            if not kept[0][returned.col_offset :].startswith("return "):
                raise PatternError(f"{where}: write `return {_name_of(returned.value.func)}(` on one line.")  # type: ignore[union-attr]
            kept[0] = f"{indent}trainer = {kept[0][returned.col_offset + len('return ') :]}"
            added = [f"{indent}trainer.add_callback(ShowPlan())", f"{indent}return trainer"]
            edits.append((returned.lineno, end, [*kept, *added]))
        for target, statement in _trainer_assignments(tree):
            trainers += 1
            end = statement.end_lineno or statement.lineno
            kept = lines[statement.lineno - 1 : end]
            indent = " " * statement.col_offset
            edits.append((statement.lineno, end, [*kept, f"{indent}{target}.add_callback(ShowPlan())"]))
        edits.sort(key=lambda edit: edit[0])
        for first, last, replacement in reversed(edits):
            lines[first - 1 : last] = replacement
        out.append(f"# %% {where}")
        out.extend(line for line in lines if line is not None and not line.startswith("#|"))
        out.extend(["", ""])
    if arguments != 1:
        raise PatternError(
            f"{notebook.name} ({name}): the tagged cells must build their arguments in exactly one "
            f"`args = TrainingArguments(...)` (or, at the top level, TRL `...Config(...)`) call, at the top level or "
            f"in a function that builds the Trainer; found {arguments}."
        )
    if not trainers:
        raise PatternError(
            f"{notebook.name} ({name}): no `trainer = ...Trainer(...)` in the tagged cells; build the Trainer "
            "at the top level of a tagged cell, or assign or return it in a function the tagged cells define, "
            "so the script can print the global batch and steps."
        )
    return "\n".join(out).rstrip() + "\n"


def generate(notebooks: list[Path]) -> dict[str, str]:
    """Script file name -> its source, for every tagged pattern of ``notebooks``."""
    scripts: dict[str, str] = {}
    for notebook in notebooks:
        nb = read_notebook(notebook)
        for name, cells in tagged_cells(nb, notebook).items():
            if name in scripts:
                raise PatternError(f"{notebook.name}: two patterns write examples/{name}; rename one tag.")
            scripts[name] = script_source(notebook, nb, name, cells)
    return scripts


def generate_one(notebook: Path, nb: dict, name: str | None = None) -> str:
    """The script of one pattern of an already read notebook (its main pattern unless ``name`` is given)."""
    scripts = tagged_cells(nb, notebook)
    name = name or f"{notebook.stem}.py"
    if name not in scripts:
        raise PatternError(f"{notebook.name}: no cells are tagged for examples/{name}.")
    return script_source(notebook, nb, name, scripts[name])


def result_line(nb: dict, cells: list[Cell]) -> str | None:
    """The last line the last tagged cell printed in the committed notebook (its result line)."""
    outputs = nb["cells"][cells[-1].index].get("outputs", [])
    text = "".join("".join(o["text"]) for o in outputs if o.get("output_type") == "stream" and o["name"] == "stdout")
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else None


def is_script_pattern(cells: list[Cell]) -> bool:
    """Whether the pattern is one file written by ``%%writefile`` cells (copied as it stands)."""
    return any(_writefile(cell) for cell in cells)


def result_shapes(nb: dict, cells: list[Cell]) -> set[str]:
    """The shapes (:func:`line_shape`) a script's last line may have, read from the committed notebook.

    A plain pattern: its result line's. A pattern written to a file prints nothing when written (the cells say
    "Writing ..."); the notebook runs the file in later cells, so any stdout line those cells printed counts.
    Empty when the notebook carries no output.
    """
    if not is_script_pattern(cells):
        line = result_line(nb, cells)
        return {line_shape(line)} if line else set()
    shapes = set()
    for cell in nb["cells"][cells[-1].index + 1 :]:
        for output in cell.get("outputs", []):
            if output.get("output_type") == "stream" and output["name"] == "stdout":
                shapes |= {line_shape(line) for line in "".join(output["text"]).splitlines() if line.strip()}
    return shapes


def line_shape(line: str) -> str:
    """A result line with every number replaced by ``#``: two runs of different length print the same shape."""
    return NUMBER_RE.sub("#", line.strip())


def all_notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def main(argv: list[str]) -> int:
    check = "--check" in argv
    try:
        scripts = generate(all_notebooks())
    except PatternError as error:
        print(f"tools.examples: {error}", file=sys.stderr)
        return 1
    existing = {path.name for path in EXAMPLES.glob("*.py")} if EXAMPLES.is_dir() else set()
    stale = sorted(
        name
        for name, text in scripts.items()
        if not (EXAMPLES / name).is_file() or (EXAMPLES / name).read_text(encoding="utf-8") != text
    )
    orphans = sorted(existing - set(scripts))
    if check:
        for name in stale:
            print(f"examples/{name} differs from its notebook's tagged cells", file=sys.stderr)
        for name in orphans:
            print(f"examples/{name}: no notebook's tagged cells make it", file=sys.stderr)
        if stale or orphans:
            print("Run `python -m tools.examples` and commit examples/.", file=sys.stderr)
            return 1
        print(f"examples/: {len(scripts)} scripts agree with their notebooks")
        return 0
    EXAMPLES.mkdir(exist_ok=True)
    for name in stale:
        (EXAMPLES / name).write_text(scripts[name], encoding="utf-8")
        print(f"wrote examples/{name}")
    for name in orphans:
        (EXAMPLES / name).unlink()
        print(f"removed examples/{name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
