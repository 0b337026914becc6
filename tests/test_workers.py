"""tools/workers.py: `make test` runs one worker per core, as many as the memory holds."""

from __future__ import annotations

import json
import shlex
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


def test_measuring_records_the_peak_of_a_worker_and_its_children(tmp_path: Path) -> None:
    """A stand-in pytest (its command line says pytest) starts a worker that holds 200 MB in a child for 2 s."""
    facts = tmp_path / "setup_facts.json"
    facts.write_text("{}", encoding="utf-8")
    assert workers.measure([sys.executable, "-c", "import time; time.sleep(1)"], facts) == 1  # no pytest, no worker
    child = "import time; block = bytearray(200 * 2**20); time.sleep(2)"
    worker = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}], check=True)"
    controller = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {worker!r}], check=True)"
    shell = f"{sys.executable} -c {shlex.quote(controller)} pytest"  # a shell first, as make starts it
    assert workers.measure(["sh", "-c", shell], facts) == 0
    record = json.loads(facts.read_text(encoding="utf-8"))["worker_memory"]
    assert record["peak_gib"] >= 0.19 and record["workers"] == 1, record
