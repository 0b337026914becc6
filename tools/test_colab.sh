#!/usr/bin/env bash
# `make test-colab`: the Colab path, simulated as closely as this machine allows, built from scratch each time.
#
#  1. A separate virtual environment, .venv-colab (gitignored), stands for Colab's Python: the packages of
#     tools/colab_sim/packages.txt at the versions Colab ships (numpy 2.0, pandas 2.2, transformers 4.x,
#     sentence-transformers...), not the course's pins, and a stand-in `google.colab` package.
#  2. A bare git copy of this checkout's files (tracked, plus untracked files git does not ignore, so a
#     working tree with uncommitted changes is tested as it is) stands for GitHub.
#  3. A kernel of that venv (kernel name colab-sim) imports google.colab, numpy and pandas when it starts,
#     as Colab's does. The set-up cell clones from the bare copy (COURSE_URL) into COURSE_DIR.
#  4. The set-up cell's first run, alone, in a fresh kernel: it installs what the simulated Colab lacks and,
#     where that changed a package the kernel had already imported, restarts the runtime with its message.
#  5. The lessons marked colab_smoke in lessons.toml top to bottom with nbmake in a new kernel of the simulated runtime (the cell's
#     second run: quick, installs nothing), then checks: torch and the kept packages untouched, the course's
#     pins in place, helpers.versions() reports nothing missing.
# The pip installs (steps 1 and 4) need the package registry; nothing else uses the network.
#
# Options (environment): PYTHON (default python3), COLAB_VENV (default .venv-colab), KEEP=1 keeps the work
# folder (its path is printed). Logs: runs/test_colab/.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VENV="${COLAB_VENV:-.venv-colab}"
SIM_PY="$ROOT/$VENV/bin/python"
HOST_PY="$ROOT/.venv/bin/python"  # runs nbmake and nbclient; the notebooks run in the simulated kernel
SIM_DIR="$ROOT/tools/colab_sim"
LOGS="$ROOT/runs/test_colab"
KERNEL=colab-sim
WORK="$(mktemp -d "${TMPDIR:-/tmp}/course-colab.XXXXXX")"
if [ "${KEEP:-0}" = "1" ]; then trap 'echo "(work folder kept: $WORK)"' EXIT; else trap 'rm -rf "$WORK"' EXIT; fi
mkdir -p "$LOGS"
STARTED=$SECONDS
test -x "$HOST_PY" || { echo "test-colab needs the course's .venv (make venv) to run nbmake"; exit 2; }
# The lessons to run: those marked colab_smoke in lessons.toml.
mapfile -t NOTEBOOKS < <("$HOST_PY" -c 'from course_facts.registry import lessons
print("\n".join(lesson.file for lesson in lessons() if lesson.colab_smoke))')

echo "== 1/5 simulated Colab runtime: $VENV (Colab's versions, not the course's pins)"
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
"$SIM_PY" -m pip install -q -r "$SIM_DIR/packages.txt"
SITE="$("$SIM_PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
mkdir -p "$SITE/google"
cp -r "$SIM_DIR/google/colab" "$SITE/google/colab"
"$SIM_PY" -m pip freeze > "$LOGS/freeze-before.txt"
KEPT_RE='^(torch|numpy|pandas|matplotlib|scikit-learn)=='
grep -E "$KEPT_RE" "$LOGS/freeze-before.txt" > "$WORK/kept-before.txt"
TORCH_RECORD="$("$SIM_PY" -c 'from importlib import metadata; print(metadata.distribution("torch")._path)')/RECORD"
sha256sum "$TORCH_RECORD" > "$WORK/torch-record.sha256"
echo "   $(grep -ciE '^[a-z0-9]' "$LOGS/freeze-before.txt") packages; $(grep -iE '^(numpy|pandas|pyarrow|matplotlib|scikit-learn|transformers|sentence-transformers|datasets|torch)==' "$LOGS/freeze-before.txt" | tr '\n' ' ')"

echo "== 2/5 a bare git copy of this checkout's files stands for GitHub"
mkdir -p "$WORK/src"
git -c safe.directory="$ROOT" ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' path; do
      if [ -f "$path" ] && [ "${path#"$VENV/"}" = "$path" ]; then printf '%s\0' "$path"; fi
    done \
  | xargs -0 cp --parents -t "$WORK/src"
# The notebooks are run as committed. Only where the checkout's set-up cell is not yet the current one (the
# notebooks are re-executed after a change of the cell) does the copy get the current cell written in.
"$HOST_PY" - "$WORK/src" "${NOTEBOOKS[@]}" <<'PYEOF'
import sys
from pathlib import Path

import nbformat

from tools.notebook_format import SETUP_MARKER, apply_shared_parts, setup_cell_source

src = Path(sys.argv[1])
for name in sys.argv[2:]:
    path = src / "notebooks" / name
    nb = nbformat.read(path, as_version=4)
    first = next(cell for cell in nb.cells if cell.cell_type == "code")
    if first.source != setup_cell_source():
        assert first.source.startswith(SETUP_MARKER), f"{name}: no set-up cell"
        apply_shared_parts(nb, name)
        nbformat.write(nb, path)
        print(f"   NOTE: {name} in the checkout has an older set-up cell; the copy runs the current one")
PYEOF
git -C "$WORK/src" init -q -b main
git -C "$WORK/src" add -A
git -C "$WORK/src" -c user.name=test-colab -c user.email=test-colab@localhost commit -q -m "checkout for test-colab"
git clone -q --bare "$WORK/src" "$WORK/course.git"
echo "   $(git -C "$WORK/course.git" ls-tree -r HEAD --name-only | wc -l) files in $WORK/course.git"

echo "== 3/5 the kernel: $KERNEL, imports google.colab, numpy and pandas at start"
mkdir -p "$WORK/jupyter/kernels/$KERNEL" "$WORK/ipython/profile_default/startup" "$WORK/content"
cp "$SIM_DIR/ipython_startup.py" "$WORK/ipython/profile_default/startup/00-colab.py"
for name in "${NOTEBOOKS[@]}"; do cp "$WORK/src/notebooks/$name" "$WORK/content/$name"; done
"$HOST_PY" - "$WORK" "$SIM_PY" "$KERNEL" <<'PYEOF'
import json
import os
import sys

from course_facts.pins import OFFLINE_ENV

work, python, kernel = sys.argv[1:]
env = {
    "PATH": f"{os.path.dirname(python)}:{os.environ['PATH']}",  # `python` is the runtime's, as on Colab
    "IPYTHONDIR": f"{work}/ipython",
    "COURSE_URL": f"file://{work}/course.git",  # instead of https://github.com/<[tool.course] repository>
    "COURSE_DIR": f"{work}/content/course",  # instead of /content/course
    # The only departure from Colab: this machine cannot reach the Hub, so the kernel gets the course's offline
    # settings, as in `make test` (course_facts/pins.py, OFFLINE_ENV).
    **OFFLINE_ENV,
    "PYDEVD_DISABLE_FILE_VALIDATION": "1",  # ipykernel 6.17 on Python 3.11: a debugger warning per start
}
spec = {
    "argv": [python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
    "display_name": "Simulated Colab",
    "language": "python",
    "env": env,
}
with open(f"{work}/jupyter/kernels/{kernel}/kernel.json", "w") as handle:
    json.dump(spec, handle, indent=1)
PYEOF
export JUPYTER_PATH="$WORK/jupyter"

echo "== 4/5 the set-up cell's first run, in a fresh kernel"
"$HOST_PY" -m tools.colab_sim.setup_runs first "$WORK/content/${NOTEBOOKS[0]}" "$KERNEL" | tee "$LOGS/first-run.txt"

echo "== 5/5 notebooks ${NOTEBOOKS[*]} top to bottom with nbmake, in the simulated kernel"
(cd "$WORK/content" && "$HOST_PY" -m pytest -q -p no:cacheprovider --durations=0 --nbmake \
  --nbmake-kernel="$KERNEL" --nbmake-timeout=600 --overwrite "${NOTEBOOKS[@]}") | tee "$LOGS/nbmake.txt"
"$HOST_PY" -m tools.colab_sim.setup_runs report "$WORK/content" "${NOTEBOOKS[@]}" | tee "$LOGS/second-run.txt"

echo "== checks"
"$SIM_PY" -m pip freeze > "$LOGS/freeze-after.txt"
grep -E "$KEPT_RE" "$LOGS/freeze-after.txt" | diff "$WORK/kept-before.txt" - \
  || { echo "FAILED: the set-up cell changed torch or a package Colab's versions of which the course keeps"; exit 1; }
sha256sum --quiet -c "$WORK/torch-record.sha256" || { echo "FAILED: torch's files changed"; exit 1; }
echo "   kept as Colab ships them: $(tr '\n' ' ' < "$WORK/kept-before.txt")"
PYTHONPATH="$WORK/content/course" "$SIM_PY" - "$WORK/content/course" <<'PYEOF'
import sys
from importlib import metadata
from pathlib import Path

import google.colab  # noqa: F401  (helpers.versions() looks for it, as on Colab)

course = Path(sys.argv[1])
import helpers  # the course folder is the working directory (PYTHONPATH)

found = helpers.versions()
missing = [name for name, version in found.items() if version == "missing"]
assert not missing, f"helpers.versions() reports missing packages on the simulated Colab: {missing}"
pins = dict(line.split("==") for line in (course / "requirements.txt").read_text().splitlines() if "==" in line)
for name in ("transformers", "datasets", "accelerate", "evaluate", "tokenizers", "huggingface-hub", "safetensors"):
    assert metadata.version(name) == pins[name], f"{name} {metadata.version(name)}, the course pins {pins[name]}"
print("   helpers.versions():", ", ".join(f"{name} {version}" for name, version in found.items()))
PYEOF
diff <(grep -ivE '^#' "$LOGS/freeze-before.txt") <(grep -ivE '^#' "$LOGS/freeze-after.txt") | grep -E '^[<>]' \
  > "$LOGS/changed.txt" || true
echo "   the set-up cell changed $(grep -c '^>' "$LOGS/changed.txt") packages (< before, > after: $LOGS/changed.txt)"
echo "RESULT: the simulated Colab runs ${NOTEBOOKS[*]}; make test-colab took $((SECONDS - STARTED)) s"
