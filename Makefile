# Two commands on a fresh clone: `make demo` and `make test`.
# Both bootstrap .venv with the versions pinned in requirements/lock.txt (one candidate
# per package: no backtracking). `make demo` installs the core only, `make test` adds
# every extra and dev to the same venv; each has its own stamp and reinstalls only when
# pyproject's dependency lists, the lock or the Python version change.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
LOCK   := requirements/lock.txt
CORE_STAMP := $(VENV)/.deps-core-$(shell $(PYTHON) tools/deps_hash.py core)
STAMP      := $(VENV)/.deps-all-$(shell $(PYTHON) tools/deps_hash.py all)
PIP    := $(BIN)/python -m pip --disable-pip-version-check -q
# uv installs (downloads in parallel: a bare machine's core install in ~10 s, pip's takes
# ~70 s) and compiles the lock; pinned, so that two machines write the same lock
UV_VERSION := 0.13.9
UV_STAMP   := $(VENV)/.uv-$(UV_VERSION)
UV_LOCKED  := $(BIN)/uv pip install --quiet --python $(BIN)/python -c $(LOCK)

.PHONY: venv venv-core venv-torch venv-phdf5 demo test test-fast lint format clean bench lock check-lock

venv: $(STAMP)
venv-core: $(CORE_STAMP)

$(UV_STAMP):
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) install 'uv==$(UV_VERSION)'
	@rm -f $(VENV)/.uv-*
	@touch $@

# order-only on uv: a new uv does not by itself reinstall the project
$(CORE_STAMP): | $(UV_STAMP)
	$(UV_LOCKED) -e .
	@rm -f $(VENV)/.deps-core-*
	@touch $@

# on top of the core venv when it is there: what the lock already pins stays
$(STAMP): | $(UV_STAMP)
	$(UV_LOCKED) -e '.[all,dev]'
	@rm -f $(VENV)/.deps-*
	@touch $@ $(CORE_STAMP)

# PyTorch for the batches pattern's DataLoader (tests with IOTUNE_REQUIRE_TORCH=1): pip, not
# uv, so that a machine's own CPU wheel (a constraint file naming it) is taken instead of
# PyPI's CUDA build of several GB; not in the lock for that reason
TORCH_VERSION ?= 2.13.0
venv-torch: $(STAMP)
	$(PIP) install 'torch==$(TORCH_VERSION)'

# fails, naming `make lock`, when pyproject's dependencies changed after the lock was compiled
check-lock:
	@$(PYTHON) tools/check_lock.py

# recompile the lock from pyproject (every extra and dev, every platform, the oldest Python
# allowed); versions already in the lock stay where they still fit (`make lock UPGRADE=1`
# takes the newest)
lock: | $(UV_STAMP)
	$(PYTHON) tools/lock.py --uv $(BIN)/uv $(if $(UPGRADE),--upgrade)

# Parallel HDF5 for h5py trials with nprocs > 1: a second venv whose mpi4py and
# h5py are built against the system's MPICH and parallel HDF5 (Debian:
# libhdf5-mpich-dev mpich). PyPI's wheels are serial; pip caches what it builds.
# `make test` builds it where those are installed, and its tests skip otherwise.
PHDF5       := .venv-phdf5
PHDF5_STAMP := $(PHDF5)/.deps-all-$(shell $(PYTHON) tools/deps_hash.py all)
PHDF5_PIP   := $(PHDF5)/bin/python -m pip --disable-pip-version-check -q
PHDF5_UV    := $(BIN)/uv pip install --quiet --python $(PHDF5)/bin/python -c $(LOCK)
# -O1: both are thin wrappers (the I/O happens in libhdf5 and libmpich, built by the
# distribution), and it halves the compile time against the default -O2/-O3. CI, which
# checks behaviour and times nothing, builds with -O0 (.ci/run): 2-3 min less on a bare
# 2-core machine (mpi4py's one large C file compiles in a third of the time)
PHDF5_CFLAGS ?= -O1
HAVE_PHDF5  := $(shell command -v mpicc >/dev/null && pkg-config --exists hdf5-mpich && echo yes)

venv-phdf5: $(PHDF5_STAMP)

# after .venv (order-only): both install the checkout editable, and setuptools writes its
# metadata into the checkout; under `make -j2 test` the rest overlaps ruff and mypy
$(PHDF5_STAMP): | $(STAMP)
	@test -n "$(HAVE_PHDF5)" || { echo "venv-phdf5 needs mpicc and hdf5-mpich (apt-get install libhdf5-mpich-dev mpich)"; exit 2; }
	@test -x $(PHDF5)/bin/python || $(PYTHON) -m venv $(PHDF5)
	$(PHDF5_UV) 'setuptools>=68' wheel Cython numpy pkgconfig
	CC=mpicc CFLAGS=$(PHDF5_CFLAGS) $(PHDF5_PIP) install -c $(LOCK) --no-binary=mpi4py 'mpi4py>=4'
	CC=mpicc CFLAGS=$(PHDF5_CFLAGS) HDF5_MPI=ON HDF5_PKGCONFIG_NAME=hdf5-mpich \
		$(PHDF5_PIP) install -c $(LOCK) --no-build-isolation --no-binary=h5py 'h5py>=3.10'
	@# uv, not pip: the extras' dozens of wheels in seconds; the two builds above stay
	$(PHDF5_UV) -e '.[all]'
	@# the mpich wheel's mpiexec would shadow the system MPICH this mpi4py uses
	$(PHDF5_PIP) uninstall -y mpich
	@$(PHDF5)/bin/python -c "import h5py, sys; sys.exit(not h5py.get_config().mpi)"
	@rm -f $(PHDF5)/.deps-*
	@touch $@

demo: $(CORE_STAMP)
	$(BIN)/iotune run sweeps/quick.yaml -o results/demo --overwrite --plot

# The suite waits part of the time (on sweeps in other processes, servers, kernels,
# daemons): three pytest workers keep two cores about 86 % busy; one file stays on one
# worker (--dist loadfile), so a file's module fixtures (a Binder venv, a sweep) are
# built once; the files with the most slow tests go first (tests/conftest.py), so that
# no long file is the last to start. TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= 3
XDIST := -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder
PYTEST := $(BIN)/python -m pytest --durations=25 $(if $(filter-out 0,$(TEST_WORKERS)),$(XDIST))

# Every Python process the suite starts (a CLI run, a spawned trial worker, a dask worker,
# a Jupyter kernel) imports numpy, xarray and the format libraries. uv installs no bytecode,
# so where PYTHONDONTWRITEBYTECODE is set (as on CI machines) each of those processes
# compiled them from source again: a tiny `iotune run` took 5.2 s of CPU, 1.9 s with
# bytecode. The suite writes bytecode, once, into the venvs and the checkout.
test test-fast: export PYTHONDONTWRITEBYTECODE =

# lint before the suite; `make -j2 test` (CI) lints while the parallel-HDF5 venv compiles
test: check-lock lint $(if $(HAVE_PHDF5),$(PHDF5_STAMP))
	$(PYTEST)

test-fast: $(STAMP)
	$(PYTEST) -m "not slow"

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
