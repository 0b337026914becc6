"""tools/install.py: pip's settings reach uv, and bad input says what to do."""

from __future__ import annotations

import sys
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


def test_both_installers_run_the_same_three_steps() -> None:
    assert install.steps() == [
        ["-r", "requirements.txt", "-c", "constraints.txt"],
        ["--no-deps", "-r", "requirements-nodeps.txt"],
        ["--no-deps", "-e", "."],
    ]


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
