"""tools/workers.py: `make test` runs one worker per core, as many as the memory holds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tools import workers

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "cores, memory, expected",
    [(2, 23.0, 2), (8, 64.0, 8), (8, 10.0, 3), (16, 2.0, 1), (1, 0.5, 1)],
)
def test_one_worker_per_core_capped_by_memory(cores: int, memory: float, expected: int) -> None:
    assert workers.workers(cores, memory) == expected


def test_a_bad_core_count_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        workers.workers(0, 8.0)


def test_memory_is_read_from_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemAvailable:   12582912 kB\n", encoding="utf-8")
    assert workers.available_gib(str(meminfo)) == 12.0
    assert workers.available_gib(str(tmp_path / "missing")) is None


def test_the_makefile_takes_its_default_from_the_tool() -> None:
    assert "WORKERS ?= $(shell $(PYTHON) -m tools.workers)" in (ROOT / "Makefile").read_text(encoding="utf-8")
    printed = subprocess.run([sys.executable, "-m", "tools.workers"], cwd=ROOT, capture_output=True, text=True)
    assert printed.stdout.strip() == str(workers.workers())
