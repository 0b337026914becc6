"""tools/workers.py: `make test` runs one worker per core, as many as the memory holds."""

from __future__ import annotations

import json
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
    assert workers.workers(cores, memory, per_worker=3.0) == expected


def test_each_worker_gets_the_measured_peak_and_half_again(tmp_path: Path) -> None:
    facts = tmp_path / "setup_facts.json"
    facts.write_text('{"worker_memory": {"peak_gib": 1.31}}', encoding="utf-8")
    assert workers.gib_per_worker(facts) == 2.0
    facts.write_text("{}", encoding="utf-8")
    assert workers.gib_per_worker(facts) == workers.UNMEASURED_GIB
    assert workers.gib_per_worker(tmp_path / "missing.json") == workers.UNMEASURED_GIB


def test_the_committed_measurement_is_a_real_one() -> None:
    record = json.loads(workers.FACTS.read_text(encoding="utf-8"))["worker_memory"]
    assert 0.2 < record["peak_gib"] < 20 and record["workers"] >= 1 and "make test" in record["command"]


def test_measuring_records_the_peak_of_a_worker_and_its_children(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A stand-in worker (PYTEST_XDIST_WORKER set) holds 200 MB in a child process for two seconds."""
    facts = tmp_path / "setup_facts.json"
    facts.write_text("{}", encoding="utf-8")
    child = "import time; block = bytearray(200 * 2**20); time.sleep(2)"
    worker = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}], check=True)"
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    assert workers.measure([sys.executable, "-c", "import time; time.sleep(1)"], facts) == 1  # no worker seen
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert workers.measure([sys.executable, "-c", worker], facts) == 0
    record = json.loads(facts.read_text(encoding="utf-8"))["worker_memory"]
    assert record["peak_gib"] >= 0.19, record


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
