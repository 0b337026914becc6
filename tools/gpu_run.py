"""Run every notebook with the `cuda` profile on a GPU machine and write what was measured to a results file.

The whole GPU run is at most three device calls back to back (the device's rules: ``/work/.library/device``;
each call carries at most 64 MiB, the working tree included, and the machine is given back 30 s after a call):

    python -m tools.gpu_bundle                    # here: the wheels, model and data the image lacks, in parts
    python -m tools.gpu_run --dry-run             # here: each call's command, carried folder and size

The calls install the parts under /tmp/course-gpu (``tools.gpu_device``; the machine keeps it between calls
while warm) and the last one runs, there (no network needed)::

    python -m tools.gpu_run                       # every notebook, COURSE_PROFILE=cuda, then the GPU tests
    python -m tools.gpu_run --rehearse            # the same plumbing on a CPU, profile cpu, two notebooks
    python -m tools.gpu_run --record results.json # here: write the GPU times of a results file into the course

The notebooks run in parallel, each top to bottom in a fresh kernel of its own process on a temporary copy of
the course (the committed notebooks keep the outputs of the CPU run), ``--workers`` at a time with the cores
shared among them; the lessons that time the GPU (those of ``GPU_CHECKS``) run alone, so that no other notebook
contends for the GPU while they measure. The run is cut at ``--budget`` seconds (480): a notebook still running
then is stopped and reported as cut, one not started as such, and the GPU tests (the test files that use CUDA)
get what is left of the budget. The results file (``bench/gpu/gpu_results.json`` and, with ``--out-dir``, a
copy there with the executed notebooks in ``gpu_notebooks.tar.gz``) holds the GPU's name, the date, each
notebook's wall time, pass/fail and peak memory (the kernel's resident set and, when it used CUDA, the peak
CUDA memory since its last ``reset_peak_memory_stats``), the figures the lessons measured (each lesson writes
them with ``helpers.performance.save_figures`` to ``$COURSE_RESULTS_DIR/<its notebook's name>.json`` when that
variable is set), the image's versions of the packages the bundle left to it and, for each entry of
``GPU_CHECKS`` (what the lessons can only show on a GPU), whether this run measured it, skipped it for want of
GPUs, or missed it (a failure). ``--record`` then puts the times into ``lessons.toml`` and, through the same
functions ``make execute`` uses, into each notebook's "Run time" line, the README syllabus and the workshop
agendas, and copies the results under ``bench/gpu/``. Nothing is recorded that this run did not measure.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from course_facts.pins import OFFLINE_ENV  # noqa: E402
from course_facts.registry import lessons, record_time  # noqa: E402
from tools import gpu_device
from tools.notebook_format import ROOT, syllabus_names  # noqa: E402

DEFAULT_OUT = ROOT / "bench" / "gpu" / "gpu_results.json"
BUNDLE_MANIFEST = ROOT / ".gpu" / gpu_device.MANIFEST  # written by python -m tools.gpu_bundle
BUDGET_S = 480  # the notebooks and the GPU tests; the last call also installs its part (about 30 s) within 600 s
MAX_CALLS = 3
COMMAND_LIMIT = 2000  # characters of one device call's command
CALL_LIMIT = 64 * 2**20  # bytes one call carries, the working tree included
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


PEAK_MARK = "COURSE_PEAK "
# Appended to each notebook's copy and removed before it is saved: the kernel's peaks, printed as JSON.
PEAK_CELL = f"""import json as _json, resource as _resource, sys as _sys
_peak = {{"rss_peak_mib": round(_resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}}
_torch = _sys.modules.get("torch")
if _torch is not None and _torch.cuda.is_available() and _torch.cuda.is_initialized():
    _peak["cuda_peak_mib"] = round(_torch.cuda.max_memory_allocated() / 2**20, 1)
    _peak["cuda_reserved_peak_mib"] = round(_torch.cuda.max_memory_reserved() / 2**20, 1)
print({PEAK_MARK!r} + _json.dumps(_peak))"""


def run_notebook(path: Path, workdir: Path, env: dict[str, str], timeout_s: int, save: Path | None = None) -> dict:
    """Execute one notebook from a copy of the repository; return its wall time, whether it passed and its
    peaks. ``save``: where to write the executed notebook (its outputs; the peak cell removed)."""
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_code_cell(PEAK_CELL))
    client = NotebookClient(
        nb, timeout=timeout_s, kernel_name="python3", resources={"metadata": {"path": str(workdir / "notebooks")}}
    )

    def stop(signum: int, frame: object) -> None:  # the run's cut: end the kernel too (it has its own session)
        pid = getattr(getattr(client.km, "provisioner", None), "pid", None) if client.km else None
        if pid:
            os.kill(pid, signal.SIGKILL)
        raise SystemExit(f"cut: stopped by signal {signum}")

    signal.signal(signal.SIGTERM, stop)
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
    seconds = round(time.perf_counter() - started, 1)
    peak_cell = nb.cells.pop()
    texts = [out.get("text", "") for out in peak_cell.get("outputs", []) if out.get("output_type") == "stream"]
    peaks = [json.loads(line[len(PEAK_MARK) :]) for t in texts for line in t.splitlines() if line.startswith(PEAK_MARK)]
    if save is not None:
        nbformat.write(nb, save)
    return {"seconds": seconds, "passed": error is None, "error": error, "peak": peaks[0] if peaks else None}


def copy_repository(target: Path) -> Path:
    """A working copy of the course (without venvs, runs and caches) to execute notebooks in."""
    ignore = shutil.ignore_patterns(
        ".git", ".venv*", ".gpu", "runs", "participant_copies", "__pycache__", "bench", "_build", "cache"
    )
    shutil.copytree(ROOT, target, ignore=ignore)
    return target


def exclusive_notebooks(names: list[str]) -> set[str]:
    """The notebooks that time the GPU (their lessons are in ``GPU_CHECKS``): they run with no other beside."""
    timed = {check.lesson for check in GPU_CHECKS}
    return {entry.file for entry in lessons() if entry.number in timed and entry.file in names}


def order(names: list[str]) -> list[str]:
    """The exclusive notebooks first, then the rest longest first (their CPU times in lessons.toml)."""
    cpu = {entry.file: float(entry.times.get("cpu_s", 0.0)) for entry in lessons()}
    alone = exclusive_notebooks(names)
    return sorted(names, key=lambda name: (name not in alone, -cpu.get(name, 0.0), name))


def measure(
    names: list[str],
    profile: str,
    timeout_s: int,
    budget_s: float,
    workers: int,
    out_dir: Path | None = None,
    out: Path = DEFAULT_OUT,
) -> dict[str, object]:
    """Run ``names`` with ``COURSE_PROFILE=profile``, ``workers`` at a time (the exclusive ones alone), cut at
    ``budget_s`` seconds after the start; return the results document."""
    deadline = time.monotonic() + budget_s
    results: dict[str, object] = {
        "gpu": gpu_name(),
        "profile": profile,
        "date": dt.date.today().isoformat(),
        "workers": workers,
        "budget_s": budget_s,
        "notebooks": {},
    }
    alone = exclusive_notebooks(names)
    with tempfile.TemporaryDirectory(prefix="course-gpu-") as scratch:
        workdir = copy_repository(Path(scratch) / "course")
        figures_dir, saved = Path(scratch) / "figures", Path(scratch) / "executed"
        figures_dir.mkdir()
        saved.mkdir()
        threads = max(1, (os.cpu_count() or 2) // max(1, workers))
        env = {
            **os.environ,
            "COURSE_PROFILE": profile,
            "COURSE_RESULTS_DIR": str(figures_dir),
            **OFFLINE_ENV,  # as `make execute` runs them (course_facts/pins.py)
            "OMP_NUM_THREADS": str(threads),
            "COURSE_DATA_CACHE": str(Path(scratch) / "data"),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(workdir), os.environ.get("PYTHONPATH")])),
        }
        prepare = [sys.executable, "-c", "from helpers.data import load_reviews; load_reviews()"]
        subprocess.run(prepare, cwd=workdir, env=env, check=True)  # once, before the notebooks race for it
        running: dict[str, tuple[subprocess.Popen, float, Path]] = {}
        waiting = order(names)
        while waiting or running:
            for name, (process, started, result) in list(running.items()):
                if process.poll() is not None:
                    del running[name]
                    outcome = json.loads(result.read_text()) if result.is_file() else None
                    results["notebooks"][name] = outcome or {
                        "seconds": round(time.monotonic() - started, 1),
                        "passed": False,
                        "error": f"its process ended with {process.returncode} and wrote no result",
                    }
                    print(f"{name}: {'passed' if results['notebooks'][name]['passed'] else 'FAILED'} in "
                          f"{results['notebooks'][name]['seconds']} s", flush=True)  # fmt: skip
                    write_results(results, out_dir, out)
            if time.monotonic() >= deadline:
                break
            while waiting and len(running) < workers:
                name = waiting[0]
                if (name in alone and running) or any(other in alone for other in running):
                    break  # an exclusive notebook starts on an idle machine and runs alone
                waiting.pop(0)
                result = Path(scratch) / f"{name}.result.json"
                command = [sys.executable, "-m", "tools.gpu_run", "--one", name, "--workdir", str(workdir)]
                command += ["--timeout", str(timeout_s), "--result", str(result), "--save", str(saved / name)]
                process = subprocess.Popen(command, cwd=workdir, env=env)
                running[name] = (process, time.monotonic(), result)
                print(f"{name} started{' (alone)' if name in alone else ''}", flush=True)
            time.sleep(0.5)
        for name, (process, started, _) in running.items():
            process.terminate()
            process.wait(timeout=30)
            results["notebooks"][name] = {
                "seconds": round(time.monotonic() - started, 1),
                "passed": False,
                "error": f"cut: still running when the {budget_s:.0f} s budget ended",
            }
        for name in waiting:
            results["notebooks"][name] = {"seconds": None, "passed": False, "error": "cut: not started"}
        results["figures"] = {
            entry.number: json.loads((figures_dir / f"{entry.stem}.json").read_text())
            for entry in lessons()
            if (figures_dir / f"{entry.stem}.json").is_file()
        }
        results["gpu_checks"] = check_results(results["figures"], gpu_count())
        remaining = deadline - time.monotonic()
        results["tests"] = run_gpu_tests(workdir, env, remaining) if profile == "cuda" else {"skipped": "no GPU"}
        if out_dir is not None:
            with tarfile.open(out_dir / "gpu_notebooks.tar.gz", "w:gz") as archive:
                for path in sorted(saved.glob("*.ipynb")):
                    archive.add(path, arcname=path.name)
    return results


def gpu_test_files() -> list[str]:
    """The test files that use CUDA where it is there (their source names ``torch.cuda``)."""
    return sorted(
        str(path.relative_to(ROOT)) for path in (ROOT / "tests").glob("test_*.py") if "torch.cuda" in path.read_text()
    )


def run_gpu_tests(workdir: Path, env: dict[str, str], seconds: float) -> dict[str, object]:
    """Run :func:`gpu_test_files` with pytest in ``workdir`` for at most ``seconds``."""
    files = gpu_test_files()
    if seconds < 20:
        return {"files": files, "passed": False, "error": f"cut: {seconds:.0f} s of the budget left"}
    command = [sys.executable, "-m", "pytest", "-q", "-n", "4", "-p", "no:cacheprovider", *files]
    started = time.perf_counter()
    try:
        done = subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True, timeout=seconds)
    except subprocess.TimeoutExpired as expired:
        tail = (expired.stdout or b"")[-3000:]
        tail = tail.decode(errors="replace") if isinstance(tail, bytes) else tail
        return {"files": files, "passed": False, "error": f"cut after {seconds:.0f} s", "tail": tail}
    seconds_taken = round(time.perf_counter() - started, 1)
    tail = (done.stdout + done.stderr)[-3000:]
    return {"files": files, "passed": done.returncode == 0, "seconds": seconds_taken, "tail": tail}


def write_results(results: dict[str, object], out_dir: Path | None, path: Path = DEFAULT_OUT) -> None:
    """Write the results to ``path`` and ``out_dir/gpu_results.json`` (again after each notebook, so that a run
    killed midway leaves what it finished)."""
    text = json.dumps(results, indent=2) + "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if out_dir is not None:
        (out_dir / DEFAULT_OUT.name).write_text(text)


def device_calls(manifest: dict, tree: int) -> list[dict]:
    """The device calls of the run, in order: each one's command, carried folder, bytes sent and time limit.

    Every call installs its part (``tools.gpu_device``); the last also checks that every part is in (a machine
    given back between calls has lost the earlier ones: the check says so, and the run starts again at call 1)
    and runs this module there, its output kept in ``$OUT/gpu_run.log``.

    Raises:
        SystemExit: the bundle has more parts than calls allowed, or a command is too long.
    """
    folders = manifest["folders"]
    if len(folders) > MAX_CALLS:
        raise SystemExit(f"gpu_run: the bundle has {len(folders)} parts; the run is planned for {MAX_CALLS} calls")
    site = gpu_device.DEFAULT_ROOT / gpu_device.SITE
    calls = []
    for number, (folder, part) in enumerate(zip(folders, manifest["parts"], strict=True), start=1):
        install = f"python3 -m tools.gpu_device install {folder}"
        if number < len(folders):
            command, limit = f"export PYTHONUNBUFFERED=1; nvidia-smi -L; {install}", 180
        else:
            command = (
                f"export PYTHONUNBUFFERED=1; set -o pipefail; {install} && export PYTHONPATH={site}:$PWD &&"
                f" python3 -m tools.gpu_device check {folder} || exit 1; python3 -m tools.gpu_run --budget {BUDGET_S}"
                ' --out-dir "$OUT" 2>&1 | tee "$OUT/gpu_run.log"'
            )
            limit = 600
        if len(command) > COMMAND_LIMIT:
            raise SystemExit(f"gpu_run: call {number}'s command has {len(command)} characters, over {COMMAND_LIMIT}")
        calls.append({"command": command, "carry": [folder], "bytes": tree + part["bytes"], "timeout_s": limit})
    return calls


def dry_run(manifest_path: Path = BUNDLE_MANIFEST) -> int:
    """Print each device call (command, carried paths, bytes sent against the limit); 1 when one is over."""
    from tools import gpu_bundle

    if not manifest_path.is_file():
        print(f"No bundle at {manifest_path.parent}: build it first with `python -m tools.gpu_bundle`.")
        return 2
    manifest = json.loads(manifest_path.read_text())
    missing = [folder for folder in manifest["folders"] if not (ROOT / folder / gpu_device.MANIFEST).is_file()]
    if missing:
        print(f"The bundle's parts {missing} are missing: rebuild with `python -m tools.gpu_bundle`.")
        return 2
    tree = gpu_bundle.tree_bytes()
    calls = device_calls(manifest, tree)
    over = False
    print(f"{len(calls)} device calls, back to back (the machine is given back 30 s after a call ends):")
    for number, call in enumerate(calls, start=1):
        too_big = call["bytes"] > CALL_LIMIT
        over |= too_big
        print(f"\ncall {number} (timeout_s {call['timeout_s']}, {len(call['command'])} characters):")
        print(f"  command: {call['command']}")
        print(f"  carry:   {json.dumps(call['carry'])}")
        size = f"{call['bytes'] / 2**20:.1f} of {CALL_LIMIT / 2**20:.0f} MiB"
        print(f"  sends:   {size} (the {tree / 2**20:.1f} MiB working tree and the part){'  OVER' if too_big else ''}")
    print("\nthen here: python -m tools.gpu_run --record <the gpu_results.json the last call returns>")
    return 1 if over else 0


def record(results: dict[str, object], source: Path | None = None) -> None:
    """Write the GPU times of a results file into lessons.toml, the notebooks, the README and the agendas, and
    keep a copy of it (and of the executed notebooks beside it) under ``bench/gpu/``."""
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
    slug = re.sub(r"[^a-z0-9]+", "-", str(results["gpu"]).lower()).strip("-")
    keep = ROOT / "bench" / "gpu" / f"{results['date']}_{slug}.json"
    keep.parent.mkdir(parents=True, exist_ok=True)
    keep.write_text(json.dumps(results, indent=2) + "\n")
    archive = source.with_name("gpu_notebooks.tar.gz") if source else None
    if archive and archive.is_file():  # the GPU outputs beside the committed CPU ones, never over them
        with tarfile.open(archive) as notebooks:
            notebooks.extractall(keep.with_suffix(""), filter="data")
    print(f"recorded the GPU times; the results are in {keep}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="print the device calls of the run and stop")
    parser.add_argument("--rehearse", action="store_true", help="run two notebooks with the cpu profile")
    parser.add_argument("--record", type=Path, help="record the GPU times of this results file and stop")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--out-dir", type=Path, help="also write the results and executed notebooks here ($OUT)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds a notebook cell may take")
    parser.add_argument("--budget", type=float, default=BUDGET_S, help="seconds before the run is cut")
    parser.add_argument("--workers", type=int, help="notebooks at a time (default: a core pair each, at most 8)")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a worker process: run this notebook alone
    parser.add_argument("--workdir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--result", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--save", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.dry_run:
        return dry_run()
    if args.record:
        record(json.loads(args.record.read_text()), args.record)
        return 0
    if args.one:
        outcome = run_notebook(args.workdir / "notebooks" / args.one, args.workdir, {}, args.timeout, args.save)
        args.result.write_text(json.dumps(outcome))
        return 0
    if args.rehearse:
        names, profile = REHEARSAL_NOTEBOOKS, "cpu"
    else:
        if gpu_name() is None:
            print("No CUDA GPU here: run on a GPU machine, or use --rehearse to test the plumbing on a CPU.")
            return 2
        names, profile = syllabus_names(), "cuda"
    workers = args.workers or max(1, min(8, (os.cpu_count() or 2) // 2))
    started = time.perf_counter()
    results = measure(names, profile, args.timeout, args.budget, workers, args.out_dir, args.out)
    results["total_s"] = round(time.perf_counter() - started, 1)
    if BUNDLE_MANIFEST.is_file():  # the versions the bundle left to the device's image, as found there
        results["image_versions"] = gpu_device.image_versions(json.loads(BUNDLE_MANIFEST.read_text())["image_pins"])
    write_results(results, args.out_dir, args.out)
    print(f"wrote {args.out} ({results['total_s']} s in all)")
    for name, outcome in results["gpu_checks"].items():
        print(f"GPU check {name}: {outcome}")
    failed = [name for name, outcome in results["notebooks"].items() if not outcome["passed"]]
    failed += [name for name, outcome in results["gpu_checks"].items() if outcome == "MISSING"]
    if results["tests"].get("passed") is False:
        failed.append("the GPU tests")
    if failed:
        print("failed or cut:", ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
