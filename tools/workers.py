"""How many processes ``make test`` runs in: one per core, as many as the machine's memory holds.

``python -m tools.workers`` prints the number (the Makefile's ``WORKERS`` default). A worker is one pytest-xdist
process and the Jupyter kernel it starts for a notebook; :data:`GIB_PER_WORKER` is the peak memory one of them was
measured to take (``docs/setup_facts.json``, ``worker_memory``), with a margin. ``make test WORKERS=N`` overrides.
"""

from __future__ import annotations

import os

# Peak resident memory of one worker and its kernel during `make test`, measured on a 2-core machine
# (docs/setup_facts.json "worker_memory"), rounded up with a margin for the libraries' caches.
GIB_PER_WORKER = 3.0


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


def workers(core_count: int | None = None, memory_gib: float | None = None) -> int:
    """One worker per core, capped so that ``GIB_PER_WORKER`` each fits in the available memory; at least 1.

    Unknown memory (a machine without ``/proc/meminfo``) caps nothing.
    """
    count = cores() if core_count is None else core_count
    if core_count is not None and count < 1:
        raise ValueError(f"core_count must be at least 1, got {core_count}.")
    memory = available_gib() if memory_gib is None else memory_gib
    if memory is not None:
        count = min(count, int(memory // GIB_PER_WORKER))
    return max(1, count)


if __name__ == "__main__":
    print(workers())
