# SPDX-License-Identifier: Apache-2.0
# `make test-mpi`: the MPI programs (tests/mpi/), built with Open MPI's mpicc
# (installed first, with mpi4py, through tools/install-deps.sh).
MPICC ?= mpicc
MPI_PROGRAM := $(BUILD)/tests/mpi_training

$(MPI_PROGRAM): tests/mpi/mpi_training.c c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	@mkdir -p $(dir $@)
	$(MPICC) -std=c99 -O2 -Wall -Wextra $(WERROR_FLAG) -Ic_api -o $@ $< -L$(BUILD) -lrngtrk -Wl,-rpath,'$$ORIGIN/..'

.PHONY: test-mpi
test-mpi:
	@tools/install-deps.sh mpi python
	@$(MAKE) --no-print-directory $(MPI_PROGRAM)
	tests/mpi/run_mpi_tests.sh
