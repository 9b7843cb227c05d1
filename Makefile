# Two commands on a fresh clone: `make demo` and `make test`.
# Each bootstraps .venv and reinstalls only when the dependency list changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
DEPS   := $(shell $(PYTHON) tools/deps_hash.py)
STAMP  := $(VENV)/.deps-$(DEPS)
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q

.PHONY: venv venv-phdf5 demo test test-fast lint format clean bench

venv: $(STAMP)

$(STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install -e '.[all,dev]'
	@rm -f $(VENV)/.deps-*
	@touch $@

# Parallel HDF5 for h5py trials with nprocs > 1: a second venv whose mpi4py and
# h5py are built against the system's MPICH and parallel HDF5 (Debian:
# libhdf5-mpich-dev mpich). PyPI's wheels are serial; pip caches what it builds.
# `make test` builds it where those are installed, and its tests skip otherwise.
PHDF5       := .venv-phdf5
PHDF5_STAMP := $(PHDF5)/.deps-$(DEPS)
PHDF5_PIP   := $(PHDF5)/bin/python -m pip --disable-pip-version-check -q
HAVE_PHDF5  := $(shell command -v mpicc >/dev/null && pkg-config --exists hdf5-mpich && echo yes)

venv-phdf5: $(PHDF5_STAMP)

$(PHDF5_STAMP):
	@test -n "$(HAVE_PHDF5)" || { echo "venv-phdf5 needs mpicc and hdf5-mpich (apt-get install libhdf5-mpich-dev mpich)"; exit 2; }
	@test -x $(PHDF5)/bin/python || $(PYTHON) -m venv $(PHDF5)
	$(PHDF5_PIP) install 'setuptools>=68' wheel Cython numpy pkgconfig
	@# -O1: both are thin wrappers (the I/O happens in libhdf5 and libmpich, built
	@# by the distribution), and it halves the compile time of a fresh machine's CI
	CC=mpicc CFLAGS=-O1 $(PHDF5_PIP) install --no-binary=mpi4py 'mpi4py>=4'
	CC=mpicc CFLAGS=-O1 HDF5_MPI=ON HDF5_PKGCONFIG_NAME=hdf5-mpich \
		$(PHDF5_PIP) install --no-build-isolation --no-binary=h5py 'h5py>=3.10'
	$(PHDF5_PIP) install -e '.[all]'
	@# the mpich wheel's mpiexec would shadow the system MPICH this mpi4py uses
	$(PHDF5_PIP) uninstall -y mpich
	@$(PHDF5)/bin/python -c "import h5py, sys; sys.exit(not h5py.get_config().mpi)"
	@rm -f $(PHDF5)/.deps-*
	@touch $@

demo: $(STAMP)
	$(BIN)/iotune run sweeps/quick.yaml -o results/demo --overwrite --plot

test: $(STAMP) $(if $(HAVE_PHDF5),$(PHDF5_STAMP))
	$(BIN)/ruff check iotune tests benchmarks notebooks
	$(BIN)/ruff format --check iotune tests benchmarks notebooks
	$(BIN)/mypy
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow"

lint: $(STAMP)
	$(BIN)/ruff check iotune tests benchmarks notebooks
	$(BIN)/ruff format --check iotune tests benchmarks notebooks
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format iotune tests benchmarks notebooks
	$(BIN)/ruff check --fix iotune tests benchmarks notebooks

clean:
	rm -rf $(VENV) $(PHDF5) results build *.egg-info

bench: $(STAMP)
	$(BIN)/python benchmarks/overhead.py
	$(BIN)/python benchmarks/memory.py --gib 4
	$(BIN)/python benchmarks/dask_speedup.py
	$(BIN)/python benchmarks/mpiio_vs_posix.py
	@if command -v fio >/dev/null; then $(BIN)/python benchmarks/fidelity.py; \
	else echo "fidelity.py skipped: fio is not installed (apt-get install fio)"; fi
