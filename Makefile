# The course's commands. A learner needs two: `make lab` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
NB     ?= notebooks/[0-9][0-9]_*.ipynb
# Offline by default: nothing in the course needs the network once .venv exists. The settings are defined once,
# in course_facts/pins.py (OFFLINE_ENV; standard library only, so any Python 3 reads them), and read when a recipe
# runs: the venv's Python when there is one, else $(PYTHON).
OFFLINE = $(or $(shell $(if $(wildcard $(PY)),$(PY),$(PYTHON)) -m tools.pins --offline),\
          $(error make: could not read the offline settings: `$(PYTHON) -m tools.pins --offline` failed))
# One torch thread a process (course_facts/pins.py THREAD_ENV), so that processes beside each other do not fight over cores.
THREADS = $(shell $(if $(wildcard $(PY)),$(PY),$(PYTHON)) -m tools.pins --threads)

.PHONY: datasheet venv lab test unit lint format notebooks execute export examples bench participant-copies set-repo test-latest test-colab clean help book test-browser gpu-plan

help:
	@echo "make lab      - create .venv if missing (Python 3.11; PYTHON=python3.11), install the pinned packages (torch: CPU build without an NVIDIA driver), open JupyterLab on notebooks/"
	@echo "make test     - create .venv if missing, run the unit tests and every notebook (nbmake), offline"
	@echo "make lint     - ruff check and ruff format --check (part of make test); make format fixes what it can"
	@echo "make execute  - re-run notebooks top to bottom and save their outputs and measured run times (NB=...)"
	@echo "make export   - save the lessons' #| export cells into helpers/lessons/ (make execute runs it too)"
	@echo "make examples - write examples/NN_*.py, each lesson's pattern as a script, from the cells tagged pattern"
	@echo "make bench    - benchmark padding, gradient monitoring and callback overhead (ratios, JSON); SUITE=1 also times make venv + make test from a fresh clone"
	@echo "make participant-copies REPO=owner/name - the learners' copy without solutions or outputs, in ../name (next to this checkout), pointed at the learners' repository"
	@echo "make set-repo REPO=owner/name - point every Colab badge and the set-up cell at your fork"
	@echo "make test-latest - run the suite against the newest transformers in a separate venv (.venv-latest)"
	@echo "make test-colab - a simulated Colab (.venv-colab) runs the set-up cell and notebooks 00 and 03"
	@echo "make book     - the course as a website (Sphinx, myst-nb) in _build/book/, from the executed notebooks"
	@echo "make test-browser - the book and JupyterLab in Debian's chromium (playwright): pages, links, search, Run All"
	@echo "make gpu-plan - build the GPU bundle (.gpu/, needs the package registry) and print the device calls of the GPU run"

# Before .venv is created, $(PYTHON) must be the tested Python (3.11; tools/python_version.py says how to get it
# otherwise, and UNTESTED_PYTHON=1 tries a newer one anyway). uv's pip interface installs the pins when it can be
# had, else pip does (COURSE_INSTALLER=pip forces pip): the same files and steps either way, with the torch build
# for this machine (CPU without an NVIDIA driver; COURSE_TORCH=cpu or cuda chooses; tools/install.py).
$(STAMP): requirements.txt requirements-nodeps.txt constraints.txt pyproject.toml tools/install.py
	@test -x $(PY) || command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) is not installed: the course needs Python 3.11 (see README.md, 'Set-up on your laptop'), then make lab PYTHON=python3.11"; exit 1; }
	test -x $(PY) || { $(PYTHON) -m tools.python_version --name $(PYTHON) $(if $(UNTESTED_PYTHON),--allow-untested) && $(PYTHON) -m venv $(VENV); }
	$(PY) -m tools.install $(PY)
	touch $(STAMP)

venv: $(STAMP)

# JupyterLab on notebooks/, with the course's own settings (jupyter/: no news pop-up) and --allow-root when run as
# root (containers, cloud machines): tools/lab.py. LAB_ARGS are passed on (make lab LAB_ARGS=--port=8890).
lab: venv
	$(PY) -m tools.lab $(LAB_ARGS)

lint: venv
	$(VENV)/bin/ruff check helpers exercises check_old_code course_facts tools tests notebooks
	$(VENV)/bin/ruff format --check helpers exercises check_old_code course_facts tools tests notebooks

format: venv
	$(VENV)/bin/ruff check --fix helpers exercises check_old_code course_facts tools tests notebooks
	$(VENV)/bin/ruff format helpers exercises check_old_code course_facts tools tests notebooks

unit: venv
	$(OFFLINE) $(PY) -m pytest tests -q

notebooks: venv
	$(OFFLINE) $(THREADS) $(PY) -m pytest --nbmake --nbmake-timeout=300 -q --durations=0 notebooks

# make test runs the unit tests and the notebooks in WORKERS processes (pytest-xdist; a test file stays in one
# process), each with one torch thread, so that two processes do not fight over one core. WORKERS defaults to one
# per core, as many as the memory holds (tools/workers.py); make test WORKERS=1 runs everything in one process.
WORKERS ?= $(shell $(PYTHON) -m tools.workers)
# The longest files go first, by their last measured times (tests/conftest.py), in that order.
TEST_RUN = $(OFFLINE) $(THREADS) $(PY) -m pytest -q -n $(WORKERS) --dist loadfile --no-loadscope-reorder

# The notebooks run in kernels forked from one process a worker that imported torch, datasets and the Trainer once
# (tools/warm_kernel.py; about 5 s of CPU less a notebook). make test WARM_KERNEL= runs them in plain kernels.
WARM_KERNEL ?= course-warm
test: venv lint
	$(TEST_RUN) --durations=20 --nbmake --nbmake-timeout=300 $(if $(WARM_KERNEL),--nbmake-kernel=$(WARM_KERNEL)) \
		notebooks tests

execute: venv
	$(OFFLINE) $(PY) -m tools.execute_notebooks $(NB)

export: venv
	$(PY) -m tools.export_lessons

# Each lesson's pattern as a script (docs/authoring.md, "The pattern"); tests/test_patterns.py checks they agree.
examples: venv
	$(PY) -m tools.examples

bench: venv
	$(OFFLINE) $(PY) -m tools.bench $(if $(SUITE),--suite)

participant-copies: venv
	@test -n "$(REPO)" || (echo "usage: make participant-copies REPO=owner/name (the GitHub repository the learners clone)" && exit 2)
	$(PY) -m tools.participant_copies --repo $(REPO)

set-repo: venv
	@test -n "$(REPO)" || (echo "usage: make set-repo REPO=owner/name" && exit 2)
	$(PY) -m tools.set_repo $(REPO)

test-latest:
	bash tools/test_latest.sh

test-colab: venv
	bash tools/test_colab.sh

clean:
	rm -rf data/cache participant_copies .pytest_cache

BOOK_STAMP := $(VENV)/.book-installed
BOOK_OUT   := _build/book

$(BOOK_STAMP): $(STAMP) requirements-book.txt
	$(PY) -m pip install -q -r requirements-book.txt -c constraints.txt
	touch $(BOOK_STAMP)

book: $(BOOK_STAMP)
	rm -rf $(BOOK_OUT)  # pages of a renamed or removed lesson must not linger
	$(OFFLINE) $(PY) -m sphinx -W --keep-going -q -E -b html -c docs/book -d _build/doctrees . $(BOOK_OUT)
	@echo "The book: $(CURDIR)/$(BOOK_OUT)/index.html"
	@echo "Search needs HTTP: $(PY) -m http.server -b 127.0.0.1 -d $(BOOK_OUT) 8000, then open http://127.0.0.1:8000/"

test-browser: book
	COURSE_BROWSER_TESTS=1 $(OFFLINE) $(PY) -m pytest -q -p no:cacheprovider --durations=0 tests/browser

# The course on a lent GPU machine (docs/authoring.md, "Running the course on a lent GPU machine").
gpu-plan: venv
	$(PY) -m tools.gpu_bundle
	$(PY) -m tools.gpu_run --dry-run

datasheet: venv
	$(OFFLINE) $(PY) -m tools.datasheet

# The release ladder (docs/ladder.md): each claim probed on a series of transformers releases, each in its own
# environment under .venv-ladder/ (needs the package registry for the installs; the probes run offline).
# LADDER=all (default), ends (the oldest and the newest) or versions separated by commas; CHECK=1 compares a fresh
# run with the committed docs/ladder/results.json instead of writing it. BISECT=1 (a maintainer's command, not CI's)
# runs the final releases between two rungs whose verdicts differ until each change is between two adjacent
# releases, then reads the source posts' release's wheel for the lessons' quotes (course_facts/pins.py SOURCE_RELEASE;
# FRESH=1 runs every release again).
LADDER ?= all
.PHONY: ladder
ladder:
ifdef BISECT
	$(PYTHON) -m tools.ladder bisect $(if $(FRESH),--fresh)
	$(PYTHON) -m tools.ladder era
else
	$(PYTHON) -m tools.ladder run --releases $(LADDER) $(if $(CHECK),--check)
endif
