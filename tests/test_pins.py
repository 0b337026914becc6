"""The pinned releases are one fact: ``requirements.txt`` writes them, the two other pin files agree, and
``course_facts.pins`` reads them for everything else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from course_facts import pins

ROOT = Path(__file__).resolve().parent.parent


def test_pinned_reads_requirements_txt() -> None:
    lines = (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
    (line,) = [line for line in lines if line.startswith("transformers==")]
    assert pins.pinned() == pins.pinned("transformers") == line.split("==")[1]
    assert pins.pinned_minor() == ".".join(pins.pinned().split(".")[:2])
    assert pins.pinned("torch").count(".") == 2 and pins.pinned_minor("torch").count(".") == 1


def test_names_are_compared_as_pip_compares_them() -> None:
    assert pins.pinned("huggingface_hub") == pins.pinned("Huggingface-Hub") == pins.pins()["huggingface-hub"]
    assert pins.normalized("Scikit_Learn[extra]") == "scikit-learn"


def test_an_unpinned_package_says_where_to_pin_it() -> None:
    with pytest.raises(KeyError, match=r"requirements.txt pins no 'no-such-package'.*add the pin there"):
        pins.pinned("no-such-package")


@pytest.mark.parametrize("path", pins.PIN_FILES[1:], ids=lambda path: path.name)
def test_the_other_pin_files_agree_with_requirements_txt(path: Path) -> None:
    """constraints.txt (pip) and environment.yml (conda) pin every package requirements.txt pins, at its version."""
    required, other = pins.pins(pins.REQUIREMENTS), pins.pins(path)
    assert len(required) >= 20
    disagree = {name: (version, other.get(name)) for name, version in required.items() if other.get(name) != version}
    assert disagree == {}, f"{path.name} disagrees with requirements.txt (requirements.txt, {path.name}): {disagree}"


def test_the_readers_of_each_format(tmp_path) -> None:
    environment = tmp_path / "environment.yml"
    environment.write_text("dependencies:\n  - python=3.11\n  - pip:\n      - Torch==2.0.1\n      - peft[x]==0.1.0\n")
    assert pins.pins(environment) == {"torch": "2.0.1", "peft": "0.1.0"}
    twice = tmp_path / "constraints.txt"
    twice.write_text("# a comment: transformers==1.0.0\naccelerate==1.0.0\naccelerate==1.0.0\nnumpy>=2\n")
    assert pins.pins(twice) == {"accelerate": "1.0.0"}  # comments and ranges are not pins; the same pin twice is one
    clash = tmp_path / "clash.txt"  # pins() caches by path: a new file
    clash.write_text("accelerate==1.0.0\naccelerate==1.1.0\n")
    with pytest.raises(ValueError, match="line 2: accelerate is pinned twice, at 1.0.0 and 1.1.0"):
        pins.pins(clash)


def test_release_key_and_minor() -> None:
    assert pins.release_key("5.9.0") < pins.release_key("5.10.0") < pins.release_key("10.0.0")
    assert pins.minor("2.1.0+cpu") == "2.1"
    for bad in ("5.1", "5.1.0rc1", "latest", "v5.1.0"):
        with pytest.raises(ValueError, match="not a final release X.Y.Z"):
            pins.release_key(bad)


def test_the_command_line_prints_a_pin_and_the_offline_settings() -> None:
    def run(*args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "tools.pins", *args]
        return subprocess.run(command, capture_output=True, text=True, cwd=ROOT)

    assert run().stdout.strip() == pins.pinned()
    assert run("torch", "--minor").stdout.strip() == pins.pinned_minor("torch")
    words = run("--offline").stdout.split()
    assert dict(word.split("=", 1) for word in words) == pins.OFFLINE_ENV
    missing = run("no-such-package")
    assert missing.returncode == 1 and "add the pin there" in missing.stderr


def test_the_offline_settings_are_the_ones_this_session_runs_with() -> None:
    """tests/conftest.py sets them from course_facts.pins (make test sets them through the Makefile, from the same)."""
    import os

    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"):
        assert os.environ.get(name) == pins.OFFLINE_ENV[name]
