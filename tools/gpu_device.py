"""The device side of the GPU bundle: install one carried part, rebuild the model, check what is importable.

A GPU machine lent to this project has no network and a ``python3`` (3.12) without the course's packages;
``python -m tools.gpu_bundle`` packs what it lacks into parts of at most 60 MiB (``.gpu/parts/N``), one part a
device call. This module runs there, before any of those packages are installed, so it imports the standard
library alone (``packaging``, which the image holds, only in :func:`conflicts`, and only if present)::

    python3 -m tools.gpu_device install .gpu/parts/1     # wheels, files, model chunks of part 1
    python3 -m tools.gpu_device check                    # every part in? the model rebuilt? requirements met?

Everything goes under ``/tmp/course-gpu`` (``--root``; outside the working tree, which each call replaces,
so a warm machine keeps it between calls): ``site-packages/`` (the packages, put first on ``PYTHONPATH``),
``chunks/`` (the model's parts until the last arrives) and ``part-N.done``. The model travels as one blob,
its bytes regrouped by position modulo 4 (the exponent bytes of float32 weights then sit together) and
zlib-compressed: :func:`pack` and :func:`unpack` are each other's inverse for any bytes, and the rebuilt
file's SHA-256 is checked against the one the bundle recorded before it is put in place.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zlib
from pathlib import Path

DEFAULT_ROOT = Path("/tmp/course-gpu")
# The installed packages' folder. Its name matters: dill (datasets hashes its transforms with it) pickles a
# module by reference only when its file lies under sys.prefix or in a path holding "site-packages"; from any
# other folder, datasets' fingerprints pickle whole modules and fail (pyarrow's MonthDayNano, seen in the
# rehearsal with the folder named "site").
SITE = "site-packages"
MANIFEST = "bundle.json"  # in every part: the whole bundle's manifest
STRIDE = 4  # float32: byte k of every weight goes to plane k
ZLIB_LEVEL = 1  # level 6 saves 1 % more for three times the time


class BundleError(RuntimeError):
    """A part is missing, damaged or from another build: the message says which and what to do."""


def pack(data: bytes) -> bytes:
    """``data`` with its bytes grouped by position modulo :data:`STRIDE`, then zlib-compressed."""
    return zlib.compress(b"".join(data[k::STRIDE] for k in range(STRIDE)), ZLIB_LEVEL)


def unpack(blob: bytes, size: int) -> bytes:
    """The inverse of :func:`pack` for a file of ``size`` bytes."""
    planes = zlib.decompress(blob)
    if len(planes) != size:
        raise BundleError(f"the model blob unpacks to {len(planes)} bytes, not {size}: rebuild the bundle")
    out = bytearray(size)
    start = 0
    for k in range(STRIDE):
        length = len(range(k, size, STRIDE))
        out[k::STRIDE] = planes[start : start + length]
        start += length
    return bytes(out)


def sha256(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(part: Path) -> dict:
    """The bundle's manifest carried in ``part``."""
    path = part / MANIFEST
    if not path.is_file():
        raise BundleError(
            f"{path} is missing: {part} is not a part of the GPU bundle. Build it with `python -m tools.gpu_bundle` "
            "and carry the folders that `python -m tools.gpu_run --dry-run` names."
        )
    return json.loads(path.read_text(encoding="utf-8"))


def install_part(part: Path, root: Path = DEFAULT_ROOT, python: str = sys.executable) -> dict[str, float]:
    """Install part ``part`` under ``root``: its wheels into ``root/site-packages`` (pip, no index, no
    dependencies), its files as they are, its model chunks into ``root/chunks``; once every chunk is there, rebuild
    the model (and delete the chunks).

    Returns the seconds each step took.

    Raises:
        BundleError: a file of the part is missing or damaged, pip failed, or the rebuilt model differs.
    """
    manifest = read_manifest(part)
    number = manifest["this_part"]
    entry = manifest["parts"][number - 1]
    site, chunks = root / SITE, root / "chunks"
    site.mkdir(parents=True, exist_ok=True)
    chunks.mkdir(parents=True, exist_ok=True)
    stamp = root / "bundle.id"
    if stamp.is_file() and stamp.read_text().strip() != manifest["bundle_id"]:
        raise BundleError(
            f"{root} holds parts of another build ({stamp.read_text().strip()}, this part is of "
            f"{manifest['bundle_id']}): remove {root} and install every part of one build"
        )
    stamp.write_text(manifest["bundle_id"] + "\n")
    timings: dict[str, float] = {}
    started = time.perf_counter()
    for name, digest in entry["files"].items():
        if sha256(part / name) != digest:
            raise BundleError(f"{part / name} differs from the build's copy: rebuild and carry the part again")
    timings["verify_s"] = time.perf_counter() - started
    wheels = sorted(str(part / name) for name in entry["files"] if name.startswith("wheels/"))
    if wheels:
        started = time.perf_counter()
        command = [python, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--no-compile"]
        command += ["--no-cache-dir", "--upgrade", "--target", str(site), *wheels]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise BundleError(f"pip could not install part {number}'s wheels:\n{done.stdout}{done.stderr}")
        timings["pip_s"] = time.perf_counter() - started
    for name in entry["files"]:
        if name.startswith("site/"):
            target = site / name.split("/", 1)[1]
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(part / name, target)
        elif name.startswith("chunks/"):
            shutil.copyfile(part / name, root / name)
    (root / f"part-{number}.done").write_text(manifest["bundle_id"] + "\n")
    model = manifest["model"]
    if all((chunks / name).is_file() for name in model["chunks"]):
        started = time.perf_counter()
        rebuild_model(chunks, site, model)
        shutil.rmtree(chunks)  # 73 MiB the machine's disk no longer needs
        timings["model_s"] = time.perf_counter() - started
    return timings


def rebuild_model(chunks: Path, site: Path, model: dict) -> Path:
    """Join the model's chunks, unpack them and put the file, checked, at ``site / model["target"]``."""
    blob = b"".join((chunks / name).read_bytes() for name in model["chunks"])
    data = unpack(blob, model["size"])
    if hashlib.sha256(data).hexdigest() != model["sha256"]:
        raise BundleError("the rebuilt model's SHA-256 differs from the build's: carry every part of one build")
    target = site / model["target"]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def missing_parts(root: Path, manifest: dict) -> list[int]:
    """The numbers of the parts not yet installed under ``root`` (from this build)."""
    missing = []
    for number in range(1, len(manifest["parts"]) + 1):
        done = root / f"part-{number}.done"
        if not done.is_file() or done.read_text().strip() != manifest["bundle_id"]:
            missing.append(number)
    return missing


def conflicts(site: Path) -> list[str]:
    """Each requirement of a package installed in ``site`` that the importable version does not meet.

    The importable version is the one ``python`` finds first (``site`` is first on ``PYTHONPATH``), so this
    checks the carried packages against the image's. Needs ``packaging`` (the image holds it).
    """
    import importlib.metadata as metadata

    from packaging.requirements import Requirement

    found = []
    for dist in metadata.distributions(path=[str(site)]):
        for text in dist.requires or []:
            requirement = Requirement(text)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue
            try:
                version = metadata.version(requirement.name)
            except metadata.PackageNotFoundError:
                found.append(f"{dist.metadata['Name']} needs {requirement}: not installed")
                continue
            if requirement.specifier and not requirement.specifier.contains(version, prereleases=True):
                found.append(f"{dist.metadata['Name']} needs {requirement}: {version} is importable")
    return sorted(set(found))


def release(version: str) -> tuple[int, ...]:
    """The leading numbers of a version, to compare releases without ``packaging``: ``(2, 11, 0)`` for
    ``"2.11.0+cu130"``, ``(1, 0)`` for ``"1.0rc1"``."""
    return tuple(int(number) for number in re.findall(r"\d+", re.match(r"[\d.]*", version).group(0)))


def image_versions(pinned: dict[str, str]) -> dict[str, str]:
    """For each package the bundle leaves to the image: its version there, and whether that is an older minor
    release than the course's pin (a warning: the lessons were tested with the pin)."""
    import importlib.metadata as metadata

    found = {}
    for name, pin in sorted(pinned.items()):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = f"MISSING (pin {pin})"
            continue
        older = release(version)[:2] < release(pin)[:2]
        found[name] = f"{version}{f' OLDER than the pin {pin}' if older else ''}"
    return found


def check(root: Path, part: Path) -> list[str]:
    """What stops a run: parts not installed, the model not rebuilt, requirements not met (empty when none)."""
    manifest = read_manifest(part)
    problems = [f"part {n} is not installed under {root}" for n in missing_parts(root, manifest)]
    if not (root / SITE / manifest["model"]["target"]).is_file():
        problems.append(f"the model is not rebuilt under {root / SITE} (its chunks are not all in)")
    if not problems:
        problems += conflicts(root / SITE)
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["install", "check"])
    parser.add_argument("part", type=Path, nargs="?", help="a part's folder (install); any part's (check)")
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT)
    args = parser.parse_args(argv)
    part = args.part or next(iter(sorted(Path(".gpu/parts").glob("*"))), Path(".gpu/parts/1"))
    try:
        if args.action == "install":
            timings = install_part(part, args.root)
            print(f"installed {part}: " + ", ".join(f"{key} {value:.1f}" for key, value in timings.items()))
            return 0
        problems = check(args.root, part)
    except BundleError as error:
        print(f"gpu_device: {error}", file=sys.stderr)
        return 1
    if not problems:
        for name, found in image_versions(read_manifest(part)["image_pins"]).items():
            print(f"gpu_device check: from the image: {name} {found}")
    for problem in problems:
        print(f"gpu_device check: {problem}", file=sys.stderr)
    if not problems:
        print(f"gpu_device check: every part installed under {args.root}, requirements met")
    return 1 if problems else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
