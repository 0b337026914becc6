"""Every lesson's script runs as a learner runs it: a fresh `python examples/NN_x.py` in a folder outside the
checkout, with `helpers` importable only for its offline loaders (a copy of helpers/__init__.py, models.py and
data.py), on a short setting given on the command line (`--max_steps 2`). It must print the global batch and
the planned steps, and end with a line of the same shape as the notebook's result line (numbers aside).

Cost: one fresh process a script (imports, data, model, 2 steps, an evaluation): docs/authoring.md gives it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tools import examples

ROOT = examples.ROOT
LOADER_FILES = ("__init__.py", "models.py", "data.py")  # helpers' offline loaders and run_dir, nothing else
SHORT = ["--max_steps", "2"]
GUARD = ROOT / "tools" / "network_guard"
SITECUSTOMIZE = """import runpy
import sys

runpy.run_path("{guard}")
sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "__module__", "").startswith("__editable__")]
"""
PLAN_RE = re.compile(r"^global batch (\d+) = (\d+) per device x (\d+) accumulation x 1 processes; 2 optimizer steps")


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
    """The environment of a learner's process: a temporary folder, only the loaders of `helpers` importable."""
    loaders = tmp_path_factory.mktemp("loaders")
    (loaders / "helpers").mkdir()
    for name in LOADER_FILES:
        shutil.copy(ROOT / "helpers" / name, loaders / "helpers" / name)
    # The checkout is installed editable (make venv): its import hook would find every `helpers` module. The
    # process's sitecustomize runs the offline guard's own (tests/conftest.py) and then removes that hook.
    (loaders / "sitecustomize.py").write_text(SITECUSTOMIZE.format(guard=GUARD / "sitecustomize.py"))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(loaders), str(GUARD)])
    env["COURSE_DATA_CACHE"] = str(ROOT / "data" / "cache")  # reuse the reviews split the notebooks cached
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


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
def test_the_script_runs_outside_the_course(notebook: Path, name: str, outside: dict[str, str], tmp_path: Path) -> None:
    script = examples.EXAMPLES / name
    assert script.is_file(), f"examples/{name} is missing: tag the pattern's cells, run `python -m tools.examples`"
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    expected = examples.result_line(nb, examples.tagged_cells(nb, notebook)[name])
    assert expected, f"{notebook.name}: the last pattern cell printed no result line"
    run = subprocess.run(
        [sys.executable, str(script), "--output_dir", str(tmp_path / "out"), *SHORT],
        cwd=tmp_path,
        env=outside,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, f"examples/{name} failed:\n{run.stderr[-3000:]}"
    lines = [line for line in run.stdout.splitlines() if line.strip()]
    plans = [line for line in lines if PLAN_RE.match(line)]
    assert plans, f"examples/{name} printed no `global batch ...; 2 optimizer steps planned` line:\n{run.stdout}"
    batch, per_device, accumulation = map(int, PLAN_RE.match(plans[0]).groups())
    assert batch == per_device * accumulation
    assert examples.line_shape(lines[-1]) == examples.line_shape(expected), (
        f"examples/{name} ended with {lines[-1]!r}; the notebook's result line is {expected!r}"
    )
