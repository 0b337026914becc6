"""Rehearse the GPU bundle on this machine: install it with no network over a stand-in for the device image.

Usage (``tests/test_gpu_bundle.py`` runs it; by hand, with the course's ``.venv``)::

    python -m tools.gpu_rehearse            # prints each step's time; exits with 1 when a step fails

The device runs CPython 3.12; this machine has 3.11 (``/usr/bin/python3*``), so the rehearsal builds the bundle
for the Python running it, the same versions as the device's (``python -m tools.gpu_bundle --python 3.11``),
into ``.gpu/rehearsal``. Then, in a scratch folder:

1. **the stand-in image**: a fresh virtual environment (no pip, no packages) whose ``site-packages`` points at
   a folder that holds what the device's image gives the course (``tools/gpu_image.txt``) and no more: for
   each package of the course's dependency closure that the bundle leaves to the image, the image's version
   where the list gives it and the registry serves it (downloaded now), else this ``.venv``'s copy, linked;
   plus the image's older transformers and huggingface-hub that the bundle's copies must shadow. torch is the
   CPU build here (the image's is 2.11 with CUDA); what differs is printed.
2. **offline**: under ``unshare -n`` (a network namespace with no interface; as root), the stand-in runs
   ``python -m tools.gpu_device install`` for every part, as the device calls do, then
   ``python -m tools.gpu_device check``, then imports every module the notebooks import, every module of
   ``helpers`` and the notebook runners (nbclient, ipykernel, nbmake, pytest-xdist), loads the course's
   model, tokenizer and data from the installed bundle through the helpers, and runs lesson 00 as the device's
   run runs each notebook (``python -m tools.gpu_run --one``: a kernel started from the bundle's ipykernel).

The namespace keeps its loopback (brought up with ``ip``), which Jupyter kernels need: without it a kernel
never answers. Where ``unshare -n`` is refused (not root, no user namespaces) the offline steps run with pip's
``--no-index`` alone and the rehearsal says so.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from course_facts.registry import lesson
from tools import gpu_bundle, gpu_device

ROOT = gpu_bundle.ROOT
REHEARSAL = gpu_bundle.BUNDLE / "rehearsal"
RUNNERS = ("nbclient", "nbformat", "ipykernel", "ipykernel_launcher", "nbmake", "xdist", "pytest", "tools.gpu_run")
SHADOWED = ("transformers", "huggingface-hub")  # in the image, older: the bundle's copies must come first
STAND_IN_PIP = "pip"  # the image has pip; tools.gpu_device installs with it
NOTEBOOK = lesson("00").file  # the lesson that checks the environment: run in the stand-in from the bundle


def notebook_imports(paths: list[Path]) -> set[str]:
    """The modules the notebooks' code cells import (``import a.b`` gives ``a.b``; ``from a.b import c``, ``a.b``),
    the standard library left out. IPython magics and shell lines are skipped."""
    found: set[str] = set()
    for path in paths:
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            source = "".join(cell["source"])
            lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
            try:
                tree = ast.parse("\n".join(lines))
            except SyntaxError as error:
                raise SystemExit(f"gpu_rehearse: a cell of {path.name} does not parse: {error}") from None
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    found.update(alias.name for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module)
    return {name for name in found if name.split(".")[0] not in sys.stdlib_module_names | {"__future__"}}


def modules_to_import() -> list[str]:
    """The notebooks' imports and the notebook runners, less what the course's own environment cannot import (a
    lesson may import an optional package where it is installed: Ray Tune in lesson 14). The stand-in adds every
    module of ``helpers``, ``exercises``, ``check_old_code`` and ``course_facts`` itself (:data:`IMPORT_SCRIPT`)."""
    import importlib.util

    names = notebook_imports(sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))) | set(RUNNERS)
    return sorted(name for name in names if importlib.util.find_spec(name.split(".")[0]) is not None)


def link_distribution(name: str, folder: Path) -> None:
    """Link the top-level files and folders of the installed distribution ``name`` into ``folder``."""
    import importlib.metadata as metadata

    dist = metadata.distribution(name)
    base = Path(dist.locate_file(""))
    for top in sorted({Path(str(f)).parts[0] for f in dist.files or [] if not str(f).startswith("..")}):
        target = folder / top
        if not target.exists() and not target.is_symlink():
            target.symlink_to(base / top)


def image_folder(manifest: dict, cache: Path) -> tuple[Path, list[str]]:
    """The stand-in image's packages (a ``site-packages`` folder under ``cache``, made once for a given set of
    versions) and what differs from the device's image."""
    import importlib.metadata as metadata

    image = gpu_bundle.image_packages()
    wanted = {name: image[name] for name in manifest["from_image"] if name != "torch"}
    wanted.update({name: image[name] for name in SHADOWED if image.get(name)})
    wanted[STAND_IN_PIP] = None
    here = {name: metadata.version(name) for name in [*wanted, "torch"]}
    key = hashlib.sha256(json.dumps([wanted, here], sort_keys=True).encode()).hexdigest()[:12]
    folder = cache / key / gpu_device.SITE  # named as the image's own folder is (see gpu_device.SITE)
    notes_file = cache / key / "notes.json"
    if notes_file.is_file():
        return folder, json.loads(notes_file.read_text(encoding="utf-8"))
    shutil.rmtree(cache / key, ignore_errors=True)
    folder.mkdir(parents=True)
    notes = [f"torch {here['torch']} stands in for the image's torch {image['torch']} (CUDA)"]
    served = []
    for name, version in wanted.items():  # one by one: the registry may lack a version
        if version and version != here[name]:
            done = subprocess.run(
                [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                 "-d", str(cache / "wheels"), f"{name}=={version}"], capture_output=True, text=True,
            )  # fmt: skip
            if done.returncode == 0:
                served.append((name, version))
            else:
                notes.append(f"{name} {here[name]} stands in for the image's {version} (not served here)")
    if served:
        wheels = gpu_bundle.cached_wheels(cache / "wheels")
        paths = [str(wheels[item]) for item in served]
        command = [sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(folder)]
        subprocess.run(command + paths, check=True)
    for name in [*wanted, "torch"]:
        if name not in dict(served):
            link_distribution(name, folder)
    notes_file.write_text(json.dumps(notes), encoding="utf-8")
    return folder, notes


def stand_in(manifest: dict, scratch: Path, cache: Path) -> tuple[Path, list[str]]:
    """A fresh virtual environment in ``scratch`` that sees the stand-in image's packages alone; its Python and
    what differs from the device's image."""
    folder, notes = image_folder(manifest, cache)
    venv = scratch / "standin"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "_course_image.pth").write_text(f"{folder}\n", encoding="utf-8")
    return python, notes


def offline_prefix() -> tuple[list[str], str]:
    """``["unshare", "-n"]`` where it works here, else ``[]``; and a sentence saying which."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        # The new namespace's loopback starts down, and Jupyter kernels talk to their client over it.
        loopback = "ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null;"
        return [unshare, "-n", "sh", "-c", f'{loopback} exec "$0" "$@"'], "offline: unshare -n (loopback only)"
    return [], "NOT isolated from the network (unshare -n refused here); pip ran with --no-index"


IMPORT_SCRIPT = """
import importlib, json, sys, time
from pathlib import Path
site = Path(sys.argv[1])
failed, started = {}, time.perf_counter()
import check_old_code, course_facts, exercises, helpers, pkgutil
names = json.loads(sys.argv[2]) + [info.name for package in (helpers, exercises, check_old_code, course_facts)
                                   for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
                                   if not info.name.endswith(".__main__")]  # a __main__ runs its command
for name in names:
    try:
        importlib.import_module(name)
    except Exception as error:
        failed[name] = f"{type(error).__name__}: {error}"
from helpers.data import load_reviews
from helpers.models import load_model, load_tokenizer, local_model_dir
assert local_model_dir().is_relative_to(site), f"the model was found outside the bundle: {local_model_dir()}"
tokenizer, model = load_tokenizer(), load_model(num_layers=1)
reviews = load_reviews()
batch = tokenizer(reviews["train"]["text"][:2], padding=True, return_tensors="pt")
logits = model(**batch).logits
import transformers, torch
print(json.dumps({"failed": failed, "imported": len(names), "import_s": round(time.perf_counter() - started, 1),
                  "transformers": transformers.__version__, "torch": torch.__version__,
                  "transformers_file": transformers.__file__, "logits": list(logits.shape),
                  "train_rows": len(reviews["train"])}))
"""


def rehearse(python: str | None = None, keep: Path | None = None) -> dict:
    """Build the bundle for this Python, install it offline over the stand-in image, import and load everything.

    Returns the steps' times, the notes and the outcome of the imports.

    Raises:
        RuntimeError: a step failed; the message holds its output.
    """
    python = python or f"{sys.version_info.major}.{sys.version_info.minor}"
    timings: dict[str, float] = {}
    started = time.perf_counter()
    manifest = gpu_bundle.build(python, REHEARSAL)
    timings["build_s"] = time.perf_counter() - started
    scratch = Path(tempfile.mkdtemp(prefix="course-gpu-rehearsal-")) if keep is None else keep
    try:
        started = time.perf_counter()
        interpreter, notes = stand_in(manifest, scratch, gpu_bundle.CACHE / f"standin-cp{python.replace('.', '')}")
        timings["stand_in_s"] = time.perf_counter() - started
        prefix, isolation = offline_prefix()
        notes.append(isolation)
        device = scratch / "device"
        env = {**os.environ, "PYTHONNOUSERSITE": "1", "PIP_NO_INDEX": "1", "COURSE_DATA_CACHE": str(scratch / "data")}
        env.pop("PYTHONPATH", None)
        env["PYTHONPATH"] = str(ROOT)
        started = time.perf_counter()
        for folder in manifest["folders"]:
            part = ROOT / folder
            run(prefix + [str(interpreter), "-m", "tools.gpu_device", "install", str(part), "--root", str(device)], env)
        timings["install_s"] = time.perf_counter() - started
        env["PYTHONPATH"] = os.pathsep.join([str(device / gpu_device.SITE), str(ROOT)])
        last = ROOT / manifest["folders"][-1]
        started = time.perf_counter()
        run(prefix + [str(interpreter), "-m", "tools.gpu_device", "check", str(last), "--root", str(device)], env)
        timings["check_s"] = time.perf_counter() - started
        started = time.perf_counter()
        modules = modules_to_import()
        out = run(
            prefix + [str(interpreter), "-c", IMPORT_SCRIPT, str(device / gpu_device.SITE), json.dumps(modules)], env
        )
        timings["import_s"] = time.perf_counter() - started
        outcome = json.loads(out.strip().splitlines()[-1])
        started = time.perf_counter()  # a notebook, run as the device's run runs each one: a kernel from the bundle
        result, executed = scratch / "notebook.json", scratch / NOTEBOOK
        command = [str(interpreter), "-m", "tools.gpu_run", "--one", NOTEBOOK, "--workdir", str(ROOT)]
        run(prefix + command + ["--timeout", "120", "--result", str(result), "--save", str(executed)], env)
        outcome["notebook"] = {NOTEBOOK: json.loads(result.read_text())}
        timings["notebook_s"] = time.perf_counter() - started
    finally:
        if keep is None:
            shutil.rmtree(scratch, ignore_errors=True)
    return {"manifest": manifest, "timings": timings, "notes": notes, "modules": modules, **outcome}


def run(command: list[str], env: dict[str, str]) -> str:
    """Run ``command`` from the course root; its output, or RuntimeError with it."""
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(command[:6])} ... failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done.stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="leave the scratch folder here (an empty or new folder)")
    args = parser.parse_args(argv)
    try:
        result = rehearse(keep=args.keep)
    except RuntimeError as error:
        print(f"gpu_rehearse: {error}", file=sys.stderr)
        return 1
    for note in result["notes"]:
        print(f"note: {note}")
    print(f"imported {result['imported']} modules; failed: {result['failed'] or 'none'}")
    print(f"transformers {result['transformers']} from {result['transformers_file']}")
    print(f"notebook: {result['notebook']}")
    print("times: " + ", ".join(f"{key} {value:.1f}" for key, value in result["timings"].items()))
    return 1 if result["failed"] or not result["notebook"][NOTEBOOK]["passed"] else 0


if __name__ == "__main__":
    sys.exit(main())
