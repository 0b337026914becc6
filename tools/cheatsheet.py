"""Write the cheat sheet from the course's own data: docs/cheatsheet.md (a page of the book), its loop-map
figure docs/cheatsheet_loop_map.png, and docs/cheatsheet.pdf (one printable A4 page).

For maintainers (the page itself speaks to learners): never edit docs/cheatsheet* by hand. Run
``python -m tools.cheatsheet`` after re-executing the lessons it reads; ``tests/test_cheatsheet.py`` fails while
the committed page differs from what this tool writes. Nothing on it is typed by hand except the pitfalls'
one-line summaries and the sections that reproduce them (:func:`pitfall_rows`, from ``lessons.toml``):

* the callback events in firing order, with the keyword arguments each received, and the loop map: from one
  tiny recorded run (``record_loop_map`` with an ``EventRecorder``, the instruments of lesson 05 in
  ``helpers.loop_calls`` and ``helpers.callback_events``);
* the ``TrainerControl`` matrix: data, not HTML. The lesson that measures it displays it with a bundle under the
  mimetype :data:`MATRIX_MIMETYPE`, fields ``{"flags", "events", "cells", "baseline"}`` (``cells``: one row per
  event, one string per flag). :func:`find_matrix` finds it by scanning the executed lessons of the registry,
  so no notebook is named here, and re-executing that lesson updates the page;
* the methods worth overriding: ``inspect.signature`` on the installed ``Trainer``, written as one runnable
  block (a subclass whose every override calls ``super()``), with module paths that exist as written
  (``torch.nn.Module``, never a made-up ``torch.Module``). The tests execute every Python block of the page.

``python -m tools.cheatsheet`` writes the three files; ``python -m tools.cheatsheet --check`` only says whether
the committed page is current (exit status 1 and a diff when it is stale).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import importlib
import inspect
import json
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
from course_facts.registry import Lesson, lessons  # noqa: E402

DOCS = ROOT / "docs"
PAGE = DOCS / "cheatsheet.md"
LOOP_PNG = DOCS / "cheatsheet_loop_map.png"
PRINTABLE = DOCS / "cheatsheet.pdf"
MATRIX_MIMETYPE = "application/vnd.trainer-course.control-matrix+json"
MATRIX_FIELDS = ("flags", "events", "cells", "baseline")
CODE_WIDTH = 88  # the longest code line on the page: the book's column fits 88 characters
MAINTAINER_NOTE = "<!-- Written by tools/cheatsheet.py from the course's own data: edit the tool, not this page. -->"

METHODS_WORTH_OVERRIDING: tuple[str, ...] = (
    "compute_loss",
    "training_step",
    "prediction_step",
    "get_train_dataloader",
    "get_eval_dataloader",
    "get_test_dataloader",
    "create_optimizer",
    "create_scheduler",
    "evaluate",
    "log",
    "save_model",
    "_save_checkpoint",
)

CALLBACK_EXAMPLE = """from transformers import TrainerCallback


class MyCallback(TrainerCallback):
    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        print(f"step {state.global_step}: {metrics}")"""


def pitfall_rows() -> list[tuple[str, str, str]]:
    """(what goes wrong, lesson notebook, the heading of the section that reproduces it and shows the fix), from
    the registry: each lesson lists the pitfalls it reproduces in its ``[[lesson.pitfall]]`` tables."""
    return [(item.text, entry.file, item.section) for entry in lessons() for item in entry.pitfalls]


class CheatSheetError(RuntimeError):
    """The course data the cheat sheet is built from is missing or has an unexpected shape."""


def heading_anchor(heading: str) -> str:
    """The anchor MyST gives a heading (``myst_heading_anchors``; GitHub's rule): ``4. `a=` b`` -> ``4-a-b``."""
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", heading.strip().lower().replace(" ", "-"))


def _cells(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise CheatSheetError(f"{path} does not exist; lessons.toml names lessons by their file name in notebooks/.")
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


@dataclass(frozen=True)
class ControlMatrix:
    """The control matrix a lesson measured: ``cells[i][j]`` is the effect of raising ``flags[j]`` once at
    ``events[i]``, compared with the run without a probe, which the lesson printed as ``baseline``."""

    lesson: str  # the notebook's file name, from the registry
    section: str  # the heading of the section that displays the matrix
    flags: list[str]
    events: list[str]
    cells: list[list[str]]
    baseline: str


def parse_matrix(data: Any, where: str) -> tuple[list[str], list[str], list[list[str]], str]:
    """``(flags, events, cells, baseline)`` from the JSON a lesson displayed under :data:`MATRIX_MIMETYPE`.

    Raises:
        CheatSheetError: a field is missing, or the rows do not match the events and the flags.
    """
    if isinstance(data, str):
        data = json.loads(data)
    if not isinstance(data, dict) or any(name not in data for name in MATRIX_FIELDS):
        raise CheatSheetError(f"{where}: the {MATRIX_MIMETYPE} output needs the fields {', '.join(MATRIX_FIELDS)}.")
    flags, events, cells = list(data["flags"]), list(data["events"]), list(data["cells"])
    if len(cells) != len(events) or any(len(row) != len(flags) for row in cells):
        raise CheatSheetError(
            f"{where}: 'cells' must hold one row per event ({len(events)} events), "
            f"each with one entry per flag ({len(flags)} flags)."
        )
    baseline = data["baseline"] if isinstance(data["baseline"], str) else json.dumps(data["baseline"])
    rows = [[str(cell) for cell in row] for row in cells]
    return [str(flag) for flag in flags], [str(event) for event in events], rows, baseline


def find_matrix(registry: list[Lesson] | None = None) -> ControlMatrix:
    """The control matrix, found by scanning the executed lessons' outputs for :data:`MATRIX_MIMETYPE`.

    Raises:
        CheatSheetError: no lesson, or more than one, displayed it; the message says what to run.
    """
    found, displaying = [], []
    for entry in lessons() if registry is None else registry:
        section = ""
        for cell in _cells(entry.path):
            if cell["cell_type"] == "code" and MATRIX_MIMETYPE in "".join(cell["source"]):
                displaying.append(f"notebooks/{entry.file}")
            if cell["cell_type"] == "markdown":
                headings = [line for line in "".join(cell["source"]).splitlines() if line.startswith("## ")]
                section = headings[-1][3:].strip() if headings else section
            for output in cell.get("outputs", []):
                if MATRIX_MIMETYPE in output.get("data", {}):
                    parsed = parse_matrix(output["data"][MATRIX_MIMETYPE], f"notebooks/{entry.file}")
                    found.append(ControlMatrix(entry.file, section, *parsed))
    if len(found) != 1:
        where = ", ".join(matrix.lesson for matrix in found) or "none"
        lesson = " ".join(dict.fromkeys(displaying)) or "notebooks/<the lesson that measures it>"
        raise CheatSheetError(
            f"exactly one executed lesson must display the control matrix under {MATRIX_MIMETYPE} (found: {where}); "
            f"re-execute the lesson whose code displays it (`make execute NB={lesson}`), then run this tool again."
        )
    return found[0]


def _import_target(dotted: str) -> Any:
    """The object a qualified name stands for, importing its modules as needed."""
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        try:
            value: Any = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for part in parts[split:]:
            value = getattr(value, part)
        return value
    raise ImportError(dotted)


def _as_written(dotted: str) -> Any:
    """What ``dotted`` gives in code that did ``import <its first part>`` and nothing else."""
    head, *rest = dotted.split(".")
    value: Any = importlib.import_module(head)
    for part in rest:
        value = getattr(value, part)
    return value


def shortest_name(dotted: str) -> str:
    """The shortest spelling of a qualified name that works as written after ``import <package>``, for the same
    object (``torch.nn.modules.module.Module`` -> ``torch.nn.Module``); a name that resolves to nothing is kept."""
    try:
        target = _import_target(dotted)
    except (ImportError, AttributeError):
        return dotted
    *modules, last = dotted.split(".")
    for keep in range(1, len(modules) + 1):
        candidate = ".".join([*modules[:keep], last])
        try:
            if _as_written(candidate) is target:
                return candidate
        except (ImportError, AttributeError):
            continue
    return dotted


def short_annotation(text: str) -> str:
    """Signature text as ``inspect`` writes it, with every ``torch`` name spelt the shortest way that works."""
    return re.sub(r"\btorch(?:\.[A-Za-z_]\w*)+", lambda found: shortest_name(found.group(0)), text)


def _call_arguments(signature: inspect.Signature) -> list[str]:
    """The arguments that pass every parameter after ``self`` on to ``super()``."""
    arguments = []
    for parameter in list(signature.parameters.values())[1:]:
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            arguments.append(f"*{parameter.name}")
        elif parameter.kind is inspect.Parameter.VAR_KEYWORD:
            arguments.append(f"**{parameter.name}")
        elif parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            arguments.append(f"{parameter.name}={parameter.name}")
        else:
            arguments.append(parameter.name)
    return arguments


DEEP_NAME = re.compile(r"\b(torch(?:\.[a-z_]\w*){2,})\.([A-Z]\w*)")  # torch.utils.data.Dataset: imported by name


def _imported(text: str, imports: dict[str, set[str]]) -> str:
    """``text`` with each deep torch name (three modules or more) bare, noted in ``imports`` for a from-import."""

    def bare(found: re.Match[str]) -> str:
        imports.setdefault(found.group(1), set()).add(found.group(2))
        return found.group(2)

    return DEEP_NAME.sub(bare, text)


def override_source(name: str, signature: inspect.Signature, imports: dict[str, set[str]]) -> str:
    """One method of the override template, indented for a class body: the installed signature and a body that
    hands every parameter to ``super()``; lines wrapped to :data:`CODE_WIDTH` characters. Deep torch names are
    written bare and collected in ``imports``."""
    parameters = [_imported(short_annotation(str(item)), imports) for item in signature.parameters.values()]
    returns = signature.return_annotation
    arrow = ""
    if returns is not inspect.Signature.empty:
        arrow = " -> " + _imported(short_annotation(inspect.formatannotation(returns)), imports)
    head = f"    def {name}({', '.join(parameters)}){arrow}:"
    if len(head) > CODE_WIDTH:
        head = f"    def {name}(\n" + "".join(f"        {parameter},\n" for parameter in parameters) + f"    ){arrow}:"
    arguments = _call_arguments(signature)
    call = f"        return super().{name}({', '.join(arguments)})"
    if len(call) > CODE_WIDTH:
        listed = "".join(f"            {item},\n" for item in arguments)
        call = f"        return super().{name}(\n{listed}        )"
    return f"{head}\n{call}"


def signatures() -> list[tuple[str, str]]:
    """``(name, signature)`` of each method worth overriding, from the installed ``Trainer`` (short names)."""
    from transformers import Trainer

    found = []
    for name in METHODS_WORTH_OVERRIDING:
        method = getattr(Trainer, name, None)
        if method is None:
            raise CheatSheetError(f"the installed Trainer has no {name!r}; update METHODS_WORTH_OVERRIDING.")
        found.append((name, short_annotation(str(inspect.signature(method)))))
    return found


def override_template() -> str:
    """The runnable block: its imports, then a ``Trainer`` subclass that overrides every method worth overriding."""
    from transformers import Trainer

    imports: dict[str, set[str]] = {}
    methods = "\n\n".join(
        override_source(name, inspect.signature(getattr(Trainer, name)), imports) for name in METHODS_WORTH_OVERRIDING
    )
    header = ["import typing", "", "import torch"]
    header += [f"from {module} import {', '.join(sorted(names))}" for module, names in sorted(imports.items())]
    header += ["from transformers import Trainer", "", "", "class MyTrainer(Trainer):"]
    return "\n".join(header) + "\n" + methods


@dataclass(frozen=True)
class EventRow:
    """One callback event of the recorded run: how often it fired and what it received."""

    event: str
    fired: int
    given: tuple[str, ...]
    none: tuple[str, ...]


@dataclass(frozen=True)
class CheatSheet:
    """Everything the page shows, gathered from the course's own data."""

    transformers_version: str
    events: list[EventRow]
    silent_events: list[str]
    loop: list[Any]
    matrix: ControlMatrix
    signatures: list[tuple[str, str]]
    template: str


def collect() -> CheatSheet:
    """Record one tiny run (about a second after the imports) and read the rest; nothing is written."""
    import datasets
    import transformers

    from helpers.callback_events import EventRecorder, callback_event_names
    from helpers.loop_calls import record_loop_map

    datasets.disable_progress_bars()
    transformers.utils.logging.disable_progress_bar()
    recorder = EventRecorder()
    loop = record_loop_map(callbacks=[recorder], name="cheatsheet")
    rows = []
    for event in dict.fromkeys(recorder.events()):
        records = recorder.of(event)
        given = sorted({name for record in records for name in record.given})
        passed = sorted({name for record in records for name in record.kwargs})
        rows.append(EventRow(event, len(records), tuple(given), tuple(name for name in passed if name not in given)))
    silent = [event for event in callback_event_names() if event not in {row.event for row in rows}]
    version = transformers.__version__
    return CheatSheet(version, rows, silent, loop.calls, find_matrix(), signatures(), override_template())


def loop_text(calls: list[Any]) -> str:
    """The loop map as indented text: methods with ``()``, events after ``→``."""
    return "\n".join(
        "  " * call.depth + (f"{call.name}()" if call.kind == "method" else f"→ {call.name}") for call in calls
    )


def _lesson_link(notebook: str, heading: str) -> str:
    return f"[{notebook[:2]} · {heading.replace('`', '')}](../notebooks/{notebook}#{heading_anchor(heading)})"


def _flag_header(flag: str) -> str:
    """A flag as a column heading, on two lines after its ``should_`` so that the table fits the book's column."""
    head, separator, rest = flag.partition("_")
    return f"`{head}{separator}`<br>`{rest}`" if separator else f"`{flag}`"


def render_markdown(sheet: CheatSheet) -> str:
    """The page, as Markdown (MyST and GitHub both render it)."""
    events = "\n".join(
        f"| `{row.event}` | {row.fired} | {', '.join(f'`{name}`' for name in row.given) or '—'} | "
        f"{', '.join(f'`{name}`' for name in row.none) or '—'} |"
        for row in sheet.events
    )
    matrix = sheet.matrix
    matrix_head = "| event | " + " | ".join(_flag_header(flag) for flag in matrix.flags) + " |"
    matrix_rule = "|---" * (len(matrix.flags) + 1) + "|"
    matrix_rows = "\n".join(
        f"| `{event}` | " + " | ".join(row) + " |" for event, row in zip(matrix.events, matrix.cells, strict=True)
    )
    matrix_link = _lesson_link(matrix.lesson, matrix.section)
    pitfalls = "\n".join(f"- {text}: {_lesson_link(notebook, heading)}" for text, notebook, heading in pitfall_rows())
    silent = ", ".join(f"`{event}`" for event in sheet.silent_events) or "none"
    return f"""{MAINTAINER_NOTE}

# Cheat sheet

Where your code runs inside the `Trainer`, what each callback event receives, what a `TrainerControl` flag
does at each event, and the signatures of the methods worth overriding: all taken from runs of transformers
{sheet.transformers_version}. Then the pitfalls, each with the lesson section that reproduces it and shows the
fix. One printable page: [cheatsheet.pdf](cheatsheet.pdf).

## Where your code runs: the loop, recorded
One tiny `train()` and `predict()` (2 optimizer steps of 2 accumulated batches; a log, an evaluation and a
checkpoint at step 2). A bar is a `Trainer` method you can override, from its call until it returns; a diamond
is a callback event. Lesson 05 shows every event, lesson 08 the methods.

![The training loop: Trainer methods and callback events in the order one run called them](cheatsheet_loop_map.png)

The same map as text (methods with `()`, events after `→`, indented inside the method that fired them):

```text
{loop_text(sheet.loop)}
```

## Callback events, in firing order
Every handler receives `args`, `state` and `control`, and takes the keyword arguments it needs by name:

```python
{CALLBACK_EXAMPLE}
```

The kwargs below are what this run passed: with a value, or passed as `None`. Events that did not fire in this
run: {silent}.

| event | fired | kwargs with a value | kwargs passed as `None` |
|---|---|---|---|
{events}

## `TrainerControl`: what setting a flag at an event does
Measured in {matrix_link}: one run per cell, the flag set once at that event, compared with the run without
it, which the lesson printed as `{matrix.baseline}` (the steps at which it logged, evaluated and saved;
optimizer steps per epoch). `+log@2`: an extra log at step 2; `steps per epoch 1 (not 4+4)`: training ended
after one step.

{matrix_head}
{matrix_rule}
{matrix_rows}

## Methods worth overriding (signatures of the installed `Trainer`)
Each override keeps every parameter, `num_items_in_batch` included (lessons 07 and 08), and calls `super()`:
copy the ones you need and put your code around that call.

```python
{sheet.template}
```

## Pitfalls, each reproduced in a lesson
{pitfalls}
"""


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def draw_loop_map(sheet: CheatSheet, path: Path = LOOP_PNG) -> None:
    """The loop-map figure, tagged with the digest of the map's text (the test compares them)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from helpers.plots import apply_course_style
    from helpers.plots.loop_map import plot_loop_map

    apply_course_style()
    figure = plot_loop_map(sheet.loop)
    figure.savefig(path, metadata={"Description": f"loop map sha256 {_digest(loop_text(sheet.loop))}"})
    plt.close(figure)


def _short(cell: str) -> str:
    return "·" if cell == "no effect" else re.sub(r" \(not [0-9+]+\)", "", cell.replace("steps per epoch ", "steps "))


def draw_printable(sheet: CheatSheet, markdown: str, path: Path = PRINTABLE) -> None:
    """One A4 landscape page: the loop map, the events, the control matrix, the signatures and the pitfalls."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from helpers.plots import apply_course_style
    from helpers.plots.loop_map import plot_loop_map

    apply_course_style()
    figure = plt.figure(figsize=(11.69, 8.27))
    figure.set_layout_engine("none")
    figure.text(0.015, 0.985, f"Trainer cheat sheet · transformers {sheet.transformers_version}", fontsize=12,
                weight="bold", va="top")  # fmt: skip
    source = "generated by tools/cheatsheet.py from a recorded run, a lesson's outputs and the installed Trainer"
    figure.text(0.985, 0.985, source, fontsize=6, ha="right", va="top", color="grey")
    loop_ax = figure.add_axes((0.035, 0.05, 0.265, 0.86))
    plot_loop_map(sheet.loop, title="The loop, recorded (bar: method; diamond: event)", ax=loop_ax)
    for text in loop_ax.texts:
        text.set_fontsize(5.5)
    loop_ax.title.set_fontsize(7.5)
    loop_ax.tick_params(labelsize=6)
    loop_ax.xaxis.label.set_fontsize(5)
    loop_ax.yaxis.label.set_fontsize(6)
    loop_ax.legend(loc="lower left", fontsize=5.5, ncol=1)

    def block(x: float, y: float, title: str, lines: list[str], size: float) -> float:
        figure.text(x, y, title, fontsize=7.5, weight="bold", va="top")
        figure.text(x, y - 0.018, "\n".join(lines), fontsize=size, family="DejaVu Sans Mono", va="top",
                    linespacing=1.35)  # fmt: skip
        return y - 0.04 - len(lines) * size * 1.35 / (8.27 * 72)

    def wrap(lines: list[str], width: int, indent: int) -> list[str]:
        return [part for line in lines for part in textwrap.wrap(line, width, subsequent_indent=" " * indent)]

    events = [f"{row.event:<22}{row.fired:>2}  {', '.join(row.given)}" for row in sheet.events]
    events = wrap(events, 72, 26) + [f"did not fire in this run: {', '.join(sheet.silent_events) or 'none'}"]
    y = block(0.325, 0.94, "Callback events in firing order (times fired, kwargs with a value)", events, 5.0)
    methods = wrap([f"{name}{signature}" for name, signature in sheet.signatures], 72, 4)
    block(0.325, y, "Methods worth overriding (call super(), keep every parameter)", methods, 5.0)
    control = sheet.matrix
    short_flags = [flag.replace("should_", "").replace("training_", "train_") for flag in control.flags]
    matrix = ["event / flag".ljust(22) + "".join(f"{flag:<12}" for flag in short_flags)]
    matrix += [
        f"{event:<22}" + "".join(f"{_short(cell):<12}" for cell in row)
        for event, row in zip(control.events, control.cells, strict=True)
    ]
    matrix += wrap([
        "·: no effect; +save@2: an extra checkpoint at step 2; steps a+b: optimizer steps per epoch",
        f"compared with the run without the flag: {control.baseline}",
    ], 76, 2)  # fmt: skip
    title = f"TrainerControl: a flag set once at an event (lesson {control.lesson[:2]})"
    y = block(0.665, 0.94, title, matrix, 4.5)
    pitfalls = wrap([f"{notebook[:2]}  {text.replace('`', '')}" for text, notebook, _ in pitfall_rows()], 72, 4)
    block(0.665, y, "Pitfalls, and the lesson that reproduces each", pitfalls, 5.0)
    figure.savefig(path, metadata={"Subject": f"cheatsheet.md sha256 {_digest(markdown)}", "CreationDate": None})
    plt.close(figure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report whether docs/cheatsheet.md is current")
    options = parser.parse_args(argv)
    sheet = collect()
    markdown = render_markdown(sheet)
    if options.check:
        committed = PAGE.read_text(encoding="utf-8") if PAGE.exists() else ""
        if committed == markdown:
            print(f"{PAGE.relative_to(ROOT)} is current.")
            return 0
        diff = difflib.unified_diff(committed.splitlines(), markdown.splitlines(), "committed", "now", lineterm="")
        print("\n".join(diff))
        print(f"{PAGE.relative_to(ROOT)} is stale: run `python -m tools.cheatsheet` and commit docs/cheatsheet*.")
        return 1
    PAGE.write_text(markdown, encoding="utf-8")
    draw_loop_map(sheet)
    draw_printable(sheet, markdown)
    for path in (PAGE, LOOP_PNG, PRINTABLE):
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
