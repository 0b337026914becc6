"""Time the first check of each exercise as a learner meets it: in a fresh kernel, right after the set-up cell.

One new Python process runs the non-Colab part of the notebooks' set-up cell (``import helpers;
helpers.setup_notebook()``), then forks one child per exercise: each child starts from exactly that state, a
fresh kernel that ran the set-up cell and nothing else, and times ``from exercises.checks import lesson_NN`` and
the check of the reference solution. ``--bare`` skips the set-up cell (the imports of torch and transformers
then count); ``--spawn`` starts a new interpreter per exercise instead of forking (slower, the same figures).

The course promises 5 s or less on 2 cores (DEVELOPERS.md), the capstone's project and the two-process hang
diagnosis excepted (:data:`OWN_LIMITS`). Each child reports its wall time and its CPU time: on a machine that other
work keeps busy, the wall time measures the machine, the CPU time still measures the check.

    python -m tools.first_checks                 # every exercise, one line each, JSON last
    python -m tools.first_checks 02.1 09.1       # just these
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIMIT_S = 5.0
# Exercises that keep a limit of their own: the capstone's project (trains the course model, under a minute) and
# the diagnosis of a two-process hang (two processes, a 30 s wait for the hung one).
OWN_LIMITS = {"12.2": 60.0, "10.3": 90.0}


def exercise_ids() -> list[str]:
    """Every exercise id ``"NN.K"``, read from the check modules' names (nothing imported)."""
    import exercises.checks

    found = []
    for info in pkgutil.iter_modules(exercises.checks.__path__):
        if info.name.startswith("lesson_"):
            source = Path(exercises.checks.__path__[0], f"{info.name}.py").read_text()
            numbers = sorted({int(line.split()[0][1:]) for line in source.splitlines() if _defines_exercise(line)})
            found += [f"{info.name[7:]}.{number}" for number in numbers]
    return sorted(found)


def _defines_exercise(line: str) -> bool:
    head = line.split(" = ", 1)[0]
    return line.startswith("q") and " = Exercise(" in line and head[1:].isdigit()


def limit_of(exercise_id: str) -> float:
    """The seconds the first check of ``exercise_id`` may take."""
    return OWN_LIMITS.get(exercise_id, LIMIT_S)


def _time_one(exercise_id: str) -> dict[str, object]:
    """In this process: import the lesson's checks and check the reference solution; seconds, CPU s, verdict."""
    import io
    import time
    from contextlib import redirect_stdout

    lesson, number = exercise_id.split(".")
    started, cpu = time.perf_counter(), time.process_time()
    with redirect_stdout(io.StringIO()):
        exercise = getattr(importlib.import_module(f"exercises.checks.lesson_{lesson}"), f"q{int(number)}")
        verdict = exercise.evaluate(exercise.solution_obj)
    return {
        "exercise": exercise_id,
        "seconds": time.perf_counter() - started,
        "cpu_seconds": time.process_time() - cpu,
        "status": verdict.status,
        "message": verdict.message,
    }


def _setup_cell() -> None:
    import io
    from contextlib import redirect_stdout

    with redirect_stdout(io.StringIO()):
        import helpers

        helpers.setup_notebook(announce=False)


def _drive(ids: list[str], setup: bool) -> None:
    """The measuring process: the set-up cell once, then one forked child per exercise, a JSON line each."""
    if setup:
        _setup_cell()
    for exercise_id in ids:
        reading, writing = os.pipe()
        child = os.fork()
        if child == 0:  # a kernel that ran the set-up cell and nothing else
            os.close(reading)
            try:
                line = json.dumps(_time_one(exercise_id))
            except BaseException as error:  # noqa: BLE001 (reported by the parent, with the exercise)
                line = json.dumps({"exercise": exercise_id, "error": f"{type(error).__name__}: {error}"})
            os.write(writing, (line + "\n").encode())
            os._exit(0)
        os.close(writing)
        with os.fdopen(reading) as report:
            print(report.read().strip(), flush=True)
        os.waitpid(child, 0)


def time_first_checks(
    ids: list[str] | None = None, setup: bool = True, spawn: bool = False, timeout: float = 1800.0
) -> list[dict[str, object]]:
    """Wall and CPU seconds, status and message of the first check of each exercise (all when ``ids`` is None),
    each in a fresh kernel after the set-up cell (``setup``) or a bare one. Raises ``RuntimeError`` with the
    measuring process's error output when it fails."""
    ids = ids or exercise_ids()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    groups = [[one] for one in ids] if spawn else [ids]
    results: list[dict[str, object]] = []
    for group in groups:
        command = [sys.executable, "-m", "tools.first_checks", "--drive", *group] + ([] if setup else ["--bare"])
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
        lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
        if done.returncode or len(lines) != len(group) or any("error" in line for line in lines):
            raise RuntimeError(f"timing {group} failed (exit {done.returncode}): {lines}\n{done.stderr[-3000:]}")
        results += lines
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exercises", nargs="*", help="exercise ids (NN.K); all when none")
    parser.add_argument("--bare", action="store_true", help="no set-up cell first: a bare kernel")
    parser.add_argument("--spawn", action="store_true", help="a new interpreter per exercise, not a fork")
    parser.add_argument("--drive", action="store_true", help=argparse.SUPPRESS)  # the measuring process
    options = parser.parse_args(argv)
    if options.drive:
        _drive(options.exercises, setup=not options.bare)
        return 0
    results = time_first_checks(options.exercises or None, setup=not options.bare, spawn=options.spawn)
    for result in results:
        over = " OVER" if float(result["seconds"]) > limit_of(str(result["exercise"])) else ""  # type: ignore[arg-type]
        print(
            f"{result['exercise']}  {result['seconds']:6.2f} s  (CPU {result['cpu_seconds']:6.2f} s)  "
            f"{result['status']}{over}"
        )
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
