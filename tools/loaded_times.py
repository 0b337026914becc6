"""How long each lesson takes on a busy laptop: run it with one CPU core kept busy, and record the time.

Usage:
    python -m tools.loaded_times [notebooks/NN_topic.ipynb ...]   run these lessons (default: every lesson of
                                                                   lessons.toml) top to bottom in a fresh kernel
                                                                   while a spinning process keeps one core busy;
                                                                   record `cpu_loaded_s` in lessons.toml
    python -m tools.loaded_times --guide    rewrite the planning table in docs/workshop.md from lessons.toml
    python -m tools.loaded_times --check    exit 1 if that table is not what lessons.toml gives

`make execute` measures each lesson on a quiet machine (``cpu_s``); a learner's laptop is rarely quiet (a browser,
a video call, an indexer). This tool measures the same notebooks with one core spinning, which on the course's
2-core machine takes half of it away, and writes ``cpu_loaded_s`` and ``cpu_loaded_machine`` into the lesson's
table of ``lessons.toml`` (``course_facts.registry.record_time``), then the planning table of docs/workshop.md (between
``<!-- planning:start -->`` and ``<!-- planning:end -->``). Nothing is written to the notebooks: their outputs stay
those of ``make execute``. Run it under the course's CPU lock (``flock /tmp/course-cpu.lock``), a few lessons per
call, so that nothing else loads the machine as well. A GPU time appears only where ``make execute`` measured one.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parent.parent
from course_facts.pins import OFFLINE_ENV, one_thread_a_process  # noqa: E402
from course_facts.registry import REGISTRY, Lesson, lesson, lessons, record_time  # noqa: E402
from tools.blocks import replace_block  # noqa: E402

GUIDE = ROOT / "docs" / "workshop.md"
START, END = "<!-- planning:start -->", "<!-- planning:end -->"
SPINNER = "while True:\n    pass\n"  # one busy core
OFFLINE = dict(OFFLINE_ENV)  # as `make execute` runs the notebooks


def machine() -> str:
    """How the loaded runs were measured, as lessons.toml records it."""
    return f"{os.cpu_count()}-core CPU, one core kept busy"


def run_notebook(path: Path) -> float:
    """Execute a lesson top to bottom in a fresh kernel (in memory: the file is not written); its wall time."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    started = time.perf_counter()
    client.execute()
    return time.perf_counter() - started


def measure(paths: list[Path]) -> tuple[dict[str, float], dict[str, str]]:
    """Run each lesson with one core kept busy and record its time; the spinning process is always stopped.
    Returns the times, and the lessons that failed with the error they raised (no time is recorded for them)."""
    for name, value in OFFLINE.items():
        os.environ.setdefault(name, value)  # the kernels inherit them
    one_thread_a_process()  # as make execute runs them
    entries = [lesson(path.name) for path in paths]  # a clear error for a notebook that is not in lessons.toml
    spinner = subprocess.Popen([sys.executable, "-c", SPINNER])
    times, failed = {}, {}
    try:
        time.sleep(0.5)  # the spinner is running before the first kernel starts
        for entry in entries:
            try:
                seconds = run_notebook(entry.path)
            except CellExecutionError as error:  # reported below, and the exit status says so
                failed[entry.file] = str(error).strip().splitlines()[-1]
                print(f"  {entry.file}: failed, no time recorded: {failed[entry.file]}", flush=True)
                continue
            with open(REGISTRY.with_suffix(".lock"), "w") as lock:  # make execute may record at the same time
                fcntl.flock(lock, fcntl.LOCK_EX)
                record_time(entry.file, "cpu_loaded", seconds, machine())
            times[entry.file] = seconds
            print(f"  {entry.file}: {seconds:.1f} s with one core busy", flush=True)
    finally:
        spinner.terminate()
        spinner.wait(timeout=10)
    return times, failed


def _seconds(value: float | None) -> str:
    return f"{value:.0f} s" if value else "not measured"


def planning_table(all_lessons: list[Lesson]) -> str:
    """Per lesson: the quiet CPU time, the time with one core busy, their ratio, and the GPU time if measured."""
    rows = [
        "| lesson | CPU, quiet | CPU, one core busy | ratio | GPU |",
        "|---|---|---|---|---|",
    ]
    quiet_total = loaded_total = 0.0
    for entry in all_lessons:
        quiet, loaded, gpu = entry.seconds("cpu"), entry.seconds("cpu_loaded"), entry.seconds("gpu")
        ratio = f"{loaded / quiet:.1f}×" if quiet and loaded else "—"
        gpu_text = f"{gpu:.0f} s ({entry.machine('gpu')})" if gpu else "not measured"
        rows.append(f"| {entry.label} | {_seconds(quiet)} | {_seconds(loaded)} | {ratio} | {gpu_text} |")
        if quiet and loaded:
            quiet_total, loaded_total = quiet_total + quiet, loaded_total + loaded
    machines = sorted({str(entry.machine("cpu_loaded")) for entry in all_lessons if entry.machine("cpu_loaded")})
    measured = [entry for entry in all_lessons if entry.seconds("cpu") and entry.seconds("cpu_loaded")]
    slowest = max(measured, key=lambda entry: entry.seconds("cpu_loaded") or 0.0, default=None)
    summary = "No lesson has been measured with a busy core yet (`python -m tools.loaded_times`)."
    if slowest is not None:
        summary = (
            f"Measured by `tools/loaded_times.py` on a {', '.join(machines)}: the {len(measured)} lessons measured "
            f"both ways took {loaded_total / quiet_total:.1f} times as long with one core busy "
            f"({loaded_total / 60:.0f} minutes against {quiet_total / 60:.0f}); the slowest, "
            f"{slowest.number}, took {_seconds(slowest.seconds('cpu_loaded'))}. GPU: only where `make execute` ran "
            "on a GPU; nothing else is a GPU figure."
        )
    return "\n".join(rows) + "\n\n" + summary


def with_table(text: str, table: str) -> str:
    """``text`` with the part between the planning markers replaced by ``table``.

    Raises:
        MissingMarkers: the markers are missing.
    """
    return replace_block(text, START, END, table, "docs/workshop.md")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", help="lessons to run (default: every lesson of lessons.toml)")
    parser.add_argument("--guide", action="store_true", help="only rewrite the planning table of the workshop guide")
    parser.add_argument("--check", action="store_true", help="only report whether the planning table is current")
    options = parser.parse_args(argv)
    current = GUIDE.read_text(encoding="utf-8")
    if options.check:
        if with_table(current, planning_table(lessons())) != current:
            print("docs/workshop.md: the planning table is stale; run `python -m tools.loaded_times --guide`.")
            return 1
        print("docs/workshop.md: the planning table matches lessons.toml.")
        return 0
    failed: dict[str, str] = {}
    if not options.guide:
        paths = [Path(name).resolve() for name in options.notebooks] or [entry.path for entry in lessons()]
        _, failed = measure(paths)
    GUIDE.write_text(with_table(GUIDE.read_text(encoding="utf-8"), planning_table(lessons())), encoding="utf-8")
    print("docs/workshop.md: planning table written from lessons.toml.")
    if failed:
        print(f"{len(failed)} lesson(s) failed and kept their earlier time: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
