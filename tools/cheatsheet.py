"""Write the cheat sheet from the course's own data: docs/cheatsheet.md (a page of the book), its loop-map
figure docs/cheatsheet_loop_map.png, and docs/cheatsheet.pdf (one printable A4 page).

Nothing on it is typed by hand except the pitfalls' one-line summaries and the lesson sections that reproduce
them (:func:`pitfall_rows`, from ``lessons.toml``; ``tests/test_cheatsheet.py`` checks that each section exists):

* the callback events in firing order, with the keyword arguments each received, and the loop map: from one
  tiny recorded run (``helpers.loop_map.record_loop_map`` with a ``helpers.callbacks.EventRecorder``);
* the ``TrainerControl`` matrix: read from the committed, executed lesson 06 (its ``control_matrix`` output,
  measured by 60 runs there), so re-executing lesson 06 updates it;
* the signatures of the methods worth overriding: ``inspect.signature`` on the installed ``Trainer``.

``python tools/cheatsheet.py`` writes the three files; ``python tools/cheatsheet.py --check`` only says whether
the committed page is current (exit status 1 and a diff when it is stale).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import inspect
import json
import re
import sys
import textwrap
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from helpers.registry import lessons  # noqa: E402

DOCS = ROOT / "docs"
PAGE = DOCS / "cheatsheet.md"
LOOP_PNG = DOCS / "cheatsheet_loop_map.png"
PRINTABLE = DOCS / "cheatsheet.pdf"
MATRIX_LESSON = "06_callback_control.ipynb"
MATRIX_CELL_MARK = "control_matrix = pd.DataFrame"
BASELINE_CELL_MARK = "baseline = run_actions("

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


def pitfall_rows() -> list[tuple[str, str, str]]:
    """(what goes wrong, lesson notebook, the heading of the section that reproduces it and shows the fix), from
    the registry: each lesson lists the pitfalls it reproduces in its ``[[lesson.pitfall]]`` tables."""
    return [(item.text, entry.file, item.section) for entry in lessons() for item in entry.pitfalls]


SHORTENED_MODULES = r"\btorch\.(nn\.modules\.module|utils\.data\.dataloader|optim\.optimizer)\."  # torch.Module


class CheatSheetError(RuntimeError):
    """The course data the cheat sheet is built from is missing or has an unexpected shape."""


def heading_anchor(heading: str) -> str:
    """The anchor MyST gives a heading (``myst_heading_anchors``; GitHub's rule): ``4. `a=` b`` -> ``4-a-b``."""
    return re.sub(r"[^\w\u4e00-\u9fff\- ]", "", heading.strip().lower().replace(" ", "-"))


def lesson_headings(notebook: str) -> list[str]:
    """The ``##`` headings of a committed lesson, in order."""
    path = ROOT / "notebooks" / notebook
    if not path.is_file():
        raise CheatSheetError(f"{path} does not exist; lessons.toml names lessons by their file name in notebooks/.")
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    lines = ("".join(cell["source"]).splitlines() for cell in cells if cell["cell_type"] == "markdown")
    return [line[3:].strip() for block in lines for line in block if line.startswith("## ")]


class _TableParser(HTMLParser):
    """The cells of a pandas ``DataFrame.to_html`` table, row by row (header row first)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        if tag == "tr":
            self.rows.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None:
            self.rows[-1].append("".join(self._cell).strip())
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _outputs(notebook: str, mark: str) -> list[dict[str, Any]]:
    cells = json.loads((ROOT / "notebooks" / notebook).read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] == "code" and mark in "".join(cell["source"]) and cell.get("outputs"):
            return cell["outputs"]
    raise CheatSheetError(
        f"notebooks/{notebook} has no executed cell containing {mark!r}; run `make execute NB=notebooks/{notebook}`."
    )


def control_matrix(notebook: str = MATRIX_LESSON) -> tuple[list[str], list[list[str]], str]:
    """``(flags, rows, baseline)`` of the control matrix lesson 06 measured; each row is ``[event, cell, ...]``.

    ``baseline`` is the line lesson 06 printed for its run without a probe (what each cell is compared with).

    Raises:
        CheatSheetError: the lesson has no executed ``control_matrix`` cell with an HTML table, or no baseline.
    """
    for output in _outputs(notebook, MATRIX_CELL_MARK):
        html = output.get("data", {}).get("text/html")
        if html:
            parser = _TableParser()
            parser.feed("".join(html))
            header, *rows = [row for row in parser.rows if row]
            break
    else:
        raise CheatSheetError(f"the {MATRIX_CELL_MARK!r} cell of notebooks/{notebook} has no HTML table output.")
    printed = "".join("".join(output.get("text", "")) for output in _outputs(notebook, BASELINE_CELL_MARK)).strip()
    if not printed:
        raise CheatSheetError(f"the {BASELINE_CELL_MARK!r} cell of notebooks/{notebook} printed nothing.")
    return header[1:], rows, printed.splitlines()[-1]


def signatures() -> list[tuple[str, str]]:
    """``(name, signature)`` of each method worth overriding, from the installed ``Trainer``."""
    from transformers import Trainer

    found = []
    for name in METHODS_WORTH_OVERRIDING:
        method = getattr(Trainer, name, None)
        if method is None:
            raise CheatSheetError(f"the installed Trainer has no {name!r}; update METHODS_WORTH_OVERRIDING.")
        signature = str(inspect.signature(method))
        found.append((name, re.sub(SHORTENED_MODULES, "torch.", signature)))
    return found


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
    flags: list[str]
    matrix: list[list[str]]
    baseline: str
    signatures: list[tuple[str, str]]


def collect() -> CheatSheet:
    """Record one tiny run (about a second after the imports) and read the rest; nothing is written."""
    import datasets
    import transformers

    from helpers.callbacks import EventRecorder, callback_event_names
    from helpers.loop_map import record_loop_map

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
    flags, matrix, baseline = control_matrix()
    return CheatSheet(transformers.__version__, rows, silent, loop.calls, flags, matrix, baseline, signatures())


def loop_text(calls: list[Any]) -> str:
    """The loop map as indented text: methods with ``()``, events after ``→``."""
    return "\n".join(
        "  " * call.depth + (f"{call.name}()" if call.kind == "method" else f"→ {call.name}") for call in calls
    )


def _lesson_link(notebook: str, heading: str) -> str:
    return f"[{notebook[:2]} · {heading.replace('`', '')}](../notebooks/{notebook}#{heading_anchor(heading)})"


def render_markdown(sheet: CheatSheet) -> str:
    """The page, as Markdown (MyST and GitHub both render it)."""
    events = "\n".join(
        f"| `{row.event}` | {row.fired} | {', '.join(f'`{name}`' for name in row.given) or '—'} | "
        f"{', '.join(f'`{name}`' for name in row.none) or '—'} |"
        for row in sheet.events
    )
    matrix_head = "| event | " + " | ".join(f"`{flag}`" for flag in sheet.flags) + " |"
    matrix_rule = "|---" * (len(sheet.flags) + 1) + "|"
    matrix = "\n".join(f"| `{row[0]}` | " + " | ".join(row[1:]) + " |" for row in sheet.matrix)
    methods = "\n".join(f"def {name}{signature}" for name, signature in sheet.signatures)
    pitfalls = "\n".join(f"- {text}: {_lesson_link(notebook, heading)}" for text, notebook, heading in pitfall_rows())
    silent = ", ".join(f"`{event}`" for event in sheet.silent_events) or "none"
    return f"""# Cheat sheet

*Generated by `tools/cheatsheet.py` from transformers {sheet.transformers_version}: the events and the loop map
from one recorded run, the control matrix from the executed lesson 06, the signatures from the installed
`Trainer`. Do not edit by hand; `tests/test_cheatsheet.py` fails when it is stale. One printable page:
[cheatsheet.pdf](cheatsheet.pdf).*

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
Every handler is `def on_<event>(self, args, state, control, **kwargs)`. The kwargs are what this run passed:
with a value, or passed as `None`. Events that did not fire in this run: {silent}.

| event | fired | kwargs with a value | kwargs passed as `None` |
|---|---|---|---|
{events}

## `TrainerControl`: what setting a flag at an event does
Measured in [lesson 06](../notebooks/06_callback_control.ipynb#2-the-control-matrix-measured): one run per
cell, the flag set once at that event, compared with the run without it, which lesson 06 printed as
`{sheet.baseline}` (the steps at which it logged, evaluated and saved; optimizer steps per epoch). `+log@2`:
an extra log at step 2; `steps per epoch 1 (not 4+4)`: training ended after one step.

{matrix_head}
{matrix_rule}
{matrix}

## Methods worth overriding (signatures of the installed `Trainer`)
Call `super()` and keep every parameter, `num_items_in_batch` included (lessons 07 and 08).

```python
{methods}
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
    source = "generated by tools/cheatsheet.py from a recorded run, lesson 06's outputs and the installed Trainer"
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
    short_flags = [flag.replace("should_", "").replace("training_", "train_") for flag in sheet.flags]
    matrix = ["event / flag".ljust(22) + "".join(f"{flag:<12}" for flag in short_flags)]
    matrix += [f"{row[0]:<22}" + "".join(f"{_short(cell):<12}" for cell in row[1:]) for row in sheet.matrix]
    matrix += wrap([
        "·: no effect; +save@2: an extra checkpoint at step 2; steps a+b: optimizer steps per epoch",
        f"compared with the run without the flag: {sheet.baseline}",
    ], 76, 2)  # fmt: skip
    y = block(0.665, 0.94, "TrainerControl: a flag set once at an event (lesson 06)", matrix, 4.5)
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
        print(f"{PAGE.relative_to(ROOT)} is stale: run `python tools/cheatsheet.py` and commit docs/cheatsheet*.")
        return 1
    PAGE.write_text(markdown, encoding="utf-8")
    draw_loop_map(sheet)
    draw_printable(sheet, markdown)
    for path in (PAGE, LOOP_PNG, PRINTABLE):
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
