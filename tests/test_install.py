"""tools/install.py: pip's settings reach uv, and bad input says what to do."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import install  # noqa: E402


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
