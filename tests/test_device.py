"""Profile selection with faked hardware, the environment override, and seeding."""

from __future__ import annotations

import pytest
import torch

from helpers.device import PROFILE_ENV, CourseProfileError, Hardware, course_profile, seed_everything

CPU = Hardware(
    cuda=False,
    mps=False,
    gpu_name=None,
    gpu_memory_gib=None,
    bf16_supported=False,
    compute_capability=None,
    cpu_cores=2,
)
A100 = Hardware(
    cuda=True,
    mps=False,
    gpu_name="NVIDIA A100",
    gpu_memory_gib=40.0,
    bf16_supported=True,
    compute_capability=(8, 0),
    cpu_cores=8,
)
T4 = Hardware(
    cuda=True,
    mps=False,
    gpu_name="Tesla T4",
    gpu_memory_gib=15.0,
    bf16_supported=False,
    compute_capability=(7, 5),
    cpu_cores=2,
)
MAC = Hardware(
    cuda=False, mps=True, gpu_name=None, gpu_memory_gib=None, bf16_supported=False, compute_capability=None, cpu_cores=8
)


@pytest.fixture(autouse=True)
def no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)


@pytest.mark.rule(
    lesson="00",
    section="Recap",
    text="`helpers.setup_notebook()` seeds everything and picks a profile from the hardware",
    covers=["a CPU", "an A100 (bf16)", "a T4 (fp16)", "Apple silicon (mps)"],
)
def test_hardware_picks_the_profile() -> None:
    assert course_profile(hardware=CPU).name == "cpu"
    assert course_profile(hardware=A100).precision == "bf16"
    assert course_profile(hardware=T4).precision == "fp16"
    assert course_profile(hardware=MAC).device == "mps"
    assert course_profile(hardware=CPU).precision_kwargs() == {"bf16": False, "fp16": False, "use_cpu": True}
    assert course_profile(hardware=A100).train_examples is None  # the full training split on a GPU
    assert A100.tf32_supported and not T4.tf32_supported


@pytest.mark.rule(
    lesson="00",
    section="Recap",
    text="`COURSE_PROFILE` overrides it, and a profile the machine cannot run is refused with a clear error.",
    covers=["COURSE_PROFILE=cpu on an A100"],
)
def test_environment_variable_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PROFILE_ENV, "cpu")
    assert course_profile(hardware=A100).name == "cpu"


@pytest.mark.rule(
    lesson="00",
    section="Recap",
    text="`COURSE_PROFILE` overrides it, and a profile the machine cannot run is refused with a clear error.",
    covers=["cuda on a CPU", "mps on a CPU", "an unknown name as argument and as COURSE_PROFILE"],
)
def test_unknown_profile_and_missing_hardware_are_clear(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(CourseProfileError, match="Choose one of"):
        course_profile("tpu", hardware=CPU)
    with pytest.raises(CourseProfileError, match="needs an NVIDIA GPU"):
        course_profile("cuda", hardware=CPU)
    with pytest.raises(CourseProfileError, match="needs Apple silicon"):
        course_profile("mps", hardware=CPU)
    monkeypatch.setenv(PROFILE_ENV, "gpu")
    with pytest.raises(CourseProfileError, match="Unknown course profile 'gpu'"):
        course_profile(hardware=CPU)


@pytest.mark.rule(
    lesson="00",
    section="Recap",
    text="`helpers.setup_notebook()` seeds everything and picks a profile from the hardware",
    covers=["torch draws repeat after seeding", "a negative seed refused"],
)
def test_seed_everything_repeats_random_draws() -> None:
    seed_everything(3)
    first = torch.rand(4)
    seed_everything(3)
    assert torch.equal(first, torch.rand(4))
    with pytest.raises(ValueError, match="non-negative int"):
        seed_everything(-1)


def test_only_setup_notebook_decides_the_profile() -> None:
    """One course context: helpers.setup_notebook is the only caller of course_profile() in the course's code
    (helpers, tools, notebooks); everything else reads helpers.active_profile()."""
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    calls = []
    sources = [*root.glob("helpers/**/*.py"), *root.glob("tools/**/*.py")]
    for path in sources:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\bcourse_profile\(", line) and not line.lstrip().startswith("def course_profile"):
                calls.append(f"{path.relative_to(root)}:{number}")
    for path in root.glob("notebooks/[0-9][0-9]_*.ipynb"):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
        calls += [f"{path.name}" for _ in re.findall(r"\bcourse_profile\(", code)]
    assert len(calls) == 1 and calls[0].startswith("helpers/__init__.py"), calls


def test_the_set_up_freezes_the_libraries_for_the_collections_train_starts_with() -> None:
    """Each Trainer.train() starts with a full gc.collect(); frozen objects are not walked again."""
    import gc
    import sys

    import helpers

    frozen = helpers.freeze_library_objects()
    assert frozen == gc.get_freeze_count() > 100_000 and "transformers.trainer" in sys.modules
