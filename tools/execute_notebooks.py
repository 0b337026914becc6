"""Run notebooks top to bottom in a fresh kernel, save their outputs, and record the measured run time.

Usage: python tools/execute_notebooks.py notebooks/01_first_fine_tune.ipynb [...]   (``make execute``)

For each notebook: refresh the shared parts (badge, set-up cell), clear old outputs, execute in a new
kernel from ``notebooks/``, and write the notebook back with its outputs. The wall time goes into
``notebooks/run_times.json`` (per profile: cpu or gpu), the ``**Run time:**`` line of the notebook,
the syllabus table of README.md and the agendas in docs/workshop.md. Nothing here edits an output by hand.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebook_format import ROOT, apply_shared_parts, colab_badge, course_config  # noqa: E402

TIMES = ROOT / "notebooks" / "run_times.json"
RUN_TIME_RE = re.compile(r"^\*\*Run time:\*\*.*$", re.MULTILINE)
README = ROOT / "README.md"


def load_times() -> dict[str, dict[str, object]]:
    return json.loads(TIMES.read_text()) if TIMES.exists() else {}


def hardware_key() -> tuple[str, str]:
    import helpers

    profile = helpers.course_profile()
    hardware = helpers.detect_hardware()
    return ("gpu", hardware.gpu_name or "GPU") if profile.on_gpu else ("cpu", f"{hardware.cpu_cores}-core CPU")


def run_time_line(entry: dict[str, object]) -> str:
    cpu = f"{entry['cpu_s']:.0f} s on a {entry['cpu_machine']}" if entry.get("cpu_s") else "CPU not measured yet"
    gpu = f"{entry['gpu_s']:.0f} s on {entry['gpu_machine']}" if entry.get("gpu_s") else "GPU not measured yet"
    return f"**Run time:** {cpu} (profile `cpu`); {gpu}. Measured top to bottom by `make execute`."


def title_of(nb: nbformat.NotebookNode) -> str:
    first = nb.cells[0].source.splitlines()[0]
    return first.lstrip("# ").split("·", 1)[-1].strip()


def update_readme(times: dict[str, dict[str, object]]) -> None:
    if not README.exists():
        return
    text = README.read_text()
    start, end = "<!-- syllabus:start -->", "<!-- syllabus:end -->"
    if start not in text or end not in text:
        return
    config = course_config()
    rows = ["| notebook | lesson | CPU time | GPU time | Colab |", "|---|---|---|---|---|"]
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        entry = times.get(path.name, {})
        cpu = f"{entry['cpu_s']:.0f} s" if entry.get("cpu_s") else "not measured"
        gpu = f"{entry['gpu_s']:.0f} s ({entry['gpu_machine']})" if entry.get("gpu_s") else "not measured"
        rows.append(
            f"| [`{path.name}`](notebooks/{path.name}) | {title_of(nb)} | {cpu} | {gpu} | "
            f"{colab_badge(path.name, config)} |"
        )
    before, rest = text.split(start, 1)
    after = rest.split(end, 1)[1]
    README.write_text(before + start + "\n" + "\n".join(rows) + "\n" + end + after)


def record_time(name: str, seconds: float) -> dict[str, dict[str, object]]:
    """Add one measurement to run_times.json under a lock (several notebooks may finish at once)."""
    import fcntl

    kind, machine = hardware_key()
    with open(TIMES.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        times = load_times()
        entry = times.setdefault(name, {})
        entry[f"{kind}_s"], entry[f"{kind}_machine"] = round(seconds, 1), machine
        TIMES.write_text(json.dumps(times, indent=2, sort_keys=True) + "\n")
    return times


def execute(path: Path) -> float:
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
    times = record_time(path.name, seconds)
    apply_run_time_line(nb, times[path.name])
    nbformat.write(nb, path)
    return seconds


def apply_run_time_line(nb: nbformat.NotebookNode, entry: dict[str, object]) -> None:
    """Rewrite the notebook's ``**Run time:**`` line from its run_times.json entry (markdown only)."""
    line = run_time_line(entry)
    for cell in nb.cells:
        if cell.cell_type == "markdown" and RUN_TIME_RE.search(cell.source):
            cell.source = RUN_TIME_RE.sub(line, cell.source)


def write_run_time_line(path: Path, entry: dict[str, object]) -> None:
    """Rewrite the "Run time" line of a committed notebook in place; its outputs are left as they are."""
    nb = nbformat.read(path, as_version=4)
    apply_run_time_line(nb, entry)
    nbformat.write(nb, path)


def main(paths: list[str]) -> int:
    if not paths:
        print(__doc__)
        return 2
    for name in paths:
        path = Path(name).resolve()
        print(f"executing {path.name} ...", flush=True)
        seconds = execute(path)
        print(f"  {path.name}: {seconds:.1f} s", flush=True)
    update_readme(load_times())
    import workshop_agenda  # the teacher's agendas are built from the same run times

    workshop_agenda.main([])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
