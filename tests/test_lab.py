"""tools/lab.py (``make lab``): --allow-root exactly when run as root, and the course's JupyterLab settings, which
switch the news pop-up off, reach JupyterLab's settings server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
from tools import lab  # noqa: E402

NOTIFICATION = "@jupyterlab/apputils-extension:notification"


def test_allow_root_is_passed_only_as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "--allow-root" in lab.command("jupyter", root=True)
    assert "--allow-root" not in lab.command("jupyter", root=False)
    plain = ["jupyter", "lab", "--notebook-dir=notebooks", "--port=8890"]
    assert lab.command("jupyter", False, ["--port=8890"]) == plain
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert lab.is_root()
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert not lab.is_root()


def _printed(prefix: list[str] | None = None) -> str:
    done = subprocess.run(
        [*(prefix or []), sys.executable, "-m", "tools.lab", "--print"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def test_the_command_make_lab_runs_matches_the_user() -> None:
    """In a fresh process as this user; and, when this is root and setpriv exists, as the user nobody too."""
    shown = _printed()
    assert f"{Path(sys.executable).parent / 'jupyter'} lab --notebook-dir=notebooks" in shown
    assert ("--allow-root" in shown) == (os.geteuid() == 0)
    assert shown.startswith(f"JUPYTER_CONFIG_PATH={lab.SETTINGS}")
    setpriv = shutil.which("setpriv")
    nobody = [setpriv or "setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    # nobody can run it only where the course is readable by all (not in a private temporary folder)
    if (
        os.geteuid() == 0
        and setpriv
        and subprocess.run([*nobody, "test", "-r", str(lab.ROOT / "tools" / "lab.py")]).returncode == 0
    ):
        as_nobody = _printed(nobody)
        assert "--notebook-dir=notebooks" in as_nobody and "--allow-root" not in as_nobody


def test_make_lab_runs_the_tool() -> None:
    shown = subprocess.run(
        ["make", "-n", "--no-print-directory", "lab", "LAB_ARGS=--port=8890"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert ".venv/bin/python -m tools.lab --port=8890" in shown.splitlines(), shown


def test_the_settings_folder_comes_first_and_keeps_what_was_there() -> None:
    env = lab.environment({"JUPYTER_CONFIG_PATH": "/etc/mine"})
    assert env["JUPYTER_CONFIG_PATH"] == os.pathsep.join([str(lab.SETTINGS), "/etc/mine"])
    assert lab.environment({})["JUPYTER_CONFIG_PATH"] == str(lab.SETTINGS)


def test_the_news_prompt_is_answered_never_in_the_courses_settings() -> None:
    """The override names a real setting of the installed JupyterLab with a value its schema allows, and
    jupyterlab_server reads it from the folder make lab puts on JUPYTER_CONFIG_PATH (and not without it)."""
    import jupyterlab

    overrides = json.loads((lab.SETTINGS / "labconfig" / "default_setting_overrides.json").read_text())
    wanted = overrides[NOTIFICATION]
    assert wanted["fetchNews"] == "false"
    schemas = Path(sys.prefix) / "share" / "jupyter" / "lab" / "schemas"
    schema = json.loads((schemas / "@jupyterlab" / "apputils-extension" / "notification.json").read_text())
    allowed = {option["const"] for option in schema["properties"]["fetchNews"]["oneOf"]}
    assert "false" in allowed and set(wanted) <= set(schema["properties"]), (jupyterlab.__version__, allowed)
    script = (
        "import json\n"
        "from jupyterlab_server.settings_utils import _get_overrides\n"
        "print(json.dumps(_get_overrides('/nonexistent')[0]))\n"
    )
    env = {key: value for key, value in os.environ.items() if not key.startswith("JUPYTER")}
    read = subprocess.run(
        [sys.executable, "-c", script], env=lab.environment(env), capture_output=True, text=True, check=True
    )
    assert json.loads(read.stdout).get(NOTIFICATION) == wanted
    plain = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert NOTIFICATION not in json.loads(plain.stdout), "the setting came from elsewhere: the test shows nothing"
