"""Start JupyterLab on the course's notebooks, as ``make lab`` does.

Usage: python -m tools.lab [--print] [JUPYTER-LAB-OPTION ...]      (``make lab LAB_ARGS=...`` passes options on)

Two things differ from a plain ``jupyter lab --notebook-dir=notebooks``:

* the course's own JupyterLab settings, in ``jupyter/`` (put first on ``JUPYTER_CONFIG_PATH``): its
  ``labconfig/default_setting_overrides.json`` answers JupyterLab's "Would you like to get notified about official
  Jupyter news?" with Never (``fetchNews`` of ``@jupyterlab/apputils-extension:notification``; the pop-up shows
  whenever that setting is unset), and checks for no updates. A learner's own settings still win over these
  defaults;
* one thread a process (``OMP_NUM_THREADS=1`` unless set): the kernels keep their speed when other work runs;
* as root (containers, cloud machines) JupyterLab refuses to start ("Running as root is not recommended. Use
  --allow-root"), so ``--allow-root`` is added, and said.

``--print`` prints the environment variable and the command instead of running them.
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path

from course_facts.pins import one_thread_a_process

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "jupyter"  # the course's JupyterLab settings (a Jupyter config folder)
NOTEBOOKS = "notebooks"


def is_root() -> bool:
    """Whether this process runs as root (never on Windows, which has no ``geteuid``)."""
    return hasattr(os, "geteuid") and os.geteuid() == 0


def command(jupyter: str, root: bool, extra: list[str] | None = None) -> list[str]:
    """The ``jupyter lab`` command line: on ``notebooks/``, with ``--allow-root`` when ``root``."""
    return [jupyter, "lab", f"--notebook-dir={NOTEBOOKS}", *(["--allow-root"] if root else []), *(extra or [])]


def environment(base: Mapping[str, str], settings: Path = SETTINGS) -> dict[str, str]:
    """``base`` with the course's settings folder first on ``JUPYTER_CONFIG_PATH`` (what was there stays after),
    and one thread a process for the kernels (``course_facts.pins.THREAD_ENV``, where ``base`` does not set it)."""
    path = [str(settings), *filter(None, base.get("JUPYTER_CONFIG_PATH", "").split(os.pathsep))]
    env = {**base, "JUPYTER_CONFIG_PATH": os.pathsep.join(path)}
    one_thread_a_process(env)
    return env


def main(argv: list[str]) -> int:
    show = "--print" in argv
    extra = [argument for argument in argv if argument != "--print"]
    jupyter = str(Path(sys.executable).parent / "jupyter")
    line = command(jupyter, is_root(), extra)
    env = environment(os.environ)
    if show:
        print(f"JUPYTER_CONFIG_PATH={shlex.quote(env['JUPYTER_CONFIG_PATH'])} {shlex.join(line)}")
        return 0
    if not Path(jupyter).is_file():
        print(f"make lab: {jupyter} is missing: run make venv first (make lab does).", file=sys.stderr)
        return 1
    if "--allow-root" in line:
        print("make lab: running as root (common in containers): starting JupyterLab with --allow-root.", flush=True)
    os.chdir(ROOT)
    # JupyterLab takes this process's place, so that Ctrl-C reaches it alone (it asks before it shuts down).
    os.execve(jupyter, line, env)
    return 1  # not reached: execve returns only by raising


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
