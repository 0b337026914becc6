#!/usr/bin/env bash
# Colab only (called by the set-up cell): install what Colab lacks. Colab's own torch is kept.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
grep -vE '^(torch|jupyterlab|nbmake|pytest|ipykernel|nbclient|nbformat)==' "$here/requirements.txt" > /tmp/course-colab-requirements.txt
python -m pip install -q -r /tmp/course-colab-requirements.txt
python -m pip install -q --no-deps -r "$here/requirements-nodeps.txt"
