"""The GPU bundle (tools/gpu_bundle.py) and its rehearsal here (tools/gpu_rehearse.py).

Two tests build for real and need the package registry for wheels not yet in the bundle's cache
(``~/.cache/course-gpu-bundle``; CI has the registry): the device's bundle for CPython 3.12, whose parts must fit a
call and rebuild the model byte for byte, and the rehearsal, which installs the same versions for this machine's
Python with no network (``unshare -n``) over a stand-in for the device image and imports everything the notebooks
import. The build's downloads are the one network use here; the offline guard of tests/conftest.py is lifted for
them alone (the rehearsal's own steps run in a namespace with no network at all).
"""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import parse_wheel_filename

from helpers.models import local_model_dir
from tools import gpu_bundle, gpu_device, gpu_rehearse

MIB = gpu_bundle.MIB


@pytest.mark.parametrize("size", [0, 1, 3, 4, 5, 4097, 65_537])
def test_pack_and_unpack_are_inverse_for_any_length(size: int) -> None:
    data = random.Random(size).randbytes(size)
    assert gpu_device.unpack(gpu_device.pack(data), size) == data


def test_unpack_refuses_a_blob_of_another_size() -> None:
    with pytest.raises(gpu_device.BundleError, match="rebuild the bundle"):
        gpu_device.unpack(gpu_device.pack(b"12345678"), 9)


def test_the_image_version_is_kept_only_when_it_meets_the_pins_and_requirements() -> None:
    versions = {"older": "5.24.0", "patch": "0.23.3", "newer": "2.4.6", "unknown": "1.0.0", "missing": "1.0.0"}
    versions |= {"narrow": "2.0.0", "torch": "2.13.0"}
    wanted_by = {"narrow": [Requirement("narrow<2.1")]}
    image = {"older": "5.17.0", "patch": "0.23.2", "newer": "2.5.2", "unknown": None, "narrow": "2.5.0"}
    image |= {"torch": "2.11.0"}
    carry, kept = gpu_bundle.choose(versions, wanted_by, image)
    assert carry == {"older": "5.24.0", "missing": "1.0.0", "narrow": "2.0.0"}
    assert set(kept) == {"patch", "newer", "unknown", "torch"}
    assert "checked on the device" in kept["unknown"]


def test_parts_are_as_few_and_as_even_as_the_files_allow(tmp_path) -> None:
    files = {}
    for name, size in {"a.whl": 30, "b.whl": 20, "c.whl": 5}.items():
        (tmp_path / name).write_bytes(b"x" * size)
        files[f"wheels/{name}"] = tmp_path / name
    blob = tmp_path / "model.packed"
    blob.write_bytes(b"m" * 95)
    parts = gpu_bundle.plan(files, blob, capacity=60)
    assert [part.size for part in parts] == [50, 50, 50]  # 150 bytes in three parts of at most 60
    chunks = [name for part in parts for name in part.files if name.startswith("chunks/")]
    assert sum(part.sizes[name] for part in parts for name in part.files if name in chunks) == 95
    with pytest.raises(SystemExit, match="alone exceed a part"):
        gpu_bundle.plan(files, blob, capacity=25)


def test_notebook_imports_skip_magics_and_the_standard_library(tmp_path) -> None:
    cells = [
        {"cell_type": "code", "source": ["%matplotlib inline\n", "import os, numpy as np\n", "from torch import nn\n"]},
        {"cell_type": "code", "source": ["!pip list\n", "from .local import x\n", "import helpers.data\n"]},
        {"cell_type": "markdown", "source": ["import pandas"]},
    ]
    (tmp_path / "00_x.ipynb").write_text(json.dumps({"cells": cells}))
    assert gpu_rehearse.notebook_imports([tmp_path / "00_x.ipynb"]) == {"numpy", "torch", "helpers.data"}


def _fake_part(tmp_path: Path, bundle_id: str = "b1") -> Path:
    part = tmp_path / "part"
    (part / "site" / "pkg").mkdir(parents=True)
    (part / "site" / "pkg" / "__init__.py").write_text("")
    (part / "chunks").mkdir()
    data = b"weights" * 1000
    (part / "chunks" / "model.000000000000").write_bytes(gpu_device.pack(data))
    files = {name: gpu_device.sha256(part / name) for name in ("site/pkg/__init__.py", "chunks/model.000000000000")}
    model = {"target": "pkg/model.bin", "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    manifest = {"bundle_id": bundle_id, "this_part": 1, "parts": [{"files": files}], "image_pins": {}}
    manifest["model"] = {**model, "chunks": ["model.000000000000"]}
    (part / gpu_device.MANIFEST).write_text(json.dumps(manifest))
    return part


def test_installing_a_part_rebuilds_the_model_and_refuses_damage_or_a_mixed_build(tmp_path) -> None:
    part = _fake_part(tmp_path)
    root = tmp_path / "device"
    gpu_device.install_part(part, root)
    assert (root / gpu_device.SITE / "pkg" / "model.bin").read_bytes() == b"weights" * 1000
    assert (
        not (root / "chunks").exists()
        and gpu_device.missing_parts(root, json.loads((part / "bundle.json").read_text())) == []
    )
    other = _fake_part(tmp_path / "other", bundle_id="b2")
    with pytest.raises(gpu_device.BundleError, match="parts of another build"):
        gpu_device.install_part(other, root)
    (part / "site" / "pkg" / "__init__.py").write_text("changed")
    with pytest.raises(gpu_device.BundleError, match="differs from the build's copy"):
        gpu_device.install_part(part, tmp_path / "fresh")


def test_a_missing_manifest_says_how_to_build_the_bundle(tmp_path) -> None:
    with pytest.raises(gpu_device.BundleError, match="python -m tools.gpu_bundle"):
        gpu_device.read_manifest(tmp_path)


def test_a_build_for_another_python_reuses_the_wheels_that_install_on_both(tmp_path, monkeypatch) -> None:
    names = {
        "pure": "pure-1.0-py3-none-any.whl",
        "stable": "stable-2.0-cp39-abi3-manylinux_2_17_x86_64.whl",
        "binary": "binary-3.0-cp312-cp312-manylinux_2_17_x86_64.whl",
        "older": "older-0.9-py3-none-any.whl",  # another version than the one carried
    }
    other = tmp_path / "wheels-cp312"
    other.mkdir()
    for name in names.values():
        (other / name).write_bytes(b"wheel")
    carry = {"pure": "1.0", "stable": "2.0", "binary": "3.0", "older": "1.0"}
    folder = tmp_path / "wheels-cp311"
    folder.mkdir()
    linked = gpu_bundle.reuse_wheels(carry, "3.11", folder)
    assert sorted(linked) == sorted(path.name for path in folder.iterdir()) == [names["pure"], names["stable"]]
    assert gpu_bundle.reuse_wheels(carry, "3.11", folder) == []  # already there
    downloads = []

    def pip(command, **kwargs):
        downloads.append([arg for arg in command if "==" in arg])
        for spec in downloads[-1]:
            name, version = spec.split("==")
            (folder / f"{name}-{version}-cp311-cp311-manylinux_2_17_x86_64.whl").write_bytes(b"wheel")
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(gpu_bundle.subprocess, "run", pip)
    found = gpu_bundle.download(carry, "3.11", folder)
    assert downloads == [["binary==3.0", "older==1.0"]] and set(found) == set(carry)


@pytest.fixture
def registry_allowed(monkeypatch):
    """The build downloads wheels from the package registry: the offline guard steps aside for its pip alone."""
    monkeypatch.setenv("COURSE_NETWORK_GUARD", "0")


def test_every_part_fits_a_call_and_the_parts_rebuild_the_model_byte_for_byte(registry_allowed, tmp_path) -> None:
    manifest = gpu_bundle.build(gpu_bundle.DEVICE_PYTHON, tmp_path / "bundle")
    tree = manifest["tree_bytes"]
    for part in manifest["parts"]:
        assert part["bytes"] <= 60 * MIB and part["bytes"] + tree <= 64 * MIB, gpu_bundle.report(manifest)
    assert not gpu_bundle.over_limit(manifest)
    wheels = [Path(n).name for p in manifest["parts"] for n in p["files"] if n.startswith("wheels/")]
    names = [parse_wheel_filename(wheel)[0] for wheel in wheels]
    assert len(names) == len(set(names)) == len(manifest["carried"]), "one version of each package"
    assert all(gpu_bundle.installable(wheel, "3.12") for wheel in wheels)
    assert not gpu_bundle.installable("numpy-2.4.6-cp311-cp311-manylinux_2_27_x86_64.whl", "3.12")
    assert not gpu_bundle.installable("numpy-2.4.6-cp312-cp312-macosx_14_0_arm64.whl", "3.12")
    assert "transformers" in manifest["carried"] and "torch" not in manifest["carried"]
    # the chunks, taken from the part folders as the device gets them, rebuild the installed weights exactly
    chunks = tmp_path / "chunks"
    chunks.mkdir()
    for folder in (tmp_path / "bundle" / "parts").iterdir():
        for chunk in (folder / "chunks").glob("model.*"):
            (chunks / chunk.name).write_bytes(chunk.read_bytes())
    rebuilt = gpu_device.rebuild_model(chunks, tmp_path / "site", manifest["model"])
    assert rebuilt.read_bytes() == (local_model_dir() / "model.safetensors").read_bytes()


def test_the_rehearsal_installs_offline_and_imports_everything_the_notebooks_import(registry_allowed) -> None:
    result = gpu_rehearse.rehearse()
    print("\n".join(result["notes"]), result["timings"])
    assert result["failed"] == {}, result["failed"]
    assert result["imported"] > len(result["modules"]) >= 20
    assert result["transformers"] == result["manifest"]["carried"]["transformers"]  # the bundle's, not the image's
    assert "site-packages" in result["transformers_file"] and "course-gpu-rehearsal" in result["transformers_file"]
    assert result["logits"] == [2, 2] and result["train_rows"] > 1000
    notebook = result["notebook"][gpu_rehearse.NOTEBOOK]
    assert notebook["passed"], notebook["error"]
    assert notebook["peak"]["rss_peak_mib"] > 100
