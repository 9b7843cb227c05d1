# Two commands on a fresh clone: `make demo` and `make test`.
# Each bootstraps .venv and reinstalls only when the dependency list changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEPS   := $(shell $(PYTHON) tools/deps_hash.py)
STAMP  := $(VENV)/.deps-$(DEPS)
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: venv demo test test-fast lint format clean bench

venv: $(STAMP)

$(STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -e '.[dev]'
	@rm -f $(VENV)/.deps-*
	@touch $@

demo: $(STAMP)
	$(BIN)/iotune run sweeps/quick.yaml -o results/demo --overwrite --plot

test: $(STAMP)
	$(BIN)/ruff check iotune tests benchmarks
	$(BIN)/ruff format --check iotune tests benchmarks
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check iotune tests benchmarks
	$(BIN)/ruff format --check iotune tests benchmarks

format: $(STAMP)
	$(BIN)/ruff format iotune tests benchmarks
	$(BIN)/ruff check --fix iotune tests benchmarks

clean:
	rm -rf $(VENV) results build *.egg-info

bench: $(STAMP)
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/memory.py --gib 4
	$(BIN)/python benchmarks/dask_speedup.py
	$(BIN)/python benchmarks/mpiio_vs_posix.py
	@if command -v fio >/dev/null; then $(BIN)/python benchmarks/fidelity.py; \
	else echo "fidelity.py skipped: fio is not installed (apt-get install fio)"; fi
