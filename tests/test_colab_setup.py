"""The Colab set-up: the set-up cell's Colab branch, tools/colab_setup.py's decisions, helpers.versions() on Colab.

`make test-colab` runs the whole path in a simulated Colab; these tests pin down each decision on its own.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
from course_facts.pins import pinned  # noqa: E402
from helpers.device import versions  # noqa: E402
from tools import colab_setup  # noqa: E402
from tools.notebook_format import course_config, setup_cell_source  # noqa: E402


def colab_branch() -> str:
    """The set-up cell up to ``import helpers`` (the part that runs before the course is importable)."""
    source = setup_cell_source()
    head, sep, _ = source.partition("\nimport helpers\n")
    assert sep, "the set-up cell no longer imports helpers after its Colab branch"
    return head


@pytest.fixture
def fake_colab(monkeypatch: pytest.MonkeyPatch) -> list[tuple]:
    """``google.colab`` imported, and git and runpy recorded instead of run."""
    calls: list[tuple] = []
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    done = subprocess.CompletedProcess([], 0, "", "")
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: calls.append(("run", command, kw)) or done)
    import runpy

    monkeypatch.setattr(
        runpy, "run_path", lambda path, init_globals=None: calls.append(("run_path", path, init_globals))
    )
    monkeypatch.setattr(sys, "path", list(sys.path))
    return calls


def test_cell_clones_from_the_environment_overrides(fake_colab, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("COURSE_URL", "file:///mirror/course.git")
    monkeypatch.setenv("COURSE_DIR", str(tmp_path / "course"))
    exec(colab_branch(), {})
    (kind, command, _), (kind2, path, init) = fake_colab
    assert (
        kind == "run"
        and command[:2] == ["git", "clone"]
        and command[-2:] == ["file:///mirror/course.git", str(tmp_path / "course")]
    )
    assert kind2 == "run_path" and path == f"{tmp_path / 'course'}/tools/colab_setup.py"
    assert init["CLONED_FROM"] == "file:///mirror/course.git" and isinstance(init["SETUP_STARTED"], float)
    assert str(tmp_path / "course") in sys.path


def test_cell_defaults_to_the_course_repository(fake_colab, monkeypatch) -> None:
    monkeypatch.delenv("COURSE_URL", raising=False)
    monkeypatch.delenv("COURSE_DIR", raising=False)
    monkeypatch.setattr(os.path, "isdir", lambda path: False)
    exec(colab_branch(), {})
    assert fake_colab[0][1][-2:] == [f"https://github.com/{course_config()['repository']}", "/content/course"]


def test_cell_does_not_clone_twice(fake_colab, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("COURSE_DIR", str(tmp_path))
    exec(colab_branch(), {})
    assert [call[0] for call in fake_colab] == ["run_path"] and fake_colab[0][2]["CLONED_FROM"] is None


def test_cell_does_nothing_off_colab(monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("the cell ran a command off Colab"))
    exec(colab_branch(), {})


def test_cell_is_ruff_clean_and_formatted(tmp_path) -> None:
    cell = tmp_path / "cell.py"
    cell.write_text(setup_cell_source() + "\n")
    ruff = [sys.executable, "-m", "ruff"]
    config = ["--config", str(ROOT / "notebooks" / "ruff.toml")]  # notebook code: 88 characters a line
    subprocess.run([*ruff, "format", *config, str(cell)], check=True, capture_output=True)
    assert cell.read_text() == setup_cell_source() + "\n", "ruff format changes the set-up cell"
    checked = subprocess.run([*ruff, "check", *config, "--ignore", "E402", str(cell)], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout


def test_a_failed_clone_stops_the_notebook_with_one_message_and_no_traceback(tmp_path) -> None:
    """In a real kernel that looks like Colab's: the set-up cell, given an address that cannot be cloned, says
    which address failed, what git said and what to check, shows no traceback, and the next cell never runs."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    address = f"file://{tmp_path}/no-such-course.git"
    fake = (
        "import os, sys, types\n"
        "sys.modules['google.colab'] = types.ModuleType('google.colab')\n"
        f"os.environ['COURSE_URL'] = {address!r}\n"
        f"os.environ['COURSE_DIR'] = {str(tmp_path / 'course')!r}"
    )
    cells = [nbformat.v4.new_code_cell(fake), nbformat.v4.new_code_cell(setup_cell_source())]
    cells.append(nbformat.v4.new_code_cell("print('the next cell ran')"))
    nb = nbformat.v4.new_notebook(cells=cells)
    with pytest.raises(CellExecutionError):
        NotebookClient(nb, kernel_name="python3", timeout=60, resources={"metadata": {"path": str(tmp_path)}}).execute()
    (error,) = [output for output in nb.cells[1].outputs if output.output_type == "error"]
    shown = "\n".join(error.traceback)
    assert error.ename == "CourseSetupError" and address in shown, shown
    assert "COURSE_URL" in shown and "network" in shown and "git said:" in shown
    assert "Traceback" not in shown and "File " not in shown and len(error.traceback) == 1, shown
    assert not nb.cells[2].outputs, "Run All went on after the failed clone"


def test_plan_keeps_what_colab_has_and_installs_what_it_lacks() -> None:
    pins = {"numpy": "2.4.6", "pandas": "3.1.1", "transformers": pinned(), "evaluate": "0.4.6", "torch": "2.13.0"}
    pins |= {"jupyterlab": "4.6.6", "nbmake": "1.5.5", "datasets": "5.2.0"}
    colab = {"numpy": "2.0.2", "pandas": "2.1.4", "transformers": "4.57.1", "evaluate": None, "torch": "2.8.0+cu126"}
    colab |= {"jupyterlab": None, "nbmake": None, "datasets": "5.2.0"}
    install, kept = colab_setup.plan(pins, colab)
    # numpy 2.0.2 meets the minimum and stays; pandas 2.1 is below it; torch and the test tools are never installed.
    assert kept == {"numpy": "2.0.2"}
    assert install == {"pandas": "3.1.1", "transformers": pinned(), "evaluate": "0.4.6"}
    assert colab_setup.plan(pins, {**pins, "numpy": "2.0.2", "pandas": "2.2.2"})[0] == {}


def test_minimum_versions_are_what_the_simulation_runs() -> None:
    """Every kept package's minimum is below the course's pin, and make test-colab runs exactly that minimum."""
    pins = colab_setup.read_pins(ROOT / "requirements.txt")
    simulated = colab_setup.read_pins(ROOT / "tools" / "colab_sim" / "packages.txt")
    for name, minimum in colab_setup.KEPT_AT_LEAST.items():
        assert colab_setup.release(minimum) <= colab_setup.release(pins[name]), f"{name}: minimum above the pin"
        assert colab_setup.release(simulated[name])[:2] == colab_setup.release(minimum), (
            f"{name}: make test-colab runs {simulated[name]}, so the tested minimum is not {minimum}"
        )
        assert colab_setup.release(simulated[name]) < colab_setup.release(pins[name]), f"{name}: simulation = pins"
    assert colab_setup.release(simulated["transformers"])[0] == 4, "Colab ships transformers 4.x"
    assert set(colab_setup.IMPORT_NAMES) <= set(pins), "a package checked in memory is not pinned"


def test_release_and_pins_reject_bad_input(tmp_path) -> None:
    assert colab_setup.release("2.0.2rc1") == (2, 0, 2) and colab_setup.release("2.8.0+cu126") == (2, 8, 0)
    with pytest.raises(ValueError, match="not a version"):
        colab_setup.release("latest")
    bad = tmp_path / "requirements.txt"
    bad.write_text("numpy>=2\n")
    with pytest.raises(ValueError, match="name==version"):
        colab_setup.read_pins(bad)


def test_a_second_run_is_quick_and_does_nothing(monkeypatch, capsys) -> None:
    """This venv has the course's pins, as a Colab runtime has after the first run: nothing is installed."""
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail("a second run called pip"))
    monkeypatch.setattr(colab_setup, "restart_runtime", lambda reason: pytest.fail(f"restart: {reason}"))
    start = time.perf_counter()
    colab_setup.main()
    assert time.perf_counter() - start < 5
    out = capsys.readouterr().out
    assert re.fullmatch(r"Colab set-up: nothing to install; Colab's torch \S+ .*kept \(\d+\.\d\d s\)\n", out), out


def test_pip_runs_through_the_kernels_interpreter(monkeypatch) -> None:
    seen = []
    done = subprocess.CompletedProcess([], 0, stdout="", stderr="x 1.0 requires y<2, but you have y 2.0.\n")
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: seen.append(command) or done)
    notes = colab_setup.pip(["numpy==2.4.6"])
    assert seen[0][:4] == [sys.executable, "-m", "pip", "install"] and seen[0][-1] == "numpy==2.4.6"
    assert notes == ["x 1.0 requires y<2, but you have y 2.0."]
    monkeypatch.setattr(subprocess, "run", lambda command, **kw: subprocess.CompletedProcess([], 1, "", "boom"))
    with pytest.raises(RuntimeError, match="Disconnect and delete runtime"):
        colab_setup.pip(["numpy==2.4.6"])


def test_an_imported_package_that_changed_restarts_the_runtime(monkeypatch, capsys) -> None:
    """Installing changed numpy, which this process has imported: main() must restart, not carry on."""
    import numpy

    real = colab_setup.installed_version
    monkeypatch.setattr(colab_setup, "installed_version", lambda n: "4.57.1" if n == "transformers" else real(n))
    snapshots = iter([{"numpy": "2.0.2", "scattertext": "0.1"}, {"numpy": numpy.__version__, "scattertext": "0.2"}])
    monkeypatch.setattr(colab_setup, "all_versions", lambda: next(snapshots))
    monkeypatch.setattr(colab_setup, "stale_in_memory", lambda pins: {})
    installs = []
    monkeypatch.setattr(colab_setup, "pip", lambda arguments: installs.append(arguments) or [])
    reasons = []
    monkeypatch.setattr(colab_setup, "restart_runtime", reasons.append)
    colab_setup.main()
    assert installs and installs[0][-1] == f"transformers=={pinned()}"
    assert len(reasons) == 1 and f"numpy 2.0.2 → {numpy.__version__}" in reasons[0]
    assert "scattertext" not in reasons[0], "scattertext is installed but was never imported: no restart for it"
    assert f"Colab set-up: installing transformers 4.57.1 → {pinned()}" in capsys.readouterr().out


def test_a_course_package_imported_at_another_version_is_stale(monkeypatch) -> None:
    """A learner who imported Colab's transformers 4.x before the set-up cell gets a restart, not a mixed kernel."""
    old = types.ModuleType("transformers")
    old.__version__ = "4.57.1"
    monkeypatch.setitem(sys.modules, "transformers", old)
    stale = colab_setup.stale_in_memory(colab_setup.read_pins(ROOT / "requirements.txt"))
    assert stale["transformers"] == ("4.57.1", colab_setup.installed_version("transformers"))


def test_the_restart_notice_says_to_run_the_cell_again(monkeypatch, capsys) -> None:
    killed = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: killed.append((pid, sig)))
    monkeypatch.setattr(time, "sleep", lambda seconds: None)
    colab_setup.restart_runtime("this kernel had already imported pyarrow 18.1.0 → 26.0.1")
    out = capsys.readouterr().out
    assert out.startswith(colab_setup.RESTART_NOTICE) and "run this cell again" in out
    assert killed == [(os.getpid(), colab_setup.signal.SIGKILL)]


def test_versions_leaves_out_jupyterlab_and_nbmake_on_colab(monkeypatch) -> None:
    monkeypatch.delitem(sys.modules, "google.colab", raising=False)
    assert {"jupyterlab", "nbmake"} <= set(versions())
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    found = versions()
    assert "jupyterlab" not in found and "nbmake" not in found and found["transformers"] != "missing"


NOTEBOOKS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda path: path.name)
def test_every_committed_notebook_opens_with_the_set_up_code_collapsed(path: Path) -> None:
    """JupyterLab collapses the input of a cell with ``jupyter.source_hidden``, Colab shows ``cellView: form`` as a
    form (a "Show code" link); the book hides it by the ``hide-input`` tag. The cell's output stays shown."""
    import nbformat

    from tools.notebook_format import SETUP_MARKER, SETUP_METADATA, SETUP_TAGS

    setup = next(cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code")
    assert setup.source.startswith(SETUP_MARKER), f"{path.name}: the first code cell is not the set-up cell"
    assert setup.metadata.get("jupyter", {}).get("source_hidden") is True, f"{path.name}: run notebook_format apply"
    assert not setup.metadata.get("jupyter", {}).get("outputs_hidden"), "its output (the profile line) stays shown"
    assert setup.metadata.get("cellView") == SETUP_METADATA["cellView"] == "form"
    assert setup.metadata.get("tags") == SETUP_TAGS


def test_the_shared_parts_collapse_the_set_up_cell_of_a_new_notebook() -> None:
    import nbformat

    from course_facts.registry import lessons
    from tools.notebook_format import apply_shared_parts

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# title"), nbformat.v4.new_code_cell("x = 1")]
    apply_shared_parts(nb, lessons()[0].file)
    setup = nb.cells[1]
    assert setup.source == setup_cell_source()
    assert setup.metadata["jupyter"] == {"source_hidden": True} and setup.metadata["cellView"] == "form"
    nbformat.validate(nb)
