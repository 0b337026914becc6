"""Every lesson's script runs as a learner runs it: in its own process, in a folder outside the checkout, with
`helpers` importable only for its offline loaders (a copy of helpers/__init__.py, models.py and data.py, and the
modules the lessons' own loaders need, `tools.pattern_check.LESSON_LOADERS`), on a
short setting given on the command line (`--max_steps 2`). It must print the global batch and the planned
steps, and end with a line of the same shape as the notebook's result line (numbers aside).

Cost. Importing torch, transformers and datasets is about 6 s of CPU, most of a two-step script. So one
launcher process, started fresh in that environment, imports those three libraries (nothing of the course,
no script) and forks a child per script: each script runs in its own process, from a pristine interpreter that
has run none of its code and no other script's, with its own `__main__`. What the fork shares is the libraries'
import, so a script that forgets an `import` still fails (its namespace is empty). The first script also runs
as the literal `python examples/NN_x.py`, to prove the command itself. docs/authoring.md gives the figures.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tools import examples, pattern_check

ROOT = examples.ROOT
LOADER_FILES = ("__init__.py", "models.py", "data.py")  # helpers' offline loaders and run_dir
# and what the lessons' own loaders need (their modules and the helpers modules those import), nothing else
LESSON_FILES = tuple(pattern_check.loader_files(LOADER_FILES))
SHORT = ["--max_steps", "2"]
TIMEOUT_S = 300
GUARD = ROOT / "tools" / "network_guard"
# The checkout is installed editable (make venv): its import hook would find every `helpers` module. Each
# process's sitecustomize runs the offline guard's own (tests/conftest.py), then removes that hook.
SITECUSTOMIZE = """import runpy
import sys

runpy.run_path("{guard}")
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
"""
# Reads one job a line (JSON: script, args, cwd, stdout, stderr), forks, runs the script as `python script`
# would in the child, and answers with the child's exit code.
LAUNCHER = """import gc, json, os, runpy, signal, sys, traceback

import datasets, torch, transformers
from transformers import Trainer, TrainingArguments

# The libraries' objects are never garbage: a child's gc.collect() (accelerate calls it after each of lesson 14's
# trials) then walks only what the script made, not the whole import again.
gc.freeze()
for line in sys.stdin:
    job = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            signal.alarm(job["timeout"])
            os.chdir(job["cwd"])
            for fd, name in ((1, "stdout"), (2, "stderr")):
                os.dup2(os.open(job[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), fd)
            sys.argv = [job["script"], *job["args"]]
            sys.path[0] = os.path.dirname(job["script"])
            runpy.run_path(job["script"], run_name="__main__")
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), flush=True)
"""
# The plan line ShowPlan adds, and the one a pattern that is a script already (lesson 10) prints itself.
PLAN_RES = (
    re.compile(
        r"^global batch (?P<batch>\d+) = (?P<device>\d+) per device x (?P<accumulation>\d+) accumulation x 1 "
        r"processes; 2 optimizer steps planned"
    ),
    re.compile(
        r"^world size 1, global batch (?P<batch>\d+) \((?P<device>\d+) x 1 x (?P<accumulation>\d+)\), "
        r"2 optimizer steps$"
    ),
)


def plan(line: str) -> re.Match[str] | None:
    """The plan line's numbers, in either format; None for any other line."""
    return next((match for pattern in PLAN_RES if (match := pattern.match(line))), None)


def _scripts() -> list[tuple[Path, str]]:
    out = []
    for path in examples.all_notebooks():
        nb = json.loads(path.read_text(encoding="utf-8"))
        names = list(examples.tagged_cells(nb, path)) or [f"{path.stem}.py"]
        out += [(path, name) for name in names]
    return out


SCRIPTS = _scripts()


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a learner's process: only the loaders of `helpers` importable."""
    loaders = tmp_path_factory.mktemp("loaders")
    (loaders / "helpers").mkdir()
    for name in LOADER_FILES + LESSON_FILES:
        source = ROOT / "helpers" / name
        if source.is_dir():  # a package, e.g. the evaluate metric scripts
            shutil.copytree(source, loaders / "helpers" / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, loaders / "helpers" / name)
    (loaders / "sitecustomize.py").write_text(SITECUSTOMIZE.format(guard=GUARD / "sitecustomize.py"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(loaders), str(GUARD)])
    env["COURSE_DATA_CACHE"] = str(ROOT / "data" / "cache")  # reuse the reviews split the notebooks cached
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


@pytest.fixture(scope="module")
def launcher(outside: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[subprocess.Popen]:
    """The fresh process that imports the libraries once and forks one child a script."""
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER],
        cwd=tmp_path_factory.mktemp("launcher"),
        env=outside,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    yield process
    process.stdin.close()
    process.wait(timeout=60)


def _run(script: Path, folder: Path, launcher: subprocess.Popen | None, env: dict[str, str]) -> tuple[int, str, str]:
    """Run ``script --output_dir folder/out --max_steps 2`` in ``folder``: (exit code, stdout, stderr)."""
    args = ["--output_dir", str(folder / "out"), *SHORT]
    if launcher is None:  # the literal command a learner types
        run = subprocess.run(
            [sys.executable, str(script), *args], cwd=folder, env=env, capture_output=True, text=True, timeout=TIMEOUT_S
        )
        return run.returncode, run.stdout, run.stderr
    out, err = folder / "stdout.txt", folder / "stderr.txt"
    job = dict(script=str(script), args=args, cwd=str(folder), stdout=str(out), stderr=str(err), timeout=TIMEOUT_S)
    launcher.stdin.write(json.dumps(job) + "\n")
    launcher.stdin.flush()
    answer = launcher.stdout.readline()
    assert answer, "the launcher process died"
    return json.loads(answer)["returncode"], out.read_text(), err.read_text()


def test_only_the_loaders_are_importable(outside: dict[str, str], tmp_path: Path) -> None:
    probe = (
        "import helpers, helpers.models, helpers.data\n"
        "print(helpers.__file__)\n"
        "try:\n    import helpers.trainers\nexcept ModuleNotFoundError:\n    print('no trainers')\n"
    )
    run = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=outside, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    where, refused = run.stdout.split()[0], run.stdout.splitlines()[-1]
    assert not Path(where).is_relative_to(ROOT) and refused == "no trainers", run.stdout


@pytest.mark.parametrize(("notebook", "name"), SCRIPTS, ids=[name for _, name in SCRIPTS])
def test_the_script_runs_outside_the_course(
    notebook: Path, name: str, outside: dict[str, str], launcher: subprocess.Popen, tmp_path: Path
) -> None:
    script = examples.EXAMPLES / name
    assert script.is_file(), f"examples/{name} is missing: tag the pattern's cells, run `python -m tools.examples`"
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    expected = examples.result_shapes(nb, examples.tagged_cells(nb, notebook)[name])
    # A participant copy clears the outputs (tools/participant_copies.py): there the script runs and prints its
    # plan, and its result line is compared where a notebook carries its run (test_notebook_outputs holds the
    # course's notebooks to that).
    executed = any(cell.get("outputs") for cell in nb["cells"] if cell["cell_type"] == "code")
    assert expected or not executed, f"{notebook.name}: the last pattern cell printed no result line"
    fresh = name == SCRIPTS[0][1]
    returncode, stdout, stderr = _run(script, tmp_path, None if fresh else launcher, outside)
    assert returncode == 0, f"examples/{name} failed:\n{stderr[-3000:]}"
    lines = [line for line in stdout.splitlines() if line.strip()]
    plans = [found for line in lines if (found := plan(line))]
    assert plans, f"examples/{name} printed no `global batch ...; 2 optimizer steps planned` line:\n{stdout}"
    assert int(plans[0]["batch"]) == int(plans[0]["device"]) * int(plans[0]["accumulation"]), plans[0].group(0)
    assert not executed or examples.line_shape(lines[-1]) in expected, (
        f"examples/{name} ended with {lines[-1]!r}; the notebook's result line has the shape(s) {sorted(expected)}"
    )
