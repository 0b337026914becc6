#!/usr/bin/env bash
# `make test-latest`: run the course's unit tests against the newest transformers that installs from the registry.
#
# Builds a separate virtual environment, .venv-latest (gitignored), with every package pinned as in
# requirements.txt and constraints.txt except transformers, which gets the newest release pip can install
# with them (and, only if pip cannot resolve that, the newest versions of the packages it pins tightly:
# tokenizers, huggingface-hub, safetensors, accelerate). pip picks an older transformers without a word when
# the newest published one needs something the index does not serve, so the script then asks the index
# (`python -m tools.ladder newest`) and prints the newest published release, the one it installed, and the
# resolver's reason for the difference. Then it runs `pytest tests` offline and reports what broke. It needs
# PyPI for the install; the tests themselves run offline. `make test` is not affected: it stays pinned in .venv.
#
# It asks the index first (a dry run, nothing installed): when the newest release that installs with the pins is
# the pin itself, `make test` already tests it, so the script says so and stops before building anything
# (LATEST_FORCE=1 runs the suite anyway).
#
# Options (environment): PYTHON (default python3), LATEST_VENV (default .venv-latest),
# PYTEST_ARGS (default "tests"), KEEP_GOING=1 to exit 0 even when tests fail, LATEST_FORCE=1 (above).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PYTHON="${PYTHON:-python3}"
VENV="${LATEST_VENV:-.venv-latest}"
PY="$VENV/bin/python"
REPORT_DIR="runs/test_latest"
RELAXABLE="transformers tokenizers huggingface-hub huggingface_hub safetensors accelerate"
mkdir -p "$REPORT_DIR"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# Drop the given package names from a requirements/constraints file (names compared case-insensitively, - = _).
without() {  # without FILE NAME...
  local file="$1"; shift
  "$PYTHON" - "$file" "$@" <<'PYEOF'
import re, sys
path, names = sys.argv[1], {n.lower().replace("_", "-") for n in sys.argv[2:]}
for line in open(path):
    name = re.split(r"[<>=!~\[; ]", line.strip(), 1)[0].lower().replace("_", "-")
    if name not in names:
        sys.stdout.write(line)
PYEOF
}

PINNED="$("$PYTHON" -m tools.pins transformers)"  # requirements.txt, through course_facts/pins.py
without requirements.txt transformers > "$WORK/requirements.txt"
without constraints.txt transformers > "$WORK/constraints.txt"

echo "== 1/4 the index: the newest transformers published, and the newest that installs with the pins (dry run)"
# Asked once: its answer decides whether there is anything to test, and which release to install.
set +e
"$PYTHON" -m tools.ladder newest --pinned "$PINNED" --stop-if-pinned \
  -- -r "$WORK/requirements.txt" -c "$WORK/constraints.txt" > "$REPORT_DIR/newest.txt" 2>&1
asked=$?
set -e
cat "$REPORT_DIR/newest.txt"
if [ "$asked" -eq 3 ] && [ "${LATEST_FORCE:-0}" != "1" ]; then
  echo "RESULT: nothing run. The newest transformers that installs here is the pinned $PINNED, which make test" \
    "tests; make test-latest built no environment and ran no test twice (LATEST_FORCE=1 runs them anyway)." \
    | tee "$REPORT_DIR/summary.txt"
  exit 0
fi
if [ "$asked" -ne 0 ] && [ "$asked" -ne 3 ]; then
  echo "   could not ask the index (above); installing the newest transformers pip picks with the pins"
fi

echo "== 2/4 virtual environment $VENV"
test -x "$PY" || "$PYTHON" -m venv "$VENV"
"$PY" -m pip install -q --upgrade pip

echo "== 3/4 pinned packages, transformers at the newest release that installs with them"
if ! "$PY" -m pip install -q --upgrade -r "$WORK/requirements.txt" transformers -c "$WORK/constraints.txt"; then
  echo "   pip could not combine the newest transformers with the pins; relaxing: $RELAXABLE"
  # shellcheck disable=SC2086
  without constraints.txt $RELAXABLE > "$WORK/constraints.txt"
  # shellcheck disable=SC2086
  without requirements.txt $RELAXABLE > "$WORK/requirements.txt"
  "$PY" -m pip install -q --upgrade -r "$WORK/requirements.txt" transformers tokenizers huggingface-hub \
    safetensors accelerate -c "$WORK/constraints.txt"
fi
"$PY" -m pip install -q --no-deps -r requirements-nodeps.txt
"$PY" -m pip install -q --no-deps -e .

LATEST="$("$PY" -c 'import transformers; print(transformers.__version__)')"
echo "   transformers: pinned $PINNED, installed $LATEST (the index's answer is above)"
"$PY" -m pip freeze > "$REPORT_DIR/freeze.txt"
"$PY" -m pip freeze | grep -iE '^(transformers|tokenizers|huggingface[-_]hub|safetensors|accelerate|torch)==' \
  | diff <(grep -iE '^(transformers|tokenizers|huggingface[-_]hub|safetensors|accelerate|torch)==' constraints.txt) - \
  > "$REPORT_DIR/changed_versions.txt" || true

echo "== 4/4 unit tests (offline)"
set +e
# shellcheck disable=SC2046  # the offline settings (course_facts/pins.py) are NAME=VALUE words without spaces
env $("$PYTHON" -m tools.pins --offline) MPLBACKEND=Agg \
  "$PY" -m pytest -q -rfE --tb=line ${PYTEST_ARGS:-tests} 2>&1 | tee "$REPORT_DIR/pytest.txt"
status=${PIPESTATUS[0]}
set -e

{
  cat "$REPORT_DIR/newest.txt"
  echo "versions that differ from constraints.txt (< pinned, > tested):"
  sed 's/^/  /' "$REPORT_DIR/changed_versions.txt"
  if [ "$status" -eq 0 ]; then
    echo "RESULT: every unit test passed on transformers $LATEST."
  else
    echo "RESULT: tests failed on transformers $LATEST (exit $status). What broke:"
    grep -E '^(FAILED|ERROR) ' "$REPORT_DIR/pytest.txt" | sed 's/^/  /' || true
    echo "Failures in tests/test_contracts.py name the lesson to update."
  fi
} | tee "$REPORT_DIR/summary.txt"
echo "(full log: $REPORT_DIR/pytest.txt)"
if [ "${KEEP_GOING:-0}" = "1" ]; then exit 0; fi
exit "$status"
