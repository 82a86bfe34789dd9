# zerocopy — set-up, demo and tests. Python packages land in .venv. System-wide, only Debian packages:
# run as root, `make setup` apt-installs the few the tests and the bridge use (scripts/install-system-deps.sh)
# and `make setup-gpu` the -dev packages its build needs; otherwise both name them and install nothing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
DEMO   := demo-output
# Python keeps its bytecode for the tests' workers: with PYTHONDONTWRITEBYTECODE set (some shells set it), each
# xdist worker compiled every test module again, about 1.5 s of `make test-fast` (tests/README.md)
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup demo test test-fast test-igpu doctor lint clean models setup-gpu test-va-stack test-gpu-host

setup: $(STAMP)

$(STAMP): pyproject.toml native/vabridge.c native/vabridge.h native/build.py
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "zerocopy needs Python >= 3.11")'
	@if command -v dpkg-query >/dev/null; then bash scripts/install-system-deps.sh; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install -qq -e '.[test,baseline,bench,serve]'
	$(BIN)/python -m zerocopy.bridge build
	@touch $(STAMP)

# The VA-API paths: PyAV built against an FFmpeg >= 8 with VA-API (the system's, or one built into the cache
# where the system's is older: scripts/ffmpeg-build.sh) and the bridge for it.
setup-gpu:
	@VENV='$(VENV)' PYTHON='$(PYTHON)' MAKE='$(MAKE)' bash scripts/setup-gpu.sh

# The same on this machine's own system, in .venv-gpu (so .venv keeps PyPI's PyAV): setup-gpu, doctor and the
# tests marked vastack or native, with a render node that has no driver behind it (mknod, as root).
test-gpu-host:
	@GPU_VENV=.venv-gpu MAKE='$(MAKE)' bash scripts/gpu-host-test.sh

# The VA stack (VA-API PyAV, bridge, doctor, its tests and those of what it changes) in a cached Debian testing
# root; needs root. ZEROCOPY_VA_SUITE=all make test-va-stack runs the whole suite there.
test-va-stack:
	@bash scripts/va-stack.sh test

models: setup
	$(BIN)/zerocopy models pull

demo: setup
	$(BIN)/python scripts/demo.py --out $(DEMO)

# Both tiers: tests/unit and the slow ones (tests/e2e, tests/native, tests/igpu, and unit tests marked slow), on
# TEST_WORKERS pytest-xdist workers, a test file to a worker (its module fixtures made once), then the tests marked
# serial away from them (they measure time or load; scripts/test-serial.sh runs the serve soak beside the others).
# Under 8 minutes on 2 cores (tests/README.md). PYTEST_ARGS goes to both parts, e.g. PYTEST_ARGS=--random-order
# (any order must pass) or PYTEST_ARGS="-k serve".
TEST_WORKERS ?= 3
PYTEST_ARGS ?=
test: setup
	$(BIN)/python -m pytest -q -rfEs -n $(TEST_WORKERS) --dist loadfile -m "not serial" --durations=25 $(PYTEST_ARGS)
	bash scripts/test-serial.sh $(BIN)/python $(PYTEST_ARGS)
	$(BIN)/ruff check zerocopy tests scripts

# The fast tier: tests/unit less what is marked slow (the cached default model, no subprocess in a test), on two
# workers: under 20 s on 2 cores.
test-fast: setup
	$(BIN)/python -m pytest -q -rfEs -n 2 --dist loadfile -m "not slow" $(PYTEST_ARGS) tests/unit
	$(BIN)/ruff check zerocopy tests scripts

test-igpu: setup
	$(BIN)/python -m pytest -v -m igpu -rs -p no:cacheprovider

doctor: setup
	$(BIN)/zerocopy doctor

lint: setup
	$(BIN)/ruff check zerocopy tests scripts

clean:
	rm -rf $(VENV) .venv-gpu $(DEMO) .pytest_cache .ruff_cache
