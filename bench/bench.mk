# `make bench`: Google Benchmark figures and their ratios to in-run references.
BENCH := $(BUILD)/bench/bench_rngtrk

$(BENCH): bench/bench_rngtrk.cpp c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -g -Wall -Wextra -Ic_api -o $@ $< -L$(BUILD) -lrngtrk \
	    -Wl,-rpath,'$$ORIGIN/..' -lbenchmark -pthread

.PHONY: bench
bench: $(BENCH)
	$(BENCH) --benchmark_out=$(BUILD)/bench/results.json --benchmark_out_format=json \
	    --benchmark_min_time=0.5 $(BENCH_ARGS)
	python3 bench/ratios.py $(BUILD)/bench/results.json

# `make bench-python`: the Python binding's per-call costs next to a
# pure-Python tracker and numpy's Philox, measured in the same run.
.PHONY: bench-python
bench-python: lib
	$(PYTHON) bench/bench_python.py
