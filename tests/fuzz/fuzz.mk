# SPDX-License-Identifier: Apache-2.0
# `make fuzz FUZZ_SECONDS=N`: libFuzzer harnesses against the library rebuilt
# with clang + ASan + UBSan + coverage in build/fuzz: this release's clang
# (Debian's clang and libclang-rt-dev, installed first).
# The checked-in corpora (tests/fuzz/corpus/) seed each run; what a run
# finds goes to a temporary folder, so the repository stays unchanged.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_CXX ?= clang++
FUZZ_BUILD := $(BUILD)/fuzz
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -g
FUZZ_HARNESSES := load state cli

$(FUZZ_BUILD)/fuzz_%: tests/fuzz/fuzz_%.cpp c_api/rngtrk.h $(wildcard core/*.cpp core/*.h c_api/*.cpp) $(CLI_USAGE)
	$(MAKE) --no-print-directory BUILD=$(FUZZ_BUILD)/lib CUDA=0 CXX=$(FUZZ_CXX) OPTFLAGS="-O1" \
	    CXXFLAGS="$(FUZZ_SAN) -fsanitize=fuzzer-no-link" $(FUZZ_BUILD)/lib/librngtrk.a
	@mkdir -p $(FUZZ_BUILD)
	for f in $(CLI_SOURCES); do \
	    $(FUZZ_CC) -std=c99 -O1 $(FUZZ_SAN) -fsanitize=fuzzer-no-link -D_POSIX_C_SOURCE=200809L -Ic_api -I$(dir $(CLI_USAGE)) \
	        -Dmain=rngtrk_cli_main -w -c $$f -o $(FUZZ_BUILD)/cli_$$(basename $$f .c).o || exit 1; \
	done
	$(FUZZ_CXX) -std=c++17 -O1 $(FUZZ_SAN) -fsanitize=fuzzer -Ic_api -o $@ $< $(FUZZ_BUILD)/cli_*.o \
	    $(FUZZ_BUILD)/lib/librngtrk.a -lm -pthread

.PHONY: fuzz fuzz-run
fuzz:
	@tools/install-deps.sh reliability
	@$(MAKE) --no-print-directory fuzz-run
fuzz-run: $(addprefix $(FUZZ_BUILD)/fuzz_,$(FUZZ_HARNESSES))
	@for h in $(FUZZ_HARNESSES); do \
	    found=$$(mktemp -d); \
	    echo "== fuzz_$$h for $(FUZZ_SECONDS) s"; \
	    if $(FUZZ_BUILD)/fuzz_$$h -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 -print_final_stats=1 \
	        -artifact_prefix=$$found/ $$found tests/fuzz/corpus/$$h >$$found.log 2>&1; then \
	        grep -E "^stat::(number_of_executed_units|new_units_added)" $$found.log; \
	        rm -rf $$found $$found.log; \
	    else \
	        tail -40 $$found.log; echo "fuzz_$$h FAILED: the crashing input is in $$found"; exit 1; \
	    fi; \
	done
