# SPDX-License-Identifier: Apache-2.0
# `make bench`: Google Benchmark figures and their ratios to in-run references.
BENCH := $(BUILD)/bench/bench_rngtrk

$(BENCH): bench/bench_rngtrk.cpp c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Ic_api -o $@ $< -L$(BUILD) -lrngtrk \
	    -Wl,-rpath,'$$ORIGIN/..' -lbenchmark -pthread

# The sampling cases run once per CPU path this machine has (RNGTRK_CPU),
# each run with its own Random123 reference; ratios.py prints the
# "bench <case> <GB/s> vs random123_scalar <GB/s> ratio <r>" lines.
BENCH_PATHS ?= scalar avx2 avx512

.PHONY: bench
bench: $(BENCH)
	$(BENCH) --benchmark_filter='^BM_(rngtrk|reference)' --benchmark_out=$(BUILD)/bench/results.json \
	    --benchmark_out_format=json --benchmark_min_time=0.5 $(BENCH_ARGS)
	for p in $(BENCH_PATHS); do \
	    RNGTRK_CPU=$$p $(BENCH) --benchmark_filter='^BM_(sample|reference_random123)' \
	        --benchmark_out=$(BUILD)/bench/sample_$$p.json --benchmark_out_format=json \
	        --benchmark_min_time=0.5 $(BENCH_ARGS) >/dev/null || exit 1; \
	done
	python3 bench/ratios.py $(BUILD)/bench/results.json $(foreach p,$(BENCH_PATHS),$(BUILD)/bench/sample_$(p).json)
	$(MAKE) --no-print-directory bench-rust
	$(MAKE) --no-print-directory bench-torch

# `make bench-rust`: the safe Rust API's per-call cost next to the same C
# calls made raw through rngtrk::sys, in the same run (release build).
.PHONY: bench-rust
bench-rust: lib
	cd bindings/rust && $(CARGO) run --release --offline --quiet --example bench_overhead

# `make bench-python`: the Python binding's per-call costs next to a
# pure-Python tracker and numpy's Philox, measured in the same run.
.PHONY: bench-python
bench-python: lib
	$(PYTHON) bench/bench_python.py

# `make bench-torch`: rngtrk.torch's ops, one-pass dropout and fork next to
# torch's own in the same run, as ratios with their targets (CUDA where there
# is one; bench/bench_torch.py says what each figure is).
.PHONY: bench-torch
bench-torch: lib
	$(PYTHON) bench/bench_torch.py

# `make bench-dcp`: what rngtrk.torch.dcp.RNGState's save and load cost one
# rank of a 1k-, 4k- and 16k-rank job, the group simulated in one process
# (bench/bench_dcp.py says what the simulation replaces), with targets.
.PHONY: bench-dcp
bench-dcp: lib
	$(PYTHON) bench/bench_dcp.py

# `make bench-gpu`: device figures (needs a GPU; not a test).
BENCH_GPU := $(BUILD)/bench/bench_gpu
$(BENCH_GPU): bench/bench_gpu.cu c_api/rngtrk.h $(DEVICE_HEADER) $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O2 --fmad=false $(CUDA_ARCHS) -Ic_api -I$(BUILD)/include -o $@ $< -L$(BUILD) -lrngtrk \
	    -L$(CUDA_HOME)/lib64 -lcurand -Xlinker -rpath,'$$ORIGIN/..' -Xlinker -rpath,$(CUDA_HOME)/lib64

.PHONY: bench-gpu
bench-gpu: $(BENCH_GPU)
	$(BENCH_GPU) $(BUILD)/bench/gpu.json
	$(PYTHON) bench/bench_gpu_torch.py $(BUILD)/bench/gpu.json
