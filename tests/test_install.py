"""tools/install.py: pip's settings reach uv, the torch build fits the machine (CPU without an NVIDIA driver),
bad input says what to do; tools/python_version.py stops ``make venv`` on an untested Python before ``.venv``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
from tools import install  # noqa: E402


def test_pip_settings_become_uv_options(tmp_path: Path) -> None:
    wheels, index = tmp_path / "wheels", tmp_path / "simple"
    wheels.mkdir()
    index.mkdir()
    config = "\n".join(
        [
            f":env:.find-links='{wheels}'",
            f"global.find-links='{wheels}'",  # the same folder twice: once
            f"global.extra-index-url='file://{index} file://{tmp_path}/missing https://mirror.example/simple'",
            "global.cert='/etc/ssl/certs/ca-certificates.crt'",  # not an install location: left to uv's defaults
            f"global.constraint='{tmp_path}/absent.txt'",
            "install.index-url='https://pypi.example/simple'",
        ]
    )
    assert install.parse_pip_config(config) == [
        "--find-links",
        str(wheels),
        "--extra-index-url",
        f"file://{index}",
        "--extra-index-url",
        "https://mirror.example/simple",
        "--index-url",
        "https://pypi.example/simple",
    ]


def test_both_installers_run_the_same_four_steps_the_pinned_torch_first() -> None:
    pin = install.torch_pin()
    assert pin.startswith("torch==") and pin in (ROOT / "requirements.txt").read_text().split()
    cpu = ["--extra-index-url", install.CPU_INDEX]
    assert install.steps(cpu) == [
        [pin, "-c", "constraints.txt", *cpu],
        ["-r", "requirements.txt", "-c", "constraints.txt"],
        ["--no-deps", "-r", "requirements-nodeps.txt"],
        ["--no-deps", "-e", "."],
    ]
    assert install.steps()[0] == [pin, "-c", "constraints.txt"]


def _fake_driver_command(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    command = folder / "nvidia-smi"
    command.write_text("#!/bin/sh\necho 'NVIDIA-SMI 580.00'\n")
    command.chmod(0o755)
    return folder


def test_an_nvidia_driver_is_seen_by_its_command_or_its_kernel_folder(tmp_path: Path) -> None:
    """The real ``shutil.which`` on a PATH with and without a (fake) nvidia-smi; a folder in place of /proc's."""
    absent = tmp_path / "absent"
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    with_command = _fake_driver_command(tmp_path / "bin")
    assert install.nvidia_driver(lambda name: shutil.which(name, path=str(empty)), absent) is None
    found = install.nvidia_driver(lambda name: shutil.which(name, path=str(with_command)), absent)
    assert found == f"nvidia-smi at {with_command / 'nvidia-smi'}"
    proc = tmp_path / "proc-driver-nvidia"
    proc.mkdir()
    assert install.nvidia_driver(lambda name: shutil.which(name, path=str(empty)), proc) == str(proc)


def test_linux_without_a_driver_takes_the_cpu_build_with_one_the_cuda_build() -> None:
    none, present = (lambda: None), (lambda: "nvidia-smi at /usr/bin/nvidia-smi")
    cpu = install.choose_torch({}, "Linux", none)
    assert (cpu.build, cpu.index) == ("cpu", install.CPU_INDEX)
    assert "no NVIDIA driver" in cpu.reason and "nvidia-smi" in cpu.reason and "/proc/driver/nvidia" in cpu.reason
    cuda = install.choose_torch({}, "Linux", present)
    assert (cuda.build, cuda.index) == ("cuda", None) and "/usr/bin/nvidia-smi" in cuda.reason
    mac = install.choose_torch({}, "Darwin", present)
    assert (mac.build, mac.index) == ("pypi", None) and "on macOS PyPI's torch is the CPU build" in mac.reason
    said = install.describe(cpu)
    assert said.startswith("torch: the CPU build, because this Linux machine shows no NVIDIA driver")
    assert "COURSE_TORCH=cuda" in said, "the line says how to choose otherwise"


def test_course_torch_overrides_the_choice_either_way() -> None:
    none, present = (lambda: None), (lambda: "/proc/driver/nvidia")
    forced_cpu = install.choose_torch({"COURSE_TORCH": "cpu"}, "Linux", present)
    assert (forced_cpu.build, forced_cpu.index, forced_cpu.overridden) == ("cpu", install.CPU_INDEX, True)
    forced_cuda = install.choose_torch({"COURSE_TORCH": "cuda"}, "Linux", none)
    assert (forced_cuda.build, forced_cuda.index) == ("cuda", None)
    mirror = "https://mirror.example/whl/cu126"
    assert install.choose_torch({"COURSE_TORCH": mirror}, "Linux", none).index == mirror
    assert "COURSE_TORCH=cuda" in install.describe(forced_cuda)
    with pytest.raises(install.InstallError, match="cpu, cuda or the URL of a package index"):
        install.choose_torch({"COURSE_TORCH": "gpu"}, "Linux", none)


def test_the_choice_is_printed_with_its_reason_for_a_faked_absence_and_presence_of_the_driver(tmp_path: Path) -> None:
    """``python -m tools.install --torch-choice`` in a fresh process: PATH without nvidia-smi, then with a fake one."""
    if install.DRIVER_PATH.exists():
        pytest.skip("this machine has /proc/driver/nvidia: the driver cannot be faked absent")
    bare = tmp_path / "bare"  # a PATH with nothing on it: python is started by its full path
    bare.mkdir()
    base = {key: value for key, value in os.environ.items() if key != "COURSE_TORCH"}

    def said(path: Path, **extra: str) -> str:
        command = [sys.executable, "-m", "tools.install", "--torch-choice"]
        env = {**base, "PATH": str(path), **extra}
        return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=True).stdout

    assert said(bare).startswith("torch: the CPU build, because this Linux machine shows no NVIDIA driver")
    with_driver = _fake_driver_command(tmp_path / "driver-bin")
    assert said(with_driver).startswith("torch: PyPI's build, the CUDA build with NVIDIA's CUDA libraries, because")
    assert "nvidia-smi at " in said(with_driver)
    assert said(with_driver, COURSE_TORCH="cpu").startswith("torch: the CPU build, because COURSE_TORCH=cpu")
    assert said(bare, COURSE_TORCH="cuda").startswith("torch: PyPI's build, the CUDA build")


def _wheel(folder: Path, version: str) -> Path:
    """A minimal wheel named torch (nothing in it but its metadata), for pip to find in a folder."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"torch-{version}-py3-none-any.whl"
    info = f"torch-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")
    return path


@pytest.mark.parametrize("offered, added", [("9.9.9+cpu", False), ("9.9.9", True)])
def test_the_cpu_index_is_added_only_when_pips_own_settings_lack_the_cpu_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, offered: str, added: bool
) -> None:
    """pip's real dry run on a folder (find-links, no index) that holds a CPU or a plain build of the pin: with the
    CPU build there (as on a machine with a local wheel), no index is needed; without it, PyTorch's CPU index is."""
    _wheel(tmp_path / "wheels", offered)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "wheels"))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    found = install.offered_torch(sys.executable, "torch==9.9.9")
    assert found == offered
    choice = install.choose_torch({}, "Linux", lambda: None)
    asked: list[str] = []
    options, source = install.torch_options(choice, lambda: found, lambda url: asked.append(url))
    if added:
        assert options == ["--extra-index-url", install.CPU_INDEX] and asked == [install.CPU_INDEX + "/torch/"]
        assert source == f"from {install.CPU_INDEX}"
    else:
        assert options == [] and not asked and "torch 9.9.9+cpu" in source


def test_an_unreachable_cpu_index_stops_the_install_before_the_cuda_build_is_downloaded() -> None:
    choice = install.choose_torch({}, "Linux", lambda: None)
    with pytest.raises(install.InstallError, match=r"cannot be reached \(no DNS\)[\s\S]*COURSE_TORCH=cuda"):
        install.torch_options(choice, lambda: None, lambda url: "no DNS")
    assert install.torch_options(install.choose_torch({}, "Linux", lambda: "x"), lambda: None) == (
        [],
        "from the installer's own settings",
    )


def test_the_install_reports_the_torch_build_it_left() -> None:
    """The course's own .venv holds the CPU build (what make test runs); the report says so."""
    said = install.installed_torch(sys.executable)
    version = subprocess.run(
        [sys.executable, "-c", "import torch; print(torch.__version__)"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert said.startswith(f"torch {version}")
    assert said.endswith("(the CPU build)") == version.endswith("+cpu")


def test_an_unknown_installer_is_refused_with_the_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COURSE_INSTALLER", "conda")
    with pytest.raises(install.InstallError, match="uv, pip or unset"):
        install.main([sys.executable])


def test_a_missing_interpreter_says_to_create_the_venv(tmp_path: Path) -> None:
    with pytest.raises(install.InstallError, match="create the venv first"):
        install.main([str(tmp_path / "python")])


def test_bytecode_is_written_for_the_modules_imported_even_when_the_environment_says_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("course_warm_a", "course_warm_b"):
        (tmp_path / f"{name}.py").write_text("VALUE = 1\n")
    (tmp_path / "course_warm_unused.py").write_text("VALUE = 2\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    install.write_bytecode(sys.executable, (("course_warm_a",), ("course_warm_b",)))
    written = sorted(path.name.split(".")[0] for path in (tmp_path / "__pycache__").glob("*.pyc"))
    assert written == ["course_warm_a", "course_warm_b"]


def test_a_module_that_does_not_import_fails_the_install_with_what_python_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "course_warm_broken.py").write_text("raise RuntimeError('a broken wheel')\n")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    with pytest.raises(
        install.InstallError, match=r"importing them failed \(course_warm_broken\)[\s\S]*a broken wheel"
    ):
        install.write_bytecode(sys.executable, (("json",), ("course_warm_broken",)))


def test_the_bytecode_groups_name_modules_the_course_environment_has() -> None:
    import importlib.util

    missing = [name for group in install.BYTECODE_GROUPS for name in group if importlib.util.find_spec(name) is None]
    assert not missing and len(install.BYTECODE_GROUPS) == 2, missing


PYENV = Path.home() / ".pyenv" / "versions"


def test_the_python_check_names_the_fix_for_an_old_and_a_new_python() -> None:
    from tools import python_version

    assert python_version.problem((3, 11, 7), "python3") == ""
    old = python_version.problem((3, 10, 13), "python3")
    assert old.startswith("make: python3 is Python 3.10.13; the course needs Python 3.11")
    for fix in ("make lab PYTHON=python3.11", "apt install python3.11", "brew install python@3.11", "WSL"):
        assert fix in old, fix
    assert "UNTESTED_PYTHON" not in old and python_version.problem((3, 10, 13), "python3", True), "3.10 never goes"
    new = python_version.problem((3, 13, 0), "python3")
    assert "tested on Python 3.11 only" in new and "make lab UNTESTED_PYTHON=1" in new
    assert python_version.problem((3, 13, 0), "python3", allow_untested=True) == ""


def _other_pythons() -> list[Path]:
    found = sorted(PYENV.glob("3.*/bin/python3")) if PYENV.is_dir() else []
    return [path for path in found if not path.parent.parent.name.startswith("3.11.")]


@pytest.mark.skipif(not _other_pythons(), reason="no Python other than 3.11 on this machine (pyenv)")
@pytest.mark.parametrize("python", _other_pythons(), ids=lambda path: path.parent.parent.name)
def test_make_venv_stops_before_creating_venv_with_an_untested_python(tmp_path: Path, python: Path) -> None:
    """The real interpreter (from pyenv, 3.6 to 3.13): make says which Python it found and how to get 3.11, and no
    .venv is made. The check itself runs on each of them."""
    venv = tmp_path / ".venv"
    done = subprocess.run(
        ["make", "--no-print-directory", "venv", f"VENV={venv}", f"PYTHON={python}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    version = python.parent.parent.name
    assert done.returncode != 0
    assert f"make: {python} is Python {version}" in done.stderr and "make lab PYTHON=python3.11" in done.stderr
    assert not venv.exists(), "a .venv was made with an untested Python"


def test_make_venv_says_when_python_is_missing(tmp_path: Path) -> None:
    venv = tmp_path / ".venv"
    done = subprocess.run(
        ["make", "--no-print-directory", "venv", f"VENV={venv}", f"PYTHON={tmp_path}/python3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0 and "is not installed: the course needs Python 3.11" in done.stdout
    assert not venv.exists()


def test_make_checks_the_python_before_it_creates_the_venv() -> None:
    shown = subprocess.run(
        ["make", "-n", "--no-print-directory", "venv", "VENV=/nonexistent/.venv", "PYTHON=python3.12"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    check = shown.index("python3.12 -m tools.python_version --name python3.12")
    assert check < shown.index("python3.12 -m venv /nonexistent/.venv") < shown.index("-m tools.install")
    untested = subprocess.run(
        ["make", "-n", "--no-print-directory", "venv", "VENV=/nonexistent/.venv", "UNTESTED_PYTHON=1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "-m tools.python_version --name python3 --allow-untested" in untested
