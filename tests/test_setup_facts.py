"""The README tells a newcomer what the first install costs (measured, from docs/setup_facts.json, never typed),
says one thing about the Python version everywhere, and links its documents instead of naming them."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent
from tools import setup_facts  # noqa: E402

README = (ROOT / "README.md").read_text(encoding="utf-8")
SETUP = (ROOT / "docs" / "setup.md").read_text(encoding="utf-8")  # the set-up page the README links


def test_the_readme_block_is_what_the_measured_file_gives() -> None:
    block = SETUP.split(setup_facts.START, 1)[1].split(setup_facts.END, 1)[0].strip()
    assert block == setup_facts.setup_block(), "stale: run `python -m tools.setup_facts`"
    facts = setup_facts.load_facts()
    if "install" in facts:
        assert f"{facts['install']['venv_bytes'] / 1e9:.1f} GB" in block


def test_a_figure_not_measured_is_said_to_be_so() -> None:
    empty = setup_facts.setup_block({})
    assert "First install**: not measured yet" in empty and "make test`**: not measured yet" in empty
    measured = setup_facts.setup_block(
        {
            "install": {
                "venv_bytes": 2.4e9,
                "download_bytes": 0.7e9,
                "seconds": 300,
                "machine": "2-core CPU",
                "date": "2026-01-01",
                "python": "3.11.7",
                "packages_from": "PyPI",
            },
            "test": {"seconds": 1015, "machine": "2-core CPU", "date": "2026-01-02"},
        }
    )
    assert "2.4 GB" in measured and "5 minutes" in measured and "17 minutes" in measured


def test_without_markers_the_tool_says_where_the_block_goes(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# no markers\n", encoding="utf-8")
    with pytest.raises(setup_facts.SetupFactsError, match="setup-facts:start"):
        setup_facts.write_readme(readme, {})


def test_one_python_statement_everywhere() -> None:
    """Tested: Python 3.11 (CI and the measured install); Colab runs 3.12. Every file says the same."""
    with open(ROOT / "pyproject.toml", "rb") as handle:
        project = tomllib.load(handle)
    assert project["project"]["requires-python"] == ">=3.11"
    assert project["tool"]["ruff"]["target-version"] == "py311"
    assert re.search(r"(?m)^\s*- python=3\.11$", (ROOT / "environment.yml").read_text(encoding="utf-8"))
    assert "tested together on Python 3.11" in (ROOT / "requirements.txt").read_text(encoding="utf-8")
    assert "**Python 3.11** (the version the course is tested on; Colab runs 3.12)" in SETUP
    assert "You need **Python 3.11**" in README
    guide = (ROOT / "docs" / "workshop.md").read_text(encoding="utf-8")
    assert "Python 3.11 (tested; Colab runs 3.12)" in guide
    for text in (README, SETUP, guide):
        assert not re.search(r"3\.10 (or newer|to 3\.12)", text), "an untested version range"
    facts = setup_facts.load_facts()
    if "install" in facts:
        assert facts["install"]["python"].startswith("3.11."), "the install was measured on another Python"


def test_the_readme_links_its_documents() -> None:
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    documents = ("docs/setup.md", "docs/workshop.md", "docs/authoring.md", "docs/cheatsheet.md", "docs/ladder.md")
    for document in (*documents, "data/README.md"):
        assert document in links, f"{document} is named but not linked"
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, missing


def test_the_readme_fits_a_screen_and_starts_with_the_two_commands() -> None:
    lines = README.splitlines()
    assert len(lines) <= 130, f"README.md has {len(lines)} lines: move details to docs/setup.md"
    first = "\n".join(lines[:40])
    assert "make lab" in first and "make test" in first and "git clone" in first, "the two commands come late"


def test_the_readme_says_which_torch_and_what_to_do_on_windows() -> None:
    assert "https://download.pytorch.org/whl/cpu" in SETUP and "CUDA build" in SETUP
    assert "WSL" in SETUP and ".venv\\Scripts\\python -m pip install -r requirements.txt" in SETUP


def test_a_make_test_timed_elsewhere_is_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    facts, readme = tmp_path / "setup_facts.json", tmp_path / "README.md"
    readme.write_text(f"intro\n{setup_facts.START}\nold\n{setup_facts.END}\nrest\n", encoding="utf-8")
    monkeypatch.setattr(setup_facts, "FACTS", facts)
    monkeypatch.setattr(setup_facts, "PAGE", readme)
    monkeypatch.setattr(setup_facts, "ROOT", tmp_path)
    assert setup_facts.main(["record-test"]) == 1, "no --seconds: refused"
    assert setup_facts.main(["record-test", "--seconds", "0"]) == 1
    assert not facts.exists()
    assert setup_facts.main(["record-test", "--seconds", "1015.4"]) == 0
    assert setup_facts.load_facts(facts)["test"]["seconds"] == 1015.4
    text = readme.read_text(encoding="utf-8")
    assert "**`make test`**: 17 minutes on a" in text and "old" not in text and text.endswith("rest\n")
    assert setup_facts.main(["--check"]) == 0


JUNIT = (
    '<testsuites><testsuite tests="4" time="100.0">'
    '<testcase classname="notebooks.00_start_here.ipynb" name="00_start_here.ipynb" time="16.2" />'
    '<testcase classname="notebooks.06_callback_control.ipynb" name="06_callback_control.ipynb" time="48.0" />'
    '<testcase classname="tests.test_capstone" name="test_a" time="30.5" />'
    '<testcase classname="tests.test_install" name="test_b" time="0.5" />'
    "</testsuite></testsuites>"
)


def test_the_suite_breakdown_reads_files_and_notebooks_from_the_junit_report() -> None:
    parts = setup_facts.breakdown(JUNIT, slowest=1)
    assert parts["notebooks"] == {"00_start_here.ipynb": 16.2, "06_callback_control.ipynb": 48.0}
    assert parts["unit"] == 31.0 and parts["unit_count"] == 2
    assert parts["slowest_files"] == [["test_capstone.py", 30.5]]
    assert parts["files"] == {"test_capstone.py": 30.5, "test_install.py": 0.5}
    with pytest.raises(setup_facts.SetupFactsError, match="JUnit report"):
        setup_facts.breakdown('<testsuites><testsuite tests="0" time="0"></testsuite></testsuites>')


def test_a_lessons_test_folder_keeps_its_files_apart() -> None:
    """tests/lesson_NN/test_answers.py repeats a file name: the times are keyed by the path below tests/."""
    from tools import suite_order

    assert setup_facts._test_file("tests.lesson_07.test_answers") == "lesson_07/test_answers.py"
    assert setup_facts._test_file("tests.lesson_07.test_answers.TestCase") == "lesson_07/test_answers.py"
    assert setup_facts._test_file("tests.test_capstone") == "test_capstone.py"
    assert suite_order.file_key("tests/lesson_07/test_answers.py::test_x[a]") == "lesson_07/test_answers.py"
    assert suite_order.file_key("notebooks/05_callback_events.ipynb::05_callback_events.ipynb") == (
        "05_callback_events.ipynb"
    )


def test_the_block_gives_the_fresh_clone_total_and_where_it_goes() -> None:
    parts = {**setup_facts.breakdown(JUNIT), "lint": 3.0}
    suite = {
        "install_seconds": 58.0,
        "installer": "uv",
        "test_seconds": 104.0,
        "pytest_seconds": 101.0,
        "tests": 4,
        "workers": "2",
        "parts": parts,
        "machine": "2-core CPU",
        "date": "2026-01-03",
    }
    block = setup_facts.setup_block({"suite": suite})
    text = " ".join(block.split())
    assert "fresh clone**: 162 s" in text and "`make venv` 58 s (with uv)" in text
    assert "fresh clone**: 162 s" in block
    assert "| notebooks (nbmake) | 2 | 64 |" in block and "`06_callback_control.ipynb` | | 48 |" in block
    assert "| unit tests (`tests/`) | 2 | 31 |" in block


def test_make_test_hands_out_the_longest_files_first(tmp_path: Path) -> None:
    from tools import suite_order

    facts = tmp_path / "facts.json"
    parts = {"files": {"test_b.py": 50.0}, "notebooks": {"10_a.ipynb": 90.0}}
    facts.write_text(json.dumps({"suite": {"parts": parts}}), encoding="utf-8")
    seconds = suite_order.measured_seconds(facts)
    assert seconds == {"test_b.py": 50.0, "10_a.ipynb": 90.0} and suite_order.measured_seconds(tmp_path / "no") == {}
    names = ["tests/test_c.py::x", "tests/test_b.py::one", "tests/test_b.py::two", "notebooks/10_a.ipynb::10_a.ipynb"]
    items = [SimpleNamespace(nodeid=name) for name in [*names, "tests/test_d.py::y"]]
    suite_order.longest_first(items, seconds)
    assert [item.nodeid for item in items] == [names[3], names[1], names[2], names[0], "tests/test_d.py::y"]


def test_the_torch_line_gives_both_builds_measured() -> None:
    facts = setup_facts.load_facts()
    assert "torch" in facts, "run python -m tools.setup_facts measure-torch"
    torch = facts["torch"]
    assert torch["cpu"]["version"].endswith("+cpu") and not torch["cuda"]["version"].endswith("+cpu")
    assert torch["cuda"]["download_bytes"] > 5 * torch["cpu"]["download_bytes"] and torch["cuda"]["nvidia_packages"]
    line = " ".join(setup_facts.torch_line(torch).split())
    assert f"downloads {torch['cpu']['download_bytes'] / 1e9:.2f} GB" in line
    assert f"downloads {torch['cuda']['download_bytes'] / 1e9:.2f} GB" in line
    assert f"takes {torch['cuda']['installed_bytes'] / 1e9:.2f} GB" in line and "COURSE_TORCH=cpu" in line
    assert " ".join(setup_facts.setup_block().split()).count(line) == 1


def test_the_torch_measurement_downloads_installs_and_measures(tmp_path: Path) -> None:
    """On a folder of one small wheel (no index, no network): what it downloads and what the install adds."""
    import zipfile

    wheels = tmp_path / "offered"
    wheels.mkdir()
    info = "torch-9.9.9+cpu.dist-info"
    with zipfile.ZipFile(wheels / "torch-9.9.9+cpu-py3-none-any.whl", "w") as wheel:
        wheel.writestr("torch/__init__.py", "VALUE = 1\n" * 1000)
        wheel.writestr(f"{info}/METADATA", "Metadata-Version: 2.1\nName: torch\nVersion: 9.9.9+cpu\n")
        wheel.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        wheel.writestr(f"{info}/RECORD", "")
    measured = setup_facts.measure_torch_build(
        "torch==9.9.9+cpu", ["--no-index", "--find-links", str(wheels)], tmp_path / "build"
    )
    assert measured["version"] == "9.9.9+cpu" and measured["files"] == 1 and measured["nvidia_packages"] == 0
    assert measured["download_bytes"] == (wheels / "torch-9.9.9+cpu-py3-none-any.whl").stat().st_size
    assert 10_000 <= measured["installed_bytes"] < 1_000_000, measured


def test_a_participant_copys_block_never_shows_the_full_courses_suite() -> None:
    facts = setup_facts.load_facts()
    block = setup_facts.setup_block({**facts, "participant_suite": None}, suite_key=setup_facts.PARTICIPANT_SUITE)
    assert "not measured yet for this copy" in block
    if "suite" in facts:
        assert f"{facts['suite']['tests']} tests" not in block


def test_the_simulated_colab_time_is_given_for_the_course_not_for_a_copy() -> None:
    colab = {"seconds": 486.0, "machine": "2-core CPU", "date": "2026-12-03"}
    block = " ".join(setup_facts.setup_block({"colab": colab}).split())
    assert "**`make test-colab`** (the simulated Colab, which CI runs after `make test`): 8 minutes" in block
    copy = setup_facts.setup_block({"colab": colab}, suite_key=setup_facts.PARTICIPANT_SUITE)
    assert "test-colab" not in copy


def test_the_readme_describes_every_step_of_ci() -> None:
    """Each `make ...` line of .ci/run is named in the set-up page's sentence on it, in the same order."""
    steps = re.findall(r"(?m)^(make [^\n#]+?)\s*$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    assert "make test-colab" in steps and any("LADDER=ends" in step for step in steps), steps
    sentence = " ".join(SETUP.split("`.ci/run` calls", 1)[1].split("\n\n", 1)[0].split())
    found = [sentence.find(f"`{step}`") for step in steps]
    assert -1 not in found and found == sorted(found), list(zip(steps, found, strict=True))


def test_the_readme_says_what_the_first_make_lab_does_for_a_newcomer() -> None:
    text = " ".join(SETUP.split("## Your laptop", 1)[1].split("\n## ", 1)[0].split())
    for said in (
        "make lab PYTHON=python3.11",
        "xcode-select --install",
        "--allow-root",
        "COURSE_TORCH=cpu",
        "no `nvidia-smi`, no `/proc/driver/nvidia`",
        "collapsed",
    ):
        assert said in text, said
    assert SETUP.index("What the first `make lab` does") < SETUP.index("## Which torch"), "the torch note comes late"


def test_every_source_named_in_chinese_has_an_english_gloss() -> None:
    section = README.split("\n## Sources\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| **")]
    named = [row for row in rows if re.search(r'"[^"]*[\u4e00-\u9fff][^"]*"', row)]
    assert named, "no source is named in Chinese: the test has nothing to check"
    for row in named:
        assert re.search(r'"[^"]*[\u4e00-\u9fff][^"]*" \("[A-Za-z][ -~]+"\)', row), row
