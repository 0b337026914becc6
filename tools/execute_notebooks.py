"""Run notebooks top to bottom in a fresh kernel, save their outputs, and record the measured run time.

Usage: python -m tools.execute_notebooks notebooks/NN_topic.ipynb [...]   (``make execute``)

For each notebook: refresh the shared parts from the registry (title, badge, set-up cell, "What you will
learn"), clear old outputs, execute in a new kernel from ``notebooks/``, and write the notebook back with its
outputs. The wall time goes into ``lessons.toml`` (``cpu_s`` or ``gpu_s``, by the profile the set-up cell
picks), then into the notebook's ``**Run time:**`` line, the syllabus table of README.md and the agendas in
docs/workshop.md.

The lessons' ``#| export`` cells are saved into ``helpers/lessons`` (``make export``) **before** the first
notebook runs, so that a lesson's checks, which import the lesson's module at check time, run against the cells
being executed, and a new lesson's module exists before its first run. Nothing here edits an output by hand.
"""

from __future__ import annotations

import fcntl
import importlib.util
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course_facts.pins import one_thread_a_process  # noqa: E402
from course_facts.registry import REGISTRY, lesson, lessons, record_time  # noqa: E402
from tools import reading_time  # noqa: E402
from tools.blocks import replace_block  # noqa: E402
from tools.notebook_format import ROOT, apply_shared_parts, colab_badge, course_config  # noqa: E402

README = ROOT / "README.md"
SYLLABUS_START, SYLLABUS_END = "<!-- syllabus:start -->", "<!-- syllabus:end -->"


def hardware_key() -> tuple[str, str]:
    """``("cpu", "2-core CPU")`` or ``("gpu", "<GPU name>")``: which run-time field a run measures.

    The profile is decided the one way the notebooks decide it (``setup_notebook``), so ``COURSE_PROFILE=cpu``
    on a GPU machine records a CPU-profile time."""
    import helpers

    profile = helpers.setup_notebook(announce=False)
    hardware = helpers.detect_hardware()
    return ("gpu", hardware.gpu_name or "GPU") if profile.on_gpu else ("cpu", f"{hardware.cpu_cores}-core CPU")


def syllabus_table() -> str:
    """The README's syllabus: one row per lesson of the registry, with a solo learner's minutes
    (``tools/reading_time.py``), the measured run times and the lesson's pattern as a script."""
    config = course_config()
    rows = [
        "| lesson | title | learner time | CPU run | GPU run | Colab | script |",
        "|---|---|---|---|---|---|---|",
    ]
    for entry in lessons():
        cpu, gpu = entry.seconds("cpu"), entry.seconds("gpu")
        cpu_text = f"{cpu:.0f} s" if cpu else "not measured"
        gpu_text = f"{gpu:.0f} s ({entry.machine('gpu')})" if gpu else "not measured"
        solo = f"{reading_time.read_lesson(ROOT / 'notebooks' / entry.file).learner_minutes} min"
        rows.append(
            f"| [{entry.number}](notebooks/{entry.file}) | {entry.title} | {solo} | {cpu_text} | {gpu_text} | "
            f"{colab_badge(entry.file, config)} | {script_cell(entry.file)} |"
        )
    return "\n".join(rows)


def script_cell(notebook: str) -> str:
    """The syllabus's links to a lesson's pattern scripts (examples/, tools/examples.py); "-" if none yet."""
    import json

    from tools.examples import tagged_cells

    path = ROOT / "notebooks" / notebook
    scripts = sorted(tagged_cells(json.loads(path.read_text(encoding="utf-8")), path))
    # the link text stays short ("script", or a second pattern's name) so the table fits the book's column
    names = {script: "script" if script == f"{path.stem}.py" else script[3:].removesuffix(".py") for script in scripts}
    return ", ".join(f"[{names[script]}](examples/{script})" for script in scripts) or "-"


def update_readme() -> None:
    """Rewrite the syllabus table between the README's markers."""
    text = README.read_text(encoding="utf-8")
    README.write_text(
        replace_block(text, SYLLABUS_START, SYLLABUS_END, syllabus_table(), "README.md"), encoding="utf-8"
    )


def write_shared_parts(path: Path) -> None:
    """Rewrite a committed notebook's shared parts (title, run time, ...) in place; outputs are left as they are."""
    nb = nbformat.read(path, as_version=4)
    apply_shared_parts(nb, path.name)
    nbformat.write(nb, path)


def execute(path: Path) -> float:
    """Execute one notebook in a fresh kernel, record its time, and save it with its outputs."""
    nb = nbformat.read(path, as_version=4)
    apply_shared_parts(nb, path.name)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
            cell.metadata.pop("execution", None)
    client = NotebookClient(
        nb, timeout=900, kernel_name="python3", record_timing=False, resources={"metadata": {"path": str(path.parent)}}
    )
    started = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - started
    kind, machine = hardware_key()
    with open(REGISTRY.with_suffix(".lock"), "w") as lock:  # several notebooks may finish at once
        fcntl.flock(lock, fcntl.LOCK_EX)
        record_time(path.name, kind, seconds, machine)
    apply_shared_parts(nb, path.name)  # the run-time line, from the time just recorded
    nbformat.write(nb, path)
    return seconds


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    from tools import export_lessons

    one_thread_a_process()  # the kernels inherit it: a lesson keeps its time when other work runs beside it

    chosen = [Path(name).resolve() for name in paths]
    for path in chosen:
        lesson(path.name)  # a clear error for a notebook that is not in lessons.toml
    exported = export_lessons.main([])  # the checks import what the cells define: export before running them
    if exported:
        return exported
    for path in chosen:
        print(f"executing {path.name} ...", flush=True)
        seconds = execute(path)
        print(f"  {path.name}: {seconds:.1f} s", flush=True)
    update_readme()
    # The teacher's agendas and planning table are built from the same run times; a participant copy leaves
    # those two tools out (tools/participant_copies.py), and has no agendas to update.
    status = 0
    if importlib.util.find_spec("tools.workshop_agenda") is not None:
        from tools import workshop_agenda

        status = workshop_agenda.main([])
    if importlib.util.find_spec("tools.loaded_times") is not None:
        from tools import loaded_times

        status = status or loaded_times.main(["--guide"])
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
