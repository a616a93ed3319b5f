# `make demo`: the simulated training loop in C (tools/demo_training_loop.c),
# then its Python part (tools/demo_resume.py) and its Rust part
# (bindings/rust/examples/demo_resume.rs) resume C's checkpoint.
DEMO := $(BUILD)/demo_training_loop
DEMO_DIR := $(BUILD)/demo

$(DEMO): tools/demo_training_loop.c c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	$(CC) -std=c99 -O2 -Wall -Wextra -pedantic -Ic_api -o $@ $< -L$(BUILD) -lrngtrk -Wl,-rpath,'$$ORIGIN'

.PHONY: demo
demo: $(DEMO)
	@mkdir -p $(DEMO_DIR)
	$(DEMO) $(DEMO_DIR)
	PYTHONPATH=bindings/python $(PYTHON) tools/demo_resume.py $(DEMO_DIR)
	cd bindings/rust && $(CARGO) run --offline --quiet --example demo_resume -- $(CURDIR)/$(DEMO_DIR)
	@echo "--- distributed: Open MPI, 8 ranks (tp=2 pp=2 dp=2), then resume on 4 (tp=4)"
	$(MAKE) --no-print-directory $(MPI_PROGRAM)
	tests/mpi/run_mpi_tests.sh
