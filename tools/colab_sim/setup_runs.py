"""`make test-colab`: run the set-up cell alone in the simulated Colab kernel, and read its output back.

``python -m tools.colab_sim.setup_runs first NOTEBOOK KERNEL`` runs the notebook's set-up cell (exactly as the
notebook holds it) in a fresh kernel, as a learner's first click on Colab does, and prints what the cell printed.
The cell may restart the runtime (the kernel dies after its message): that passes only if the message says so.
``python -m tools.colab_sim.setup_runs report FOLDER NOTEBOOK...`` prints what the set-up cell printed in
notebooks nbmake executed.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, DeadKernelError

from tools.colab_setup import RESTART_NOTICE  # noqa: E402
from tools.notebook_format import SETUP_MARKER  # noqa: E402


def setup_cell(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    cell = next(cell for cell in nb.cells if cell.cell_type == "code")
    if not cell.source.startswith(SETUP_MARKER):
        raise SystemExit("the first code cell is not the set-up cell")
    return cell


def printed(cell: nbformat.NotebookNode) -> str:
    parts = []
    for output in cell.get("outputs", []):
        if output.output_type == "stream":
            parts.append(output.text)
        elif output.output_type == "error":
            parts.append(f"{output.ename}: {output.evalue}\n")
    return "".join(parts)


def first(notebook: Path, kernel: str) -> int:
    cell = setup_cell(nbformat.read(notebook, as_version=4))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(cell.source)])
    resources = {"metadata": {"path": str(notebook.parent)}}
    client = NotebookClient(nb, kernel_name=kernel, timeout=1200, resources=resources)
    start = time.perf_counter()
    restarted = failed = False
    try:
        client.execute()
    except DeadKernelError:
        restarted = True
    except CellExecutionError:
        failed = True
    seconds = time.perf_counter() - start
    text = printed(nb.cells[0])
    print("   | " + text.rstrip().replace("\n", "\n   | "))
    if failed:
        print(f"FAILED: the set-up cell raised an error on its first run ({seconds:.0f} s)")
        return 1
    if restarted and RESTART_NOTICE not in text:
        print(f"FAILED: the kernel died during the set-up cell without the restart notice ({seconds:.0f} s)")
        return 1
    what = "restarted the runtime, as its message says" if restarted else "finished without a restart"
    print(f"   first run: {seconds:.1f} s wall clock in a fresh kernel (kernel start included); it {what}")
    return 0


def report(folder: Path, names: list[str]) -> int:
    for name in names:
        text = printed(setup_cell(nbformat.read(folder / name, as_version=4)))
        lines = [line for line in text.splitlines() if line.startswith("Colab set-up")]
        if not lines:
            print(f"FAILED: {name}: the set-up cell printed no 'Colab set-up' line: the cell did not see Colab")
            return 1
        print(f"   {name}, set-up cell (second run): " + " | ".join(lines))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "first":
        sys.exit(first(Path(sys.argv[2]), sys.argv[3]))
    if len(sys.argv) >= 4 and sys.argv[1] == "report":
        sys.exit(report(Path(sys.argv[2]), sys.argv[3:]))
    sys.exit("usage: python -m tools.colab_sim.setup_runs first NOTEBOOK KERNEL | report FOLDER NOTEBOOK...")
