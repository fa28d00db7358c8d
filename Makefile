# pario: two commands for a new user, `make run` and `make test`.
# Each installs what is missing (Debian packages, a Python virtual
# environment with pinned dependencies), builds, then runs.  Plain `make`
# (the first target, `all`) installs what is missing and builds the engine,
# so `.venv/bin/pario` works right after it.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BUILD := build/engine
ENGINE := $(BUILD)/pario-engine
# The same engine built against MPICH (Debian installs it beside Open MPI;
# the *.mpich names always mean MPICH, whatever the alternatives say).
BUILD_MPICH := build/engine-mpich
APT_PACKAGES := openmpi-bin slurm-wlm munge glusterfs-server glusterfs-client libopenmpi-dev libhdf5-openmpi-dev mpich libmpich-dev libhdf5-mpich-dev libs3-dev liburing-dev fio cmake gcc make pkg-config chromium
# the peer of bench/bonnie_side_by_side.py
APT_PACKAGES += bonnie++
# bench/uring_per_io.py counts CPU and system calls per request with perf stat
APT_PACKAGES += linux-perf
PARIO := $(VENV)/bin/python -m pario

.PHONY: all deps apt venv build run test test-c test-asan test-py bench clean

# The default goal: a working pario (dependencies, then the engine).
all: deps build

deps: apt venv

# Install only the packages that are missing, so a warm machine stays fast.
apt:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "deps: installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
	  $$SUDO apt-get -o DPkg::Lock::Timeout=900 update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get -o DPkg::Lock::Timeout=900 install -y -q $$missing; \
	else echo "deps: Debian packages present"; fi

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	@$(PYTHON) -m venv --help >/dev/null 2>&1 || { echo "deps: $(PYTHON) has no venv module: apt-get install python3-venv"; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q -r requirements.txt
	$(VENV)/bin/pip install -q --no-deps -e .
	@touch $@

build: apt
	cmake -S engine -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BUILD) -j2
	cmake -S engine -B $(BUILD_MPICH) -DCMAKE_BUILD_TYPE=Release -DMPI_C_COMPILER=mpicc.mpich --no-warn-unused-cli -U 'HDF5_*' \
	  -DHDF5_C_COMPILER_EXECUTABLE=$$(command -v h5pcc.mpich) >/dev/null
	cmake --build $(BUILD_MPICH) -j2 --target pario-engine

# The CFS study, quick form, on the local disk in a directory made for it.
run: deps build
	@dir=$$(mktemp -d /var/tmp/pario-run.XXXXXX); \
	echo "make run: pario run cfs --quick --dir $$dir"; \
	$(PARIO) run cfs --quick --dir $$dir; status=$$?; \
	rmdir $$dir 2>/dev/null; exit $$status

test: deps build test-c test-asan test-py

test-c:
	cd $(BUILD) && ctest --output-on-failure

# The engine under AddressSanitizer + UBSan in its own build directory: the C
# unit tests, then every subcommand end to end (tests/sanitizers/e2e.py).
# Leaks inside the MPI library are suppressed by library name only.
ASAN_BUILD := build/asan
test-asan: apt
	cmake -S engine -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPARIO_SANITIZE=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j2
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/sanitizers/lsan.supp ctest --output-on-failure
	$(PYTHON) tests/sanitizers/e2e.py $(ASAN_BUILD)/pario-engine

test-py:
	$(VENV)/bin/python -m pytest -q tests

# pario beside fio's psync engine on the same shapes; prints the ratios.
bench: deps build
	$(VENV)/bin/python bench/fio_side_by_side.py

clean:
	rm -rf build
