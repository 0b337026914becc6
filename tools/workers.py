"""How many processes ``make test`` runs in: one per core, as many as the machine's memory holds.

``python -m tools.workers`` prints the number (the Makefile's ``WORKERS`` default; ``make test WORKERS=N``
overrides it). A worker is one pytest-xdist process and the Jupyter kernel it starts for a notebook. What one of
them needs is measured, not guessed: ``python -m tools.workers measure -- make test`` runs the command, samples
the resident memory of each worker (a child of the run's pytest process) with its children every half second,
and records the peak in ``docs/setup_facts.json`` (``worker_memory``). Each worker is then given that peak and
half as much again.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FACTS = ROOT / "docs" / "setup_facts.json"
MARGIN = 1.5  # the measured peak, and half as much again for what one run had and another may need
UNMEASURED_GIB = 3.0  # what a worker is given before anything was measured


def gib_per_worker(facts: Path = FACTS) -> float:
    """The memory one worker is given: the recorded peak times :data:`MARGIN`, rounded up to a quarter GiB."""
    try:
        peak = json.loads(facts.read_text(encoding="utf-8"))["worker_memory"]["peak_gib"]
    except (OSError, KeyError, ValueError, TypeError):
        return UNMEASURED_GIB
    return math.ceil(float(peak) * MARGIN * 4) / 4


def available_gib(meminfo: str = "/proc/meminfo") -> float | None:
    """Memory available to new processes, in GiB (Linux's ``MemAvailable``); ``None`` where it cannot be read."""
    try:
        with open(meminfo, encoding="utf-8") as lines:
            for line in lines:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        return None
    return None


def cores() -> int:
    """The cores this process may run on (the affinity mask, which containers set), else the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS has no sched_getaffinity
        return os.cpu_count() or 1


def workers(core_count: int | None = None, memory_gib: float | None = None, per_worker: float | None = None) -> int:
    """One worker per core, capped so that each gets :func:`gib_per_worker` of the available memory; at least 1.

    Unknown memory (a machine without ``/proc/meminfo``) caps nothing.
    """
    count = cores() if core_count is None else core_count
    if count < 1:
        raise ValueError(f"core_count must be at least 1, got {count}.")
    memory = available_gib() if memory_gib is None else memory_gib
    if memory is not None:
        count = min(count, int(memory // (per_worker or gib_per_worker())))
    return max(1, count)


def _processes() -> dict[int, tuple[int, int, str]]:
    """pid -> (parent pid, resident bytes, command line) of every process that can be read."""
    found = {}
    page = os.sysconf("SC_PAGE_SIZE")
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            parent = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            resident = int(Path(f"/proc/{entry}/statm").read_text().split()[1]) * page
            command = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError, ValueError):  # the process ended while it was read
            continue
        found[int(entry)] = (parent, resident, command)
    return found


def _tree(pid: int, table: dict[int, tuple[int, int, str]], children: dict[int, list[int]]) -> int:
    """Resident bytes of ``pid`` and all its descendants."""
    return table[pid][1] + sum(_tree(child, table, children) for child in children.get(pid, []))


def _first_pytest(pid: int, table: dict[int, tuple[int, int, str]], children: dict[int, list[int]]) -> int | None:
    """The Python process running pytest nearest to ``pid`` among it and its descendants (breadth first; the shell
    that ``make`` starts it from is not it), if there is one."""
    queue = [pid]
    while queue:
        current = queue.pop(0)
        command = table[current][2].split() if current in table else []
        if command and "python" in Path(command[0]).name and "pytest" in command:
            return current
        queue += children.get(current, [])
    return None


def worker_peaks(process: subprocess.Popen, interval: float = 0.5) -> dict[int, int]:
    """Sample until ``process`` ends: for each pytest-xdist worker it started (a child of its first pytest
    process), the peak resident memory of the worker and its children (the kernels it runs)."""
    peaks: dict[int, int] = {}
    while process.poll() is None:
        table = _processes()
        children: dict[int, list[int]] = {}
        for pid, (parent, _, _) in table.items():
            children.setdefault(parent, []).append(pid)
        controller = _first_pytest(process.pid, table, children)
        for worker in children.get(controller, []) if controller else []:
            peaks[worker] = max(peaks.get(worker, 0), _tree(worker, table, children))
        time.sleep(interval)
    return peaks


def measure(command: list[str], facts: Path = FACTS) -> int:
    """Run ``command`` (a ``make test``), record the largest worker's peak memory in ``facts``; returns the
    command's exit status (the peak is recorded whatever it is, with the status beside it)."""
    if sys.platform != "linux":
        print("measuring needs Linux's /proc; nothing recorded.", file=sys.stderr)
        return 2
    process = subprocess.Popen(command, cwd=ROOT)
    peaks = worker_peaks(process)
    status = process.wait()
    if not peaks:
        print(f"`{' '.join(command)}` exited {status} and started no pytest workers; nothing recorded.")
        return status or 1
    peak = max(peaks.values()) / 2**30
    record = json.loads(facts.read_text(encoding="utf-8")) if facts.is_file() else {}
    record["worker_memory"] = {
        "peak_gib": round(peak, 2),
        "workers": len(peaks),
        "command": " ".join(command),
        "machine": f"{cores()}-core {platform.machine()}, {round(available_gib() or 0)} GiB available",
        "date": datetime.date.today().isoformat(),
        "exit_status": status,  # the memory it took, whether or not every test passed
    }
    facts.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    given = gib_per_worker(facts)
    print(f"largest worker peak {peak:.2f} GiB over {len(peaks)} workers; each worker is now given {given} GiB")
    return status


def main(argv: list[str]) -> int:
    if argv[:1] == ["measure"]:
        command = argv[2:] if argv[1:2] == ["--"] else argv[1:]
        if not command:
            print("usage: python -m tools.workers measure -- make test", file=sys.stderr)
            return 2
        return measure(command)
    if argv:
        print("usage: python -m tools.workers [measure -- COMMAND...]", file=sys.stderr)
        return 2
    print(workers())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
