"""Run every notebook with the `cuda` profile on a GPU machine and write what was measured to a results file.

Usage (on a machine with an NVIDIA GPU, from the repository root, no network needed):

    python -m tools.gpu_run                       # every notebook, COURSE_PROFILE=cuda
    python -m tools.gpu_run --rehearse            # the same plumbing on a CPU, profile cpu, two notebooks
    python -m tools.gpu_run --record results.json # write the GPU times of a results file into the course

Each notebook runs top to bottom in a fresh kernel on a temporary copy (the committed notebooks keep the
outputs of the CPU run). The results file (``bench/gpu/gpu_results.json`` unless ``--out``) holds the GPU's name,
the date, each notebook's wall time and pass/fail, the figures the lessons measured (each lesson writes them
with ``helpers.performance.save_figures`` to ``$COURSE_RESULTS_DIR/<its notebook's name>.json`` when that
variable is set) and, for each entry of ``GPU_CHECKS`` (what the lessons can only show on a GPU), whether this
run measured it, skipped it for want of GPUs, or missed it (a failure). ``--record`` then puts the
times into ``lessons.toml`` and, through the same functions ``make execute`` uses, into each
notebook's "Run time" line, the README syllabus and the workshop agendas. Nothing is recorded that this run
did not measure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from helpers.pins import OFFLINE_ENV  # noqa: E402
from helpers.registry import lessons, record_time  # noqa: E402
from tools.notebook_format import ROOT, syllabus_names  # noqa: E402

DEFAULT_OUT = ROOT / "bench" / "gpu" / "gpu_results.json"
# The rehearsal runs the lessons the simulated Colab runs (lessons.toml, colab_smoke).
REHEARSAL_NOTEBOOKS = [entry.file for entry in lessons() if entry.colab_smoke]


@dataclass(frozen=True)
class GpuCheck:
    """A point a lesson can only show on CUDA GPUs. Where it runs, the lesson writes the figure under ``key``
    (``helpers.performance.save_figures``); elsewhere it prints one line saying it skipped and why."""

    lesson: str  # the lesson's number, as lessons.toml has it
    key: str  # the key of its figures file that holds the measurement
    min_gpus: int  # CUDA GPUs the check needs
    shows: str  # what the measurement shows


GPU_CHECKS = (
    GpuCheck("09", "precision_speedup", 1, "bf16, fp16 and tf32 step time against fp32, with their CUDA peaks"),
    GpuCheck("09", "checkpoint_peaks", 1, "activation checkpointing's CUDA peak memory against a plain step"),
    GpuCheck("09", "compile_speedup", 1, "torch_compile: its compile cost and steady-state speed against eager"),
    GpuCheck("09", "auto_find_batch_size", 1, "the per-device batch auto_find_batch_size settles on"),
    GpuCheck("10", "multi_gpu_rows", 2, "lesson 10's train.py on every GPU (NCCL): eval_loss, default and fixed"),
    GpuCheck("10", "fsdp_sharding", 2, "train.py with --fsdp full_shard on GPUs: the lines each rank prints"),
)


def gpu_count() -> int:
    """How many CUDA GPUs this machine has."""
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def check_results(figures: dict[str, dict[str, object]], gpus: int) -> dict[str, str]:
    """For each of ``GPU_CHECKS`` (``"<lesson>/<key>"``): ``measured``, ``skipped: ...`` (fewer GPUs than it needs)
    or ``MISSING`` (enough GPUs, but the lesson wrote no such figure: a failure).

    Args:
        figures: ``{lesson number: the figures that lesson saved}``.
        gpus: the CUDA GPUs this run had.
    """
    outcome = {}
    for check in GPU_CHECKS:
        name = f"{check.lesson}/{check.key}"
        if check.key in figures.get(check.lesson, {}):
            outcome[name] = "measured"
        elif gpus < check.min_gpus:
            outcome[name] = f"skipped: needs {check.min_gpus} CUDA GPU(s), this machine has {gpus}"
        else:
            outcome[name] = "MISSING"
    return outcome


def gpu_name() -> str | None:
    """The CUDA device's name, or ``None`` on a machine without one."""
    import torch

    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


def run_notebook(path: Path, workdir: Path, env: dict[str, str], timeout_s: int) -> dict[str, object]:
    """Execute one notebook from a copy of the repository; return its wall time and whether it passed."""
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(
        nb, timeout=timeout_s, kernel_name="python3", resources={"metadata": {"path": str(workdir / "notebooks")}}
    )
    old_env = {key: os.environ.get(key) for key in env}
    os.environ.update(env)
    started = time.perf_counter()
    try:
        client.execute()
        error = None
    except Exception as failure:  # recorded in the results and re-raised at the end by main()
        error = f"{type(failure).__name__}: {str(failure)[-2000:]}"
    finally:
        for key, value in old_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return {"seconds": round(time.perf_counter() - started, 1), "passed": error is None, "error": error}


def copy_repository(target: Path) -> Path:
    """A working copy of the course (without venvs, runs and caches) to execute notebooks in."""
    ignore = shutil.ignore_patterns(
        ".git", ".venv*", "runs", "participant_copies", "__pycache__", "bench", "_build", "cache"
    )
    shutil.copytree(ROOT, target, ignore=ignore)
    return target


def measure(names: list[str], profile: str, timeout_s: int) -> dict[str, object]:
    """Run ``names`` with ``COURSE_PROFILE=profile`` and return the results document."""
    results: dict[str, object] = {
        "gpu": gpu_name(),
        "profile": profile,
        "date": dt.date.today().isoformat(),
        "notebooks": {},
    }
    with tempfile.TemporaryDirectory(prefix="course-gpu-") as scratch:
        workdir = copy_repository(Path(scratch) / "course")
        figures_dir = Path(scratch) / "figures"
        figures_dir.mkdir()
        env = {
            "COURSE_PROFILE": profile,
            "COURSE_RESULTS_DIR": str(figures_dir),
            **OFFLINE_ENV,  # as `make execute` runs them (helpers/pins.py)
            "PYTHONPATH": os.pathsep.join(filter(None, [str(workdir), os.environ.get("PYTHONPATH")])),
        }
        for name in names:
            print(f"{name} ...", flush=True)
            outcome = run_notebook(workdir / "notebooks" / name, workdir, env, timeout_s)
            results["notebooks"][name] = outcome
            print(f"  {'passed' if outcome['passed'] else 'FAILED'} in {outcome['seconds']} s", flush=True)
        results["figures"] = {
            entry.number: json.loads((figures_dir / f"{entry.stem}.json").read_text())
            for entry in lessons()
            if (figures_dir / f"{entry.stem}.json").is_file()
        }
        results["gpu_checks"] = check_results(results["figures"], gpu_count())
    return results


def record(results: dict[str, object]) -> None:
    """Write the GPU times of a results file into lessons.toml, the notebooks, the README and the agendas."""
    from tools import execute_notebooks, workshop_agenda

    if not results.get("gpu"):
        raise SystemExit("this results file has no GPU name: it was not measured on a GPU, so nothing is recorded.")
    for name, outcome in results["notebooks"].items():
        if outcome["passed"]:
            record_time(name, "gpu", float(outcome["seconds"]), str(results["gpu"]))
    for name in results["notebooks"]:
        execute_notebooks.write_shared_parts(ROOT / "notebooks" / name)
    execute_notebooks.update_readme()
    workshop_agenda.main([])


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rehearse", action="store_true", help="run two notebooks with the cpu profile")
    parser.add_argument("--record", type=Path, help="record the GPU times of this results file and stop")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--timeout", type=int, default=300, help="seconds a notebook cell may take")
    args = parser.parse_args(argv)
    if args.record:
        record(json.loads(args.record.read_text()))
        return 0
    if args.rehearse:
        names, profile = REHEARSAL_NOTEBOOKS, "cpu"
    else:
        if gpu_name() is None:
            print("No CUDA GPU here: run on a GPU machine, or use --rehearse to test the plumbing on a CPU.")
            return 2
        names, profile = syllabus_names(), "cuda"
    started = time.perf_counter()
    results = measure(names, profile, args.timeout)
    results["total_s"] = round(time.perf_counter() - started, 1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.out} ({results['total_s']} s in all)")
    for name, outcome in results["gpu_checks"].items():
        print(f"GPU check {name}: {outcome}")
    failed = [name for name, outcome in results["notebooks"].items() if not outcome["passed"]]
    failed += [name for name, outcome in results["gpu_checks"].items() if outcome == "MISSING"]
    if failed:
        print("failed:", ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
