"""Write the workshop agendas in docs/workshop.md from the measured run times in notebooks/run_times.json.

Usage: python tools/workshop_agenda.py          rewrite the agenda tables between the markers in docs/workshop.md
       python tools/workshop_agenda.py --check  exit 1 if the tables there are not what run_times.json gives

The planned minutes (explaining, exercises, breaks) are teaching choices and live in :data:`PLAN`; every run
time comes from ``run_times.json``, which ``make execute`` writes, so no measured figure is typed by hand.
Each block is: explain + exercises + the notebook's measured CPU run time (learners run it once on a laptop),
rounded up to whole minutes. A notebook without a CPU measurement is planned at :data:`UNMEASURED_MINUTES`
and marked as such.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TIMES = ROOT / "notebooks" / "run_times.json"
GUIDE = ROOT / "docs" / "workshop.md"
START, END = "<!-- agenda:start -->", "<!-- agenda:end -->"
UNMEASURED_MINUTES = 2  # the 90 s CPU budget every notebook must meet, rounded up
DAY_START_MINUTES = 9 * 60  # 09:00

# notebook -> (minutes explaining, minutes of exercises). Breaks are rows of their own.
PLAN: dict[str, tuple[int, int]] = {
    "00_start_here.ipynb": (10, 5),
    "01_first_fine_tune.ipynb": (20, 12),
    "02_training_arguments.ipynb": (15, 10),
    "03_lr_schedules.ipynb": (10, 10),
    "04_compute_metrics.ipynb": (15, 15),
    "05_callback_events.ipynb": (10, 10),
    "06_callback_control.ipynb": (15, 15),
    "07_custom_loss.ipynb": (15, 15),
    "08_training_step_and_gradients.ipynb": (15, 15),
    "09_gpu_and_performance.ipynb": (15, 5),
    "10_scaling_out.ipynb": (10, 5),
    "11_checkpoints_and_resume.ipynb": (10, 10),
    "12_capstone.ipynb": (10, 45),
}
BREAK, LUNCH = ("break", 15), ("lunch", 60)
HALF_DAY: list[str | tuple[str, int]] = [
    "00_start_here.ipynb",
    "01_first_fine_tune.ipynb",
    "04_compute_metrics.ipynb",
    BREAK,
    "06_callback_control.ipynb",
    "07_custom_loss.ipynb",
    "12_capstone.ipynb",
]
FULL_DAY: list[str | tuple[str, int]] = [
    "00_start_here.ipynb",
    "01_first_fine_tune.ipynb",
    "02_training_arguments.ipynb",
    "03_lr_schedules.ipynb",
    BREAK,
    "04_compute_metrics.ipynb",
    "05_callback_events.ipynb",
    "06_callback_control.ipynb",
    LUNCH,
    "07_custom_loss.ipynb",
    "08_training_step_and_gradients.ipynb",
    "09_gpu_and_performance.ipynb",
    BREAK,
    "10_scaling_out.ipynb",
    "11_checkpoints_and_resume.ipynb",
    "12_capstone.ipynb",
]


@dataclass(frozen=True)
class Block:
    """One row of an agenda."""

    start: int  # minutes after midnight
    minutes: int
    label: str
    cpu: str
    gpu: str


def clock(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def notebook_title(name: str, root: Path = ROOT) -> str:
    """The lesson title from the notebook's first line (``# NN · Title``), or a note that it does not exist yet."""
    path = root / "notebooks" / name
    if not path.is_file():
        return "(notebook not written yet)"
    first = json.loads(path.read_text(encoding="utf-8"))["cells"][0]["source"]
    line = ("".join(first) if isinstance(first, list) else first).splitlines()[0]
    return line.lstrip("# ").split("·", 1)[-1].strip()


def build_blocks(
    sequence: list[str | tuple[str, int]], times: dict[str, dict[str, object]], root: Path = ROOT
) -> list[Block]:
    """The agenda rows for ``sequence`` (notebook names and ``(label, minutes)`` breaks)."""
    blocks: list[Block] = []
    now = DAY_START_MINUTES
    for item in sequence:
        if isinstance(item, tuple):
            label, minutes = item
            blocks.append(Block(now, minutes, f"*{label}*", "", ""))
        else:
            if item not in PLAN:
                raise KeyError(
                    f"{item} has no entry in PLAN; add its explaining and exercise minutes to tools/workshop_agenda.py."
                )
            explain, exercises = PLAN[item]
            entry = times.get(item, {})
            cpu_s = entry.get("cpu_s")
            gpu_s = entry.get("gpu_s")
            run_minutes = math.ceil(float(cpu_s) / 60) if cpu_s else UNMEASURED_MINUTES
            minutes = explain + exercises + run_minutes
            cpu = f"{float(cpu_s):.0f} s" if cpu_s else "not measured"
            gpu = f"{float(gpu_s):.0f} s ({entry.get('gpu_machine', 'GPU')})" if gpu_s else "not measured"
            label = f"`{item}`: {notebook_title(item, root)}"
            blocks.append(Block(now, minutes, label, cpu, gpu))
        now += minutes
    return blocks


def agenda_table(title: str, blocks: list[Block]) -> str:
    """One agenda as a markdown table, with its total length."""
    rows = [
        f"**{title}** ({clock(blocks[0].start)} to {clock(blocks[-1].start + blocks[-1].minutes)}, "
        f"{sum(block.minutes for block in blocks)} minutes)",
        "",
        "| time | minutes | block | CPU run time | GPU run time |",
        "|---|---|---|---|---|",
    ]
    for block in blocks:
        rows.append(f"| {clock(block.start)} | {block.minutes} | {block.label} | {block.cpu} | {block.gpu} |")
    return "\n".join(rows)


def agenda_markdown(times: dict[str, dict[str, object]], root: Path = ROOT) -> str:
    """Both agendas, and where their numbers come from."""
    machines = sorted({str(entry["cpu_machine"]) for entry in times.values() if entry.get("cpu_machine")})
    source = (
        f"Run times: measured top to bottom by `make execute` on a {', '.join(machines) or 'machine not recorded'} "
        "(CPU) and, where measured, on a GPU; read from `notebooks/run_times.json` by "
        "`tools/workshop_agenda.py`. A block is explaining + exercises + the CPU run time rounded up to "
        f"whole minutes; a notebook not measured yet is planned at {UNMEASURED_MINUTES} minutes."
    )
    return "\n\n".join(
        [
            source,
            agenda_table("Half day", build_blocks(HALF_DAY, times, root)),
            agenda_table("Full day", build_blocks(FULL_DAY, times, root)),
        ]
    )


def load_times(path: Path = TIMES) -> dict[str, dict[str, object]]:
    if not path.is_file():
        raise FileNotFoundError(f"{path} does not exist; run `make execute` first, it records the run times.")
    return json.loads(path.read_text(encoding="utf-8"))


def with_agenda(text: str, agenda: str) -> str:
    """``text`` with the part between the agenda markers replaced by ``agenda``."""
    if START not in text or END not in text:
        raise ValueError(f"the guide has no {START} ... {END} markers; put them where the agenda belongs.")
    before, rest = text.split(START, 1)
    return before + START + "\n" + agenda + "\n" + END + rest.split(END, 1)[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the workshop agendas from the measured run times.")
    parser.add_argument("--check", action="store_true", help="only report whether docs/workshop.md is current")
    options = parser.parse_args(argv)
    current = GUIDE.read_text(encoding="utf-8")
    updated = with_agenda(current, agenda_markdown(load_times()))
    if options.check:
        if updated != current:
            print("docs/workshop.md: the agenda is stale; run `python tools/workshop_agenda.py`.", file=sys.stderr)
            return 1
        print("docs/workshop.md: the agenda matches notebooks/run_times.json.")
        return 0
    GUIDE.write_text(updated, encoding="utf-8")
    print(f"docs/workshop.md: agendas written from {len(load_times())} measured notebooks.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
