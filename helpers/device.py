"""Hardware detection, the course profile (the sizes each notebook uses), and seeding.

The same notebook runs on a 2-core CPU, a Colab T4, an A100/H100 or an Apple laptop. ``course_profile``
looks at the hardware and returns the sizes that fit it; the environment variable ``COURSE_PROFILE``
(``cpu``, ``cuda`` or ``mps``) overrides the choice, for example to rehearse the CPU timings on a GPU.
"""

from __future__ import annotations

import os
import platform
import random
from dataclasses import asdict, dataclass, replace
from typing import Any

SEED = 42
"""The course's seed: notebooks, tests and scripts seed with it unless told otherwise."""

PROFILE_ENV = "COURSE_PROFILE"
PROFILE_NAMES = ("cpu", "cuda", "mps")


class CourseProfileError(ValueError):
    """Raised for an unknown profile name or a profile the hardware cannot run."""


@dataclass(frozen=True)
class Hardware:
    """What this machine offers, as far as the course cares."""

    cuda: bool
    mps: bool
    gpu_name: str | None
    gpu_memory_gib: float | None
    bf16_supported: bool
    compute_capability: tuple[int, int] | None
    cpu_cores: int

    @property
    def tf32_supported(self) -> bool:
        """TF32 matmuls exist on NVIDIA Ampere (compute capability 8.0) and newer."""
        return self.compute_capability is not None and self.compute_capability >= (8, 0)


@dataclass(frozen=True)
class CourseProfile:
    """The sizes a notebook uses on this hardware.

    Attributes:
        name: ``cpu``, ``cuda`` or ``mps``.
        device: the torch device string.
        num_layers: encoder layers kept for the real fine-tunes (MiniLM has 6).
        train_examples: training reviews for the real fine-tunes (``None`` = the whole split).
        eval_examples: validation/test reviews for evaluation (``None`` = the whole split).
        max_length: tokens kept per review.
        batch_size: per-device train batch size.
        eval_batch_size: per-device evaluation batch size.
        num_train_epochs: epochs for the real fine-tunes.
        learning_rate: peak learning rate for the real fine-tunes.
        precision: ``fp32``, ``bf16`` or ``fp16``.
        demo_examples: the small slice used by lessons about mechanics (events, flags, schedules).
        demo_layers: encoder layers kept in those mechanics demos.
    """

    name: str
    device: str
    num_layers: int
    train_examples: int | None
    eval_examples: int | None
    max_length: int
    batch_size: int
    eval_batch_size: int
    num_train_epochs: float
    learning_rate: float
    precision: str
    demo_examples: int
    demo_layers: int

    @property
    def on_gpu(self) -> bool:
        """True on CUDA or MPS."""
        return self.device in ("cuda", "mps")

    def precision_kwargs(self) -> dict[str, Any]:
        """The ``TrainingArguments`` keywords for this profile's precision (``bf16``/``fp16``/``use_cpu``)."""
        kwargs: dict[str, Any] = {"bf16": self.precision == "bf16", "fp16": self.precision == "fp16"}
        if self.device == "cpu":
            kwargs["use_cpu"] = True
        return kwargs

    def as_dict(self) -> dict[str, Any]:
        """The profile as a plain dict (for printing and logging)."""
        return asdict(self)


_PROFILES: dict[str, CourseProfile] = {
    # Measured on a 2-core CPU: 6 layers, 2,000 reviews, batch 16, 1 epoch trains in about 50 s and reaches
    # about 0.78 test accuracy. With 4 layers it is faster but stays near 0.57 (the majority class). Validation
    # and test are cut to 500 reviews each so lesson 01 stays within its 90 s budget with the progress table.
    "cpu": CourseProfile(
        name="cpu",
        device="cpu",
        num_layers=6,
        train_examples=2000,
        eval_examples=500,
        max_length=64,
        batch_size=16,
        eval_batch_size=128,
        num_train_epochs=1,
        learning_rate=1e-4,
        precision="fp32",
        demo_examples=64,
        demo_layers=2,
    ),
    "cuda": CourseProfile(
        name="cuda",
        device="cuda",
        num_layers=6,
        train_examples=None,
        eval_examples=None,
        max_length=128,
        batch_size=32,
        eval_batch_size=256,
        num_train_epochs=3,
        learning_rate=5e-5,
        precision="bf16",
        demo_examples=512,
        demo_layers=6,
    ),
    "mps": CourseProfile(
        name="mps",
        device="mps",
        num_layers=6,
        train_examples=4000,
        eval_examples=None,
        max_length=64,
        batch_size=32,
        eval_batch_size=128,
        num_train_epochs=1,
        learning_rate=1e-4,
        precision="fp32",
        demo_examples=256,
        demo_layers=6,
    ),
}


def detect_hardware() -> Hardware:
    """Inspect torch for CUDA and MPS (no side effects)."""
    import torch

    cuda = torch.cuda.is_available()
    mps = bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()
    name = memory = capability = None
    bf16 = False
    if cuda:
        props = torch.cuda.get_device_properties(0)
        name, memory = props.name, round(props.total_memory / 2**30, 1)
        capability = (props.major, props.minor)
        bf16 = bool(torch.cuda.is_bf16_supported())
    return Hardware(
        cuda=cuda,
        mps=mps,
        gpu_name=name,
        gpu_memory_gib=memory,
        bf16_supported=bf16,
        compute_capability=capability,
        cpu_cores=os.cpu_count() or 1,
    )


def course_profile(name: str | None = None, hardware: Hardware | None = None) -> CourseProfile:
    """Pick the profile for this machine.

    Args:
        name: ``cpu``, ``cuda`` or ``mps``; ``None`` reads ``COURSE_PROFILE`` and otherwise picks the
            best the hardware offers.
        hardware: the detected hardware (tests pass a fake one); ``None`` detects it.

    Raises:
        CourseProfileError: the name is unknown, or names hardware this machine does not have.
    """
    hardware = hardware or detect_hardware()
    requested = name if name is not None else os.environ.get(PROFILE_ENV) or None
    if requested is None:
        requested = "cuda" if hardware.cuda else "mps" if hardware.mps else "cpu"
    if not isinstance(requested, str) or requested.lower() not in _PROFILES:
        raise CourseProfileError(
            f"Unknown course profile {requested!r}. Choose one of {PROFILE_NAMES}, or unset {PROFILE_ENV} "
            "to let the course pick from the hardware."
        )
    profile = _PROFILES[requested.lower()]
    if profile.device == "cuda":
        if not hardware.cuda:
            raise CourseProfileError(
                f"Profile 'cuda' needs an NVIDIA GPU and none was found. Use 'cpu' or unset {PROFILE_ENV}."
            )
        if not hardware.bf16_supported:  # T4 and older: fp16 mixed precision instead
            profile = replace(profile, precision="fp16")
    if profile.device == "mps" and not hardware.mps:
        raise CourseProfileError(
            f"Profile 'mps' needs Apple silicon with MPS and none was found. Use 'cpu' or unset {PROFILE_ENV}."
        )
    return profile


def seed_everything(seed: int | None = None) -> int:
    """Seed Python, NumPy and torch (CPU and all GPUs) and return the seed (default: the course's, :data:`SEED`).

    ``transformers.set_seed`` does the same for the libraries; we call it so that one call covers all.
    """
    if seed is None:
        seed = SEED
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}.")
    import numpy as np
    import torch
    from transformers import set_seed

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    set_seed(seed)
    return seed


def versions() -> dict[str, str]:
    """Versions of Python and every course package (``missing`` where not installed).

    On Colab (``google.colab`` imported) JupyterLab and nbmake are left out: Colab runs its own notebook
    front end, and the tests that need nbmake run with ``make test``, not on Colab.
    """
    import sys
    from importlib import metadata

    packages = [
        "transformers",
        "torch",
        "datasets",
        "accelerate",
        "evaluate",
        "scikit-learn",
        "optuna",
        "peft",
        "schedulefree",
        "matplotlib",
        "numpy",
        "safetensors",
        "tokenizers",
        "jupyterlab",
        "nbmake",
    ]
    if "google.colab" in sys.modules:
        packages = [package for package in packages if package not in ("jupyterlab", "nbmake")]
    found = {"python": platform.python_version()}
    for package in packages:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            found[package] = "missing"
    return found


def hardware_summary(hardware: Hardware) -> str:
    """One line that says what this machine has."""
    if hardware.cuda:
        return (
            f"CUDA GPU: {hardware.gpu_name}, {hardware.gpu_memory_gib} GiB, compute capability "
            f"{hardware.compute_capability}, bf16 {'yes' if hardware.bf16_supported else 'no'}"
        )
    if hardware.mps:
        return "Apple GPU (MPS)"
    return f"CPU only, {hardware.cpu_cores} cores"
