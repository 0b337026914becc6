"""The warm kernel `make test` runs the notebooks in (tools/warm_kernel.py) behaves as a fresh kernel does.

Each test runs a small notebook through nbclient, as nbmake does, in the ``course-warm`` kernel: what the libraries
decide when imported in a kernel (progress bars, the Trainer's progress table, pandas' display) is what a plain
kernel decides; the namespace is empty and the random seeds are drawn afresh; each kernel is a process of its own
with the notebook's folder and environment; a cell past its timeout is interrupted, and a kernel that dies is
reported dead.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError

from tools import warm_kernel


@pytest.fixture(scope="module", autouse=True)
def warm_spec() -> None:
    """The kernel spec and provisioner, as tests/conftest.py sets them up for `make test`."""
    if os.environ.get("JUPYTER_PATH", "").find("course-kernels-") < 0:
        folder = Path(tempfile.mkdtemp(prefix="course-kernels-"))
        warm_kernel.write_kernel_spec(folder)
        os.environ["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(folder), os.environ.get("JUPYTER_PATH")]))
    warm_kernel.register()


def run(folder: Path, *sources: str, timeout: int = 60, kernel: str = warm_kernel.NAME) -> list[str]:
    """Run cells in ``kernel`` with ``folder`` as the notebook's folder; what each cell printed to stdout."""
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source) for source in sources])
    client = NotebookClient(nb, kernel_name=kernel, timeout=timeout, resources={"metadata": {"path": str(folder)}})
    client.execute()
    return ["".join(out.get("text", "") for out in cell.outputs if out.get("name") == "stdout") for cell in nb.cells]


# What a library decides when imported, by whether it runs in a kernel: the probe prints each choice.
CHOICES = """import json, pandas, torch, tqdm.auto, transformers.trainer
print(json.dumps([
    "tqdm.notebook" in [kind.__module__ for kind in tqdm.auto.tqdm.__mro__],
    transformers.trainer.DEFAULT_PROGRESS_CALLBACK.__name__,
    pandas.get_option("display.max_columns"),
    torch.get_num_threads(),
]))"""


def test_the_libraries_choose_as_in_a_plain_kernel(tmp_path: Path) -> None:
    plain = run(tmp_path, CHOICES, kernel="python3")[0]
    warm = run(tmp_path, CHOICES)[0]
    assert json.loads(warm) == json.loads(plain), f"warm kernel {warm} != plain kernel {plain}"
    # the probe tells a kernel from a plain interpreter: there ProgressCallback and 0 columns (a terminal)
    assert json.loads(plain)[1:3] == ["NotebookProgressCallback", 20], plain


def test_a_kernel_starts_empty_with_fresh_seeds_in_its_notebooks_folder_and_environment(tmp_path: Path) -> None:
    probe = (
        "import json, os, numpy, torch\n"
        "seen = [os.getcwd(), os.environ.get('COURSE_WARM_PROBE'), os.getpid(), torch.initial_seed()]\n"
        "print(json.dumps([*seen, int(numpy.random.randint(2**31))]))"
    )
    os.environ["COURSE_WARM_PROBE"] = "from the starter"
    try:
        first = json.loads(run(tmp_path, probe + "\nsecret = 41")[0])
        second, names = run(
            tmp_path, probe, "print('secret' in globals(), 'tokenizers' in dir(), 'safetensors' in globals())"
        )
    finally:
        del os.environ["COURSE_WARM_PROBE"]
    folder, variable, pid, *seeds = json.loads(second)
    assert Path(folder) == tmp_path and variable == "from the starter", second
    assert pid not in (first[2], os.getpid()), "each kernel is a process of its own"
    assert seeds[0] != first[3] and seeds[1] != first[4], "each kernel draws its own seeds, as a fresh one does"
    assert names.split() == ["False", "False", "False"], "a name from another kernel or the template leaked"
    with pytest.raises(CellExecutionError, match="NameError"):
        run(tmp_path, "torch.zeros(1)")  # a notebook that forgets an import still fails


def test_a_cell_past_its_timeout_is_interrupted(tmp_path: Path) -> None:
    with pytest.raises(CellTimeoutError):
        run(tmp_path, "import time\ntime.sleep(60)", timeout=1)


def test_a_kernel_that_dies_is_reported_dead(tmp_path: Path) -> None:
    with pytest.raises(DeadKernelError):
        run(tmp_path, "import os\nos._exit(3)", "print('never')")


def test_a_spec_that_starts_something_else_is_refused_with_what_to_fix(tmp_path: Path) -> None:
    provisioner = warm_kernel.WarmProvisioner.__new__(warm_kernel.WarmProvisioner)
    with pytest.raises(warm_kernel.WarmKernelError, match="write_kernel_spec"):
        asyncio.run(provisioner.launch_kernel(["python", "other.py"]))
