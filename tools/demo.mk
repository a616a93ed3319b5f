# SPDX-License-Identifier: Apache-2.0
# `make demo`: the simulated training loop in C (tools/demo_training_loop.c),
# then its Python part (tools/demo_resume.py) and its Rust part
# (bindings/rust/examples/demo_resume.rs) resume C's checkpoint, then the
# Open MPI run.  It first installs what is missing (tools/install-deps.sh
# demo).  Without the build toolchain it stops, naming what to install; a
# later part whose toolchain is still missing says so in one line and the
# others run.
DEMO := $(BUILD)/demo_training_loop
DEMO_DIR := $(BUILD)/demo

$(DEMO): tools/demo_training_loop.c c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	$(CC) -std=c99 -O2 -Wall -Wextra -pedantic $(WERROR_FLAG) -Ic_api -o $@ $< -L$(BUILD) -lrngtrk -Wl,-rpath,'$$ORIGIN'

.PHONY: demo demo-run
demo:
	@tools/install-deps.sh demo || { \
	    missing=$$(tools/install-deps.sh --missing build); \
	    if [ -n "$$missing" ]; then \
	        echo "demo: building rngtrk needs the Debian packages$$missing; install them, then run make demo again"; \
	        exit 1; \
	    fi; \
	    echo "demo: not every package could be installed; the parts that need them are skipped"; }
	@$(MAKE) $(BUILD_JOBS) --no-print-directory demo-run

# A sub-make, so that the toolchains just installed are found (CARGO, MPICC).
demo-run: all $(DEMO)
	@mkdir -p $(DEMO_DIR)
	$(DEMO) $(DEMO_DIR)
	@if $(PYTHON) -c 'import cffi, numpy' 2>/dev/null; then \
	    echo "--- Python: a new process loads C's checkpoint and continues"; \
	    PYTHONPATH=bindings/python $(PYTHON) tools/demo_resume.py $(DEMO_DIR); \
	else echo "demo: Python part skipped: $(PYTHON) lacks cffi or numpy (Debian: python3-cffi python3-numpy)"; fi
	@if command -v $(CARGO) >/dev/null 2>&1; then \
	    echo "--- Rust: a new process loads C's checkpoint and continues"; \
	    cd bindings/rust && $(CARGO) run --offline --quiet --example demo_resume -- $(CURDIR)/$(DEMO_DIR); \
	else echo "demo: Rust part skipped: no cargo (Debian: cargo, or rustup)"; fi
	@if command -v mpirun >/dev/null 2>&1 && command -v $(MPICC) >/dev/null 2>&1; then \
	    echo "--- distributed: Open MPI, 8 ranks (tp=2 pp=2 dp=2), then resume on 4 (tp=4)"; \
	    $(MAKE) -s --no-print-directory $(MPI_PROGRAM) && tests/mpi/run_mpi_tests.sh; \
	else echo "demo: MPI part skipped: no mpirun or $(MPICC) (Debian: openmpi-bin libopenmpi-dev)"; fi
