# `make test-mpi`: the MPI programs (tests/mpi/), built with Open MPI's mpicc.
MPICC ?= mpicc
MPI_PROGRAM := $(BUILD)/tests/mpi_training

$(MPI_PROGRAM): tests/mpi/mpi_training.c c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	@mkdir -p $(dir $@)
	$(MPICC) -std=c99 -O2 -Wall -Wextra -Ic_api -o $@ $< -L$(BUILD) -lrngtrk -Wl,-rpath,'$$ORIGIN/..'

.PHONY: test-mpi
test-mpi: $(MPI_PROGRAM)
	tests/mpi/run_mpi_tests.sh
