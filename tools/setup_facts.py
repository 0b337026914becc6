"""What a newcomer's first install costs, measured, never typed: the set-up page's facts (docs/setup.md).

Usage:
    python -m tools.setup_facts                   rewrite the docs/setup.md block from docs/setup_facts.json
    python -m tools.setup_facts --check           exit 1 if the docs/setup.md block is not what the file gives
    python -m tools.setup_facts measure-install   clone the course into a temporary folder, time `make venv` there,
                                                  measure the size of its .venv (du) and how long `jupyter lab`
                                                  takes to answer; record them, rewrite the block
    python -m tools.setup_facts measure-test      time `make test` in this checkout; record it, rewrite the block
    python -m tools.setup_facts measure-suite     clone the course into a temporary folder and time what a newcomer
                                                  runs there: `make venv`, then `make test` with a breakdown (lint,
                                                  each test file, each notebook) from pytest's JUnit report;
                                                  record it, rewrite the block (`make bench SUITE=1` runs it)
    python -m tools.setup_facts record-test --seconds S
                                                  record a `make test` that took S seconds on this machine (timed
                                                  by the caller, e.g. `/usr/bin/time -f %e make test`), rewrite
                                                  the block
    python -m tools.setup_facts measure-colab     time what `make test-colab` runs once .venv exists
                                                  (tools/test_colab.sh: the simulated Colab, built from the
                                                  registry); record it, rewrite the block
    python -m tools.setup_facts measure-torch [--cpu-from DIR]
                                                  download and install the pinned torch alone (with its
                                                  dependencies) in two throwaway venvs, as the CPU build and as
                                                  PyPI's CUDA build: bytes downloaded, disk taken; record them,
                                                  rewrite the block. --cpu-from: a folder that holds the CPU wheel,
                                                  where PyTorch's CPU index cannot be reached

Run the measuring modes on a quiet machine (the course's own runs take ``flock /tmp/course-cpu.lock``). The figures
go to ``docs/setup_facts.json`` with the machine, the date and the Python version, and docs/setup.md shows them
between ``<!-- setup-facts:start -->`` and ``<!-- setup-facts:end -->``; the learners' README of a participant
copy shows the same block (``tools/participant_copies.py``), with the figures of a copy's own ``make test``
(``participant_suite``, measured by ``python -m tools.participant_copies --measure``) in place of the full
course's. A figure not measured yet is said to be so.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import urllib.request
from pathlib import Path
from typing import Any

from tools import suite_order
from tools.blocks import MissingMarkers, replace_block
from tools.install import CPU_INDEX, torch_pin

ROOT = Path(__file__).resolve().parent.parent
FACTS = suite_order.FACTS  # one place for the file's path
PAGE = ROOT / "docs" / "setup.md"  # the set-up page, which the README links
START, END = "<!-- setup-facts:start -->", "<!-- setup-facts:end -->"
WRAP = 112  # the set-up page's prose width
SUITE, PARTICIPANT_SUITE = "suite", "participant_suite"  # the full course's make test, a participant copy's
PYPI = "https://pypi.org/simple"


class SetupFactsError(RuntimeError):
    """A measurement failed, or the set-up page has no place for the block."""


def load_facts(path: Path | None = None) -> dict[str, Any]:
    """The measured facts (an empty dict when nothing was measured yet), from :data:`FACTS` unless ``path``."""
    path = FACTS if path is None else path
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def _minutes(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} minutes"


def torch_line(torch: dict[str, Any]) -> str:
    """The README's sentence on the two torch builds: what each downloads and takes on disk."""
    cpu, cuda = torch["cpu"], torch["cuda"]
    where = torch.get("cpu_from", "PyTorch's CPU index")
    source = "" if where == "PyTorch's CPU index" else f"; the CPU wheel from {where}, not from PyTorch's index"
    return (
        f"- **Which torch**: `make venv` takes the CPU build on Linux without an NVIDIA driver (no `nvidia-smi`, no "
        f"`/proc/driver/nvidia`), PyPI's CUDA build with one, and says which and why; `COURSE_TORCH=cpu` or "
        f"`COURSE_TORCH=cuda` chooses. Torch alone, with its dependencies, in an empty venv ({torch['platform']}, "
        f"Python {torch['python']}, {torch['date']}{source}): the CPU build (`{cpu['version']}`) downloads "
        f"{cpu['download_bytes'] / 1e9:.2f} GB in {cpu['files']} files and takes {cpu['installed_bytes'] / 1e9:.2f} "
        f"GB of disk; the CUDA build (`{cuda['version']}`, with {cuda['nvidia_packages']} packages of NVIDIA's "
        f"CUDA libraries) downloads {cuda['download_bytes'] / 1e9:.2f} GB in {cuda['files']} files and takes "
        f"{cuda['installed_bytes'] / 1e9:.2f} GB."
    )


def setup_block(facts: dict[str, Any] | None = None, suite_key: str = SUITE) -> str:
    """The README's sentences on the first install, from the measured facts; ``make test``'s figures from
    ``facts[suite_key]`` (``participant_suite`` for the learners' README of a participant copy)."""
    facts = load_facts() if facts is None else facts
    install, lab, test = facts.get("install"), facts.get("lab_start"), facts.get("test")
    lines = []
    if install:
        size = install["venv_bytes"] / 1e9
        lines.append(
            f"- **First install**: `.venv` takes {size:.1f} GB of disk (CPU torch). `make venv` (the first step of "
            f"`make lab` and `make test`) took {_minutes(install['seconds'])} with "
            f"{install.get('installer', 'pip')} on a {install['machine']} "
            f"({install['date']}, Python {install['python']}) with the packages already downloaded "
            f"({install['packages_from']}); over the internet add the download, about "
            f"{install['download_bytes'] / 1e9:.1f} GB of wheels."
        )
    else:
        lines.append("- **First install**: not measured yet (`python -m tools.setup_facts measure-install`).")
    if facts.get("torch"):
        lines.append(torch_line(facts["torch"]))
    if lab:
        lines.append(
            f"- **`make lab`** once `.venv` exists: JupyterLab answered after {_minutes(lab['seconds'])} on the same "
            "machine; your browser opens it."
        )
    colab = facts.get("colab")
    if colab and suite_key == SUITE:
        lines.append(
            f"- **`make test-colab`** (the simulated Colab, which CI runs after `make test`): "
            f"{_minutes(colab['seconds'])} on a {colab['machine']} ({colab['date']}); it builds `.venv-colab` from "
            "the package registry each time."
        )
    suite = facts.get(suite_key)
    if suite:
        lines += suite_lines(suite)
    elif suite_key == PARTICIPANT_SUITE:
        lines.append("- **`make test`**: not measured yet for this copy of the course.")
    elif test:
        lines.append(
            f"- **`make test`**: {_minutes(test['seconds'])} on a {test['machine']} ({test['date']}): the unit "
            "tests, then every notebook top to bottom."
        )
    else:
        lines.append("- **`make test`**: not measured yet (`python -m tools.setup_facts measure-suite`).")
    wrapped = [
        line if line.startswith("|") else textwrap.fill(line, WRAP, subsequent_indent="  ", break_on_hyphens=False)
        for line in lines
    ]
    return "\n".join(wrapped)


def suite_lines(suite: dict[str, Any]) -> list[str]:
    """The README's lines on ``make test`` from a fresh clone, with where its time goes."""
    parts = suite["parts"]
    total = suite["install_seconds"] + suite["test_seconds"]
    lines = [
        f"- **`make test` from a fresh clone**: {total:.0f} s on a {suite['machine']} ({suite['date']}, "
        f"`git clone` then `make test`): `make venv` {suite['install_seconds']:.0f} s (with {suite['installer']}), "
        f"then `make test` {suite['test_seconds']:.0f} s: `ruff` and pytest's start-up {parts['lint']:.0f} s, then "
        f"{suite['tests']} tests in {suite['workers']} processes ({suite['pytest_seconds']:.0f} s). Their own times, "
        "summed over the "
        "processes (each process shares the cores with the other, so these add up to about "
        f"{suite['workers']} times the wall time):",
        "",
        "| part | tests | seconds |",
        "|---|---|---|",
    ]
    lines.append(f"| unit tests (`tests/`) | {parts['unit_count']} | {parts['unit']:.0f} |")
    for name, seconds in parts["slowest_files"]:
        lines.append(f"| &nbsp;&nbsp;of which `{name}` | | {seconds:.0f} |")
    lines.append(f"| notebooks (nbmake) | {len(parts['notebooks'])} | {sum(parts['notebooks'].values()):.0f} |")
    for name, seconds in sorted(parts["notebooks"].items(), key=lambda item: -item[1])[:3]:
        lines.append(f"| &nbsp;&nbsp;of which `{name}` | | {seconds:.0f} |")
    return lines


def with_block(text: str, block: str) -> str:
    """``text`` with the part between the markers replaced by ``block``.

    Raises:
        SetupFactsError: the markers are missing.
    """
    try:
        return replace_block(text, START, END, block, PAGE.name)
    except MissingMarkers as error:
        raise SetupFactsError(str(error)) from error


def write_readme(readme: Path | None = None, facts: dict[str, Any] | None = None) -> bool:
    """Rewrite the block (in :data:`PAGE` unless ``readme``, e.g. a participant copy's README); True when the
    page changed."""
    readme = PAGE if readme is None else readme
    text = readme.read_text(encoding="utf-8")
    updated = with_block(text, setup_block(facts))
    if updated != text:
        readme.write_text(updated, encoding="utf-8")
    return updated != text


def _record(key: str, values: dict[str, Any]) -> None:
    facts = load_facts()
    facts[key] = values
    FACTS.write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _machine() -> str:
    return f"{os.cpu_count()}-core CPU"


def du_bytes(folder: Path) -> int:
    """Disk usage of a folder, as ``du -sb`` counts it (hard links once)."""
    result = subprocess.run(["du", "-sb", str(folder)], check=True, capture_output=True, text=True)
    return int(result.stdout.split()[0])


def download_bytes(clone: Path) -> int:
    """The size of the packages ``make venv`` installs, as pip downloads them (wheels and source archives), for
    this platform: ``pip download`` of the two requirement files into a temporary folder."""
    pip = [str(clone / ".venv" / "bin" / "python"), "-m", "pip", "download", "-q", "--disable-pip-version-check"]
    with tempfile.TemporaryDirectory(prefix="course-wheels-") as folder:
        for extra in (
            ["-r", "requirements.txt", "-c", "constraints.txt"],
            ["--no-deps", "-r", "requirements-nodeps.txt"],
        ):
            result = subprocess.run([*pip, "-d", folder, *extra], cwd=clone, capture_output=True, text=True)
            if result.returncode:
                raise SetupFactsError(f"pip download failed: {result.stderr[-2000:]}")
        return sum(path.stat().st_size for path in Path(folder).iterdir() if path.is_file())


def _lab_start_seconds(clone: Path) -> float:
    """Seconds until a fresh ``jupyter lab`` in ``clone`` answers on its API (the browser then opens it)."""
    import secrets
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = secrets.token_hex(8)
    command = [str(clone / ".venv" / "bin" / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1", f"--port={port}"]
    command += [f"--IdentityProvider.token={token}", "--notebook-dir=notebooks", "--LabApp.news_url=None"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=clone, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while time.perf_counter() - started < 120:
            try:
                request = urllib.request.Request(
                    f"http://127.0.0.1:{port}/api/status", headers={"Authorization": f"token {token}"}
                )
                urllib.request.urlopen(request, timeout=1).close()
                return time.perf_counter() - started
            except OSError:
                time.sleep(0.1)
        raise SetupFactsError("jupyter lab did not answer within 120 s.")
    finally:
        process.terminate()
        process.wait(timeout=30)


def _clone_and_install(folder: str, source: Path = ROOT) -> tuple[Path, float, str]:
    """Clone the committed course at ``source`` (this checkout, or a participant copy's repository) into
    ``folder``/course and run ``make venv`` there: the clone, the seconds ``make venv`` took and the installer it
    used (``tools/install.py`` says which)."""
    clone = Path(folder) / "course"
    subprocess.run(["git", "clone", "--quiet", str(source), str(clone)], check=True)
    started = time.perf_counter()
    result = subprocess.run(["make", "venv"], cwd=clone, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if result.returncode:
        raise SetupFactsError(f"`make venv` failed in the fresh clone:\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    installer = re.search(r"installed the course's packages with (\w+)", result.stdout)
    return clone, seconds, installer.group(1) if installer else "pip"


def measure_install(packages_from: str) -> dict[str, Any]:
    """Clone this checkout's committed course into a temporary folder and time ``make venv`` there."""
    with tempfile.TemporaryDirectory(prefix="course-install-") as folder:
        clone, seconds, installer = _clone_and_install(folder)
        venv = clone / ".venv"
        python = subprocess.run(
            [str(venv / "bin" / "python"), "-c", "import platform; print(platform.python_version())"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        values = {
            "seconds": round(seconds, 1),
            "venv_bytes": du_bytes(venv),
            "download_bytes": download_bytes(clone),
            "machine": _machine(),
            "python": python,
            "date": datetime.date.today().isoformat(),
            "packages_from": packages_from,
            "installer": installer,
        }
        lab = {"seconds": round(_lab_start_seconds(clone), 1), "machine": _machine()}
    _record("install", values)
    _record("lab_start", lab)
    return values


def record_test(seconds: float) -> dict[str, Any]:
    """Record a passing ``make test`` that took ``seconds`` on this machine.

    Raises:
        SetupFactsError: ``seconds`` is not a positive duration.
    """
    if not seconds > 0:
        raise SetupFactsError(f"--seconds must be the measured duration of `make test`, got {seconds}.")
    values = {"seconds": round(seconds, 1), "machine": _machine(), "date": datetime.date.today().isoformat()}
    values["python"] = platform.python_version()
    _record("test", values)
    return values


def measure_test() -> dict[str, Any]:
    """Time ``make test`` in this checkout."""
    started = time.perf_counter()
    result = subprocess.run(["make", "test"], cwd=ROOT)
    seconds = time.perf_counter() - started
    if result.returncode:
        raise SetupFactsError("`make test` failed; fix it before recording its time.")
    return record_test(seconds)


def _test_file(classname: str) -> str:
    """The file of a JUnit test case, below ``tests/``: ``tests.lesson_07.test_answers.TestX`` ->
    ``lesson_07/test_answers.py`` (as :func:`tools.suite_order.file_key` names it)."""
    if not classname.startswith("tests."):
        return classname
    parts = classname.split(".")[1:]
    end = next((index for index, part in enumerate(parts) if part.startswith("test")), len(parts) - 1)
    return "/".join(parts[: end + 1]) + ".py"


def breakdown(junit_xml: str, slowest: int = 4) -> dict[str, Any]:
    """Seconds by part from pytest's JUnit report: unit tests (with the ``slowest`` files) and each notebook."""
    import xml.etree.ElementTree as ElementTree

    by_file: dict[str, float] = {}
    notebooks: dict[str, float] = {}
    unit_count = 0
    for case in ElementTree.fromstring(junit_xml).iter("testcase"):
        seconds = float(case.get("time", 0))
        classname = case.get("classname", "")
        if ".ipynb" in classname or case.get("name", "").endswith(".ipynb"):
            name = case.get("name", classname).split("::")[-1]
            notebooks[name] = notebooks.get(name, 0.0) + seconds
        else:
            unit_count += 1
            file = _test_file(classname)
            by_file[file] = by_file.get(file, 0.0) + seconds
    if not notebooks or not by_file:
        raise SetupFactsError("the JUnit report names no notebook or no unit test: was it `make test`'s report?")
    top = sorted(by_file.items(), key=lambda item: -item[1])[:slowest]
    return {
        "unit": round(sum(by_file.values()), 1),
        "unit_count": unit_count,
        "slowest_files": [[name, round(seconds, 1)] for name, seconds in top],
        "files": {name: round(seconds, 1) for name, seconds in sorted(by_file.items())},
        "notebooks": {name: round(seconds, 1) for name, seconds in sorted(notebooks.items())},
    }


def measure_suite(source: Path = ROOT, key: str = SUITE) -> dict[str, Any]:
    """Clone the committed course at ``source`` into a temporary folder, time ``make venv`` and ``make test``
    there; record the figures under ``key``."""
    import xml.etree.ElementTree as ElementTree

    with tempfile.TemporaryDirectory(prefix="course-suite-") as folder:
        clone, install_seconds, installer = _clone_and_install(folder, source)
        report = Path(folder) / "junit.xml"
        environment = {**os.environ, "PYTEST_ADDOPTS": f"--junitxml={report}"}
        started = time.perf_counter()
        test = subprocess.run(["make", "test"], cwd=clone, env=environment, capture_output=True, text=True)
        test_seconds = time.perf_counter() - started
        if test.returncode:
            raise SetupFactsError(f"`make test` failed in the fresh clone:\n{test.stdout[-3000:]}{test.stderr[-1000:]}")
        xml = report.read_text(encoding="utf-8")
        workers = re.search(r"-n (\S+)", test.stdout)
    suite = next(ElementTree.fromstring(xml).iter("testsuite"))
    parts = breakdown(xml)
    pytest_seconds = float(suite.get("time", 0))
    # make test runs ruff, then pytest: what the JUnit report does not time is ruff, pytest's start-up and the
    # start of its worker processes
    parts["lint"] = round(test_seconds - pytest_seconds, 1)
    values = {
        "install_seconds": round(install_seconds, 1),
        "installer": installer,
        "test_seconds": round(test_seconds, 1),
        "pytest_seconds": round(pytest_seconds, 1),
        "tests": int(suite.get("tests", 0)),
        "workers": workers.group(1) if workers else "1",
        "parts": parts,
        "machine": _machine(),
        "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
    }
    _record(key, values)
    return values


def measure_colab() -> dict[str, Any]:
    """Time ``tools/test_colab.sh`` (``make test-colab`` once .venv exists) in this checkout.

    Raises:
        SetupFactsError: it failed; nothing is recorded.
    """
    started = time.perf_counter()
    done = subprocess.run(["bash", "tools/test_colab.sh"], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode:
        raise SetupFactsError(f"tools/test_colab.sh failed:\n{done.stdout[-3000:]}{done.stderr[-1000:]}")
    values = {"seconds": round(seconds, 1), "machine": _machine(), "date": datetime.date.today().isoformat()}
    _record("colab", values)
    return values


def _pip_without_configuration() -> dict[str, str]:
    """The environment for pip with none of this machine's pip settings (config files, ``PIP_*`` variables): what
    a learner's pip sees, PyPI and the indexes named on its command line."""
    environment = {key: value for key, value in os.environ.items() if not key.startswith("PIP_")}
    return {**environment, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def measure_torch_build(pin: str, index_options: list[str], folder: Path) -> dict[str, Any]:
    """Download ``pin`` with its dependencies into ``folder``/wheels (pip, from ``index_options`` only), install
    them into a fresh venv ``folder``/venv from there, and measure: bytes and files downloaded, the disk the
    install added to the empty venv, the torch version and how many of NVIDIA's packages came with it."""
    wheels, venv = folder / "wheels", folder / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    empty = du_bytes(venv)
    pip = [str(venv / "bin" / "python"), "-m", "pip"]
    environment = _pip_without_configuration()
    for command in (
        [*pip, "download", "-q", "-d", str(wheels), *index_options, pin],
        [*pip, "install", "-q", "--no-compile", "--no-index", "--find-links", str(wheels), pin],
    ):
        done = subprocess.run(command, env=environment, capture_output=True, text=True)
        if done.returncode:
            raise SetupFactsError(f"{' '.join(command[2:5])} failed for {pin}: {done.stderr[-2000:]}")
    files = [path for path in wheels.iterdir() if path.is_file()]
    version = subprocess.run(
        [pip[0], "-c", "import importlib.metadata as m; print(m.version('torch'))"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    return {
        "version": version,
        "download_bytes": sum(path.stat().st_size for path in files),
        "files": len(files),
        "nvidia_packages": sum(path.name.lower().startswith("nvidia_") for path in files),
        "installed_bytes": du_bytes(venv) - empty,
    }


def measure_torch(cpu_from: Path | None = None) -> dict[str, Any]:
    """Both torch builds of the pin, each measured by :func:`measure_torch_build` in a temporary folder (deleted
    afterwards): the CPU build from PyTorch's CPU index (or from ``cpu_from``, a folder holding its wheel, with
    PyPI for the dependencies), and PyPI's build, which on Linux is the CUDA build."""
    pin = torch_pin()
    if cpu_from is not None and not any(cpu_from.glob("torch-*+cpu-*.whl")):
        raise SetupFactsError(f"--cpu-from {cpu_from} holds no torch-*+cpu-*.whl.")
    cpu_source = ["--index-url", CPU_INDEX, "--extra-index-url", PYPI]
    if cpu_from is not None:
        cpu_source = ["--index-url", PYPI, "--find-links", str(cpu_from)]
    values: dict[str, Any] = {}
    for build, options, wanted in (("cpu", cpu_source, f"{pin}+cpu"), ("cuda", ["--index-url", PYPI], pin)):
        with tempfile.TemporaryDirectory(prefix=f"course-torch-{build}-") as folder:
            values[build] = measure_torch_build(wanted, options, Path(folder))
    if values["cuda"]["version"].endswith("+cpu") or not values["cpu"]["version"].endswith("+cpu"):
        raise SetupFactsError(f"the builds came out wrong: {values['cpu']['version']}, {values['cuda']['version']}")
    values.update(
        {
            "platform": f"{platform.system()} {platform.machine()}",
            "python": ".".join(platform.python_version_tuple()[:2]),
            "date": datetime.date.today().isoformat(),
            "cpu_from": "PyTorch's CPU index" if cpu_from is None else "a local copy",
        }
    )
    _record("torch", values)
    return values


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "mode",
        nargs="?",
        choices=(
            "write",
            "measure-install",
            "measure-test",
            "measure-suite",
            "record-test",
            "measure-torch",
            "measure-colab",
        ),
        default="write",
    )
    parser.add_argument("--seconds", type=float, help="record-test: how long the passing `make test` took")
    parser.add_argument("--cpu-from", type=Path, help="measure-torch: a folder with the CPU wheel of the pin")
    parser.add_argument("--check", action="store_true", help="only report whether the docs/setup.md block is current")
    parser.add_argument(
        "--packages-from",
        default="pip's configured index",
        help="where `make venv` got its packages, said next to the time (e.g. 'a local package mirror')",
    )
    options = parser.parse_args(argv)
    try:
        if options.check:
            text = PAGE.read_text(encoding="utf-8")
            if with_block(text, setup_block()) != text:
                print("docs/setup.md: the set-up facts are stale; run `python -m tools.setup_facts`.", file=sys.stderr)
                return 1
            print("docs/setup.md: the set-up facts match docs/setup_facts.json.")
            return 0
        if options.mode == "measure-install":
            if shutil.which("make") is None:
                raise SetupFactsError("`make` is not installed.")
            print(measure_install(options.packages_from))
        elif options.mode == "measure-test":
            print(measure_test())
        elif options.mode == "measure-suite":
            print(json.dumps(measure_suite(), indent=2))
        elif options.mode == "measure-colab":
            print(measure_colab())
        elif options.mode == "measure-torch":
            print(json.dumps(measure_torch(options.cpu_from), indent=2))
        elif options.mode == "record-test":
            if options.seconds is None:
                raise SetupFactsError("record-test needs --seconds S: how long the passing `make test` took.")
            print(record_test(options.seconds))
        write_readme()
    except SetupFactsError as error:
        print(f"setup_facts: {error}", file=sys.stderr)
        return 1
    print(f"docs/setup.md: set-up facts written from {FACTS.relative_to(ROOT)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
