# SPDX-License-Identifier: Apache-2.0
# Test binaries (included by the top-level Makefile).  `make test` builds
# them, then tests/run_all.sh runs every suite.
TEST_BUILD := $(BUILD)/tests
# GTEST_PREFIX: a GoogleTest outside the system folders (include/ and lib/
# under it), e.g. on a GPU machine whose image has none.
GTEST_PREFIX ?=
GTEST_INC := $(if $(GTEST_PREFIX),-I$(GTEST_PREFIX)/include)
GTEST_LIBS := $(if $(GTEST_PREFIX),-L$(GTEST_PREFIX)/lib) -lgtest -lgtest_main -pthread
# The test programs' optimisation (the sanitizer builds lower it: below).
TEST_OPTFLAGS ?= -O2 -g
TEST_CXXFLAGS := -std=c++17 $(TEST_OPTFLAGS) -Wall -Wextra $(WERROR_FLAG) $(GTEST_INC) -DRNGTRK_VECTORS_DIR=\"$(CURDIR)/tests/vectors\" $(CXXFLAGS)

API_TEST_SOURCES  := $(wildcard tests/api/*.cpp)
CORE_TEST_SOURCES := $(wildcard tests/core/*.cpp)

# Recipe replay (tests/c/checkpoint_recipes.c), in C99, shared by the C API
# tests and run_recipe, which the binding tests call.
RECIPES_OBJ := $(TEST_BUILD)/checkpoint_recipes.o
$(RECIPES_OBJ): tests/c/checkpoint_recipes.c tests/c/checkpoint_recipes.h c_api/rngtrk.h
	@mkdir -p $(dir $@)
	$(CC) -std=c99 -O2 -Wall -Wextra -pedantic $(WERROR_FLAG) -Ic_api -c -o $@ $<

$(TEST_BUILD)/run_recipe: tests/c/run_recipe.c $(RECIPES_OBJ) $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	$(CC) -std=c99 -O2 -Wall -Wextra -pedantic $(WERROR_FLAG) -Ic_api -o $@ $< $(RECIPES_OBJ) -L$(BUILD) -lrngtrk \
	    -Wl,-rpath,'$$ORIGIN/..'

# The C API tests see only the public header and link the shared object.
$(TEST_BUILD)/api_tests: $(API_TEST_SOURCES) tests/api/support.h c_api/rngtrk.h $(RECIPES_OBJ) $(SHARED_LIB) $(BUILD)/librngtrk.so \
                        $(BUILD)/$(SONAME)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -Ic_api -o $@ $(API_TEST_SOURCES) $(RECIPES_OBJ) -L$(BUILD) -lrngtrk \
	    -Wl,-rpath,'$$ORIGIN/..' $(GTEST_LIBS) -ldl

# The core tests reach C++ internals, so they link the static archive.
$(TEST_BUILD)/core_tests: $(CORE_TEST_SOURCES) $(wildcard tests/core/*.h) $(wildcard cuda/*.h) $(STATIC_LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(TEST_CXXFLAGS) -Ic_api -Icore -Icuda -o $@ $(CORE_TEST_SOURCES) $(STATIC_LIB) $(CUDA_LIBS) $(GTEST_LIBS)

# No -pedantic: ISO C forbids casting dlsym's void * to a function pointer,
# which POSIX requires to work.
$(TEST_BUILD)/dlopen_consumer: tests/c/dlopen_consumer.c c_api/rngtrk.h
	@mkdir -p $(dir $@)
	$(CC) -std=c99 -Wall -Wextra $(WERROR_FLAG) -Ic_api -o $@ $< -ldl

# The installed device header, compiled as host C++ against the library.
$(TEST_BUILD)/device_header_host: tests/c/device_header_host.cpp $(DEVICE_HEADER) $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	@mkdir -p $(dir $@)
	$(CXX) -std=c++17 -O2 -Wall -Wextra $(WERROR_FLAG) -ffp-contract=off -Ic_api -I$(BUILD)/include -o $@ $< -L$(BUILD) -lrngtrk \
	    -Wl,-rpath,'$$ORIGIN/..'

# Device tests, built with nvcc when the build has CUDA (they skip, saying
# why, without a GPU; make test-gpu requires one).
ifeq ($(CUDA),1)
$(TEST_BUILD)/cuda_tests: tests/cuda/test_cuda.cu $(DEVICE_HEADER) c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME) $(CUDA_MODULE)
	@mkdir -p $(dir $@)
	$(NVCC) -std=c++17 -O2 --fmad=false $(NVCC_COMPRESS) --threads $(NVCC_THREADS) $(CUDA_ARCHS) -Ic_api -I$(BUILD)/include $(GTEST_INC) -o $@ $< \
	    -L$(BUILD) -lrngtrk $(if $(GTEST_PREFIX),-L$(GTEST_PREFIX)/lib) -lgtest -lgtest_main -Xlinker -rpath,'$$ORIGIN/..'
CUDA_TEST_PROGRAM := $(TEST_BUILD)/cuda_tests
endif

.PHONY: test-gpu
test-gpu:
	@test -n "$(CUDA_TEST_PROGRAM)" || { echo "test-gpu: this build has no CUDA: no $(NVCC) (install NVIDIA's CUDA toolkit, or set CUDA_HOME), or CUDA=0"; exit 1; }
	@# GoogleTest only (the CUDA tests use nothing else): from GTEST_PREFIX, as
	@# carried to a GPU machine with no package access, or Debian's.
	@$(if $(GTEST_PREFIX),true,tools/install-deps.sh gtest)
	@$(MAKE) --no-print-directory $(CUDA_TEST_PROGRAM)
	RNGTRK_REQUIRE_GPU=1 $(CUDA_TEST_PROGRAM)

$(TEST_BUILD)/crash_safe_test: tests/c/crash_safe_test.c c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	@mkdir -p $(dir $@)
	$(CC) -std=c99 -O2 -Wall -Wextra $(WERROR_FLAG) -Ic_api -o $@ $< -L$(BUILD) -lrngtrk -Wl,-rpath,'$$ORIGIN/..'

# The C driver of the cross-language draw test (tests/cross_language/run.py):
# C99, the public header only, linked to the shared library.
$(TEST_BUILD)/draw_cases: tests/cross_language/draw_cases.c c_api/rngtrk.h $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	@mkdir -p $(dir $@)
	$(CC) -std=c99 -O2 -Wall -Wextra -pedantic $(WERROR_FLAG) -Ic_api -o $@ $< -L$(BUILD) -lrngtrk -Wl,-rpath,'$$ORIGIN/..'

TEST_PROGRAMS := $(TEST_BUILD)/crash_safe_test $(CUDA_TEST_PROGRAM) $(TEST_BUILD)/device_header_host $(TEST_BUILD)/api_tests $(TEST_BUILD)/core_tests $(TEST_BUILD)/dlopen_consumer \
                 $(TEST_BUILD)/run_recipe $(TEST_BUILD)/draw_cases

.PHONY: test test-programs
test-programs: all $(TEST_PROGRAMS) $(DEMO) $(MPI_PROGRAM)
# Installs what is missing first (tools/install-deps.sh test), then builds
# in a sub-make, which finds the toolchains just installed.
test:
	@tools/install-deps.sh test
	@$(MAKE) $(BUILD_JOBS) --no-print-directory test-programs
	tests/run_all.sh

# `make test-packaging`: rngtrk as each ecosystem's user gets it, each from
# a copy of this checkout with nothing installed: the Python wheel (the
# README's command offline, its manylinux tag, stripped library), the sdist
# in a new venv, pip install -e, pip with no compiler (tests/wheel_test.sh);
# the Rust crates with no make and no installed library, as a path
# dependency and as packed, and their bad input (tests/rust_bundled_test.sh);
# the wheel built in a Debian 11 root (root; tests/wheel_test.sh manylinux).
# Not in make test: each compiles the library again (about 10 minutes on
# 2 cores); .ci/run runs it.  make test has the staged make install with C
# and Rust (install_test.sh, rust_outside_test.sh) and CMake's
# add_subdirectory and FetchContent (cmake_subproject_test.sh).
.PHONY: test-packaging test-wheel test-rust-bundled wheel-manylinux
test-packaging: test-wheel test-rust-bundled
	tests/wheel_test.sh manylinux
test-wheel: lib
	tests/wheel_test.sh
test-rust-bundled:
	CARGO=$(CARGO) tests/rust_bundled_test.sh
wheel-manylinux:
	tools/build_wheel_manylinux.sh

# `make sdist`: the Python source archive (the package, its build backend and
# the C++ sources the backend compiles when the archive is installed), in
# dist/ or SDIST_DIR.
SDIST_DIR ?= dist
.PHONY: sdist
sdist:
	@mkdir -p $(SDIST_DIR)
	cd bindings/python/build_backend && /usr/bin/python3 -c \
	    'import sys, rngtrk_build; print(sys.argv[1] + "/" + rngtrk_build.build_sdist(sys.argv[1]))' $(abspath $(SDIST_DIR))

# `make test-fresh [SUITE=trixie]`: the README's commands on a new, minimal
# Debian of that release, this machine's by default (as root: debootstrap, a
# chroot in a private mount namespace; tests/fresh_machine_test.sh).
.PHONY: test-fresh
test-fresh:
	tests/fresh_machine_test.sh $(SUITE)

# `make test-werror`: the project's warnings as errors (WERROR=1) with g++
# and with this release's clang, each in its own build folder without CUDA:
# the library, the rngtrk command, the test programs and the demo; and
# every header of core/, c_api/ and cuda/ compiled alone by both
# (tests/headers_alone_test.sh).  In .ci/run and in make test-fresh.
WERROR_COMPILERS ?= gcc:g++ clang:clang++
WERROR_PROGRAMS = all $(TEST_PROGRAMS) $(DEMO)
.PHONY: test-werror
test-werror:
	@tools/install-deps.sh compilers unit
	@set -e; for pair in $(WERROR_COMPILERS); do \
	    cc=$${pair%%:*} cxx=$${pair#*:}; \
	    echo "== -Werror: $$cxx $$($$cxx -dumpversion), $$cc"; \
	    tests/headers_alone_test.sh $$cxx; \
	    $(MAKE) --no-print-directory $(BUILD_JOBS) BUILD=$(BUILD)/werror-$$cc CUDA=0 CC=$$cc CXX=$$cxx WERROR=1 werror-programs; \
	done
.PHONY: werror-programs
werror-programs: $(WERROR_PROGRAMS)

# `make check`: the developers' fast inner loop (docs/testing.md): the C and
# C++ unit tests, the Python tests but the packaging ones, and the Rust unit
# and integration tests.  No MPI, no torch.distributed, no fresh clone, no
# package installs (what is missing is named in one line); `make test`
# remains the whole suite.
.PHONY: check check-run
check:
	@missing=$$(tools/install-deps.sh --missing unit python pytest); [ -z "$$missing" ] || { \
	    echo "check: missing Debian packages:$$missing (install them, or run tools/install-deps.sh unit python pytest)"; exit 1; }
	@$(MAKE) --no-print-directory check-run
check-run: all $(TEST_BUILD)/api_tests $(TEST_BUILD)/core_tests $(TEST_BUILD)/run_recipe
	tests/run_all.sh check

# Sanitizers: the C/C++ test programs rebuilt with the library under
# AddressSanitizer + UndefinedBehaviorSanitizer, or ThreadSanitizer, in their
# own build folders (no CUDA: nvcc does not take these flags).  Library,
# engines and tests at -O1 with line tables only (-g1: the reports keep
# file and line), the engines without library.mk's -O3, which changes no
# bit (SAN_ENGINE_FLAGS): with -O2/-O3 and full debug information the
# sanitizer builds took most of CI's 17 minutes for make test-asan.
SAN_TESTS := $(TEST_BUILD)/api_tests $(TEST_BUILD)/core_tests
ASAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
TSAN_FLAGS := -fsanitize=thread
SAN_ENGINE_FLAGS := -fno-trapping-math
SAN_OPTFLAGS := -O1 -g1

.PHONY: test-asan test-tsan test-valgrind test-valgrind-rust
test-asan:
	@tools/install-deps.sh unit
	$(MAKE) --no-print-directory BUILD=$(BUILD)/asan CUDA=0 OPTFLAGS="$(SAN_OPTFLAGS)" TEST_OPTFLAGS="$(SAN_OPTFLAGS)" \
	    ENGINE_FLAGS="$(SAN_ENGINE_FLAGS)" \
	    CXXFLAGS="$(ASAN_FLAGS)" \
	    LDFLAGS="$(ASAN_FLAGS)" $(BUILD)/asan/tests/api_tests $(BUILD)/asan/tests/core_tests
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/asan/tests/core_tests --gtest_brief=1
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 $(BUILD)/asan/tests/api_tests --gtest_brief=1 \
	    --gtest_filter='-CurandOracle.*'
test-tsan:
	@tools/install-deps.sh unit
	$(MAKE) --no-print-directory BUILD=$(BUILD)/tsan CUDA=0 OPTFLAGS="$(SAN_OPTFLAGS)" TEST_OPTFLAGS="$(SAN_OPTFLAGS)" \
	    ENGINE_FLAGS="$(SAN_ENGINE_FLAGS)" \
	    CXXFLAGS="$(TSAN_FLAGS)" \
	    LDFLAGS="$(TSAN_FLAGS)" $(BUILD)/tsan/tests/api_tests
	TSAN_OPTIONS=halt_on_error=1 $(BUILD)/tsan/tests/api_tests --gtest_brief=1 \
	    --gtest_filter='Stress.*:Sample.Threads*:Tracker.*:Sample.TrackerDraws*:Errors.TrackerMessage*'
# Valgrind on the C test programs (the heavy statistics test excepted: it is
# the same code as the others, a million times).
test-valgrind:
	@tools/install-deps.sh unit reliability
	@$(MAKE) --no-print-directory $(TEST_BUILD)/api_tests $(TEST_BUILD)/crash_safe_test $(TEST_BUILD)/dlopen_consumer
	valgrind --leak-check=full --error-exitcode=1 -q $(TEST_BUILD)/api_tests --gtest_brief=1 \
	    --gtest_filter='-Sample.Statistics*:CurandOracle.*:Sample.Threads*'
	valgrind --leak-check=full --error-exitcode=1 -q $(TEST_BUILD)/crash_safe_test >/dev/null
	valgrind --leak-check=full --error-exitcode=1 -q $(TEST_BUILD)/dlopen_consumer $(BUILD)/librngtrk.so.0

# The Rust crate's test binaries under valgrind: no invalid access and no
# leaked tracker, guard or error (guards dropped in panics included).
test-valgrind-rust:
	@tools/install-deps.sh reliability rust
	@$(MAKE) --no-print-directory lib
	CARGO=$(CARGO) tools/valgrind_rust_tests.sh

# `make test-torch-dist` (also in make test): a tp=2 x dp=2 training job on
# torch.distributed (gloo), resumed on tp=2 x dp=1 (tests/torch_dist/).
.PHONY: test-torch-dist
test-torch-dist:
	@tools/install-deps.sh torch
	@$(MAKE) --no-print-directory lib
	tests/torch_dist/run.sh

# `make test-upstream MEGATRON_LM=<a Megatron-LM checkout> SLAPO=<a slapo
# checkout>` (either or both): the frameworks' own RNG tests against their
# random.py, with rngtrk's install(), and (Megatron-LM) with rngtrk's names
# (tests/upstream/), and our signatures against Megatron's source; and
# Megatron-LM's own save_checkpoint / load_checkpoint on gloo ranks, on new
# layouts, under install() (tests/upstream/run_megatron_checkpoints.py;
# torch 2.2 or later); with ACCELERATE=<an Accelerate checkout>, its own
# save_state / load_state with rngtrk.torch.accelerate.register()
# (tests/upstream/run_accelerate.py; Debian unstable has its imports);
# with TORCHTITAN=<a torchtitan checkout> (TORCHTITAN_PATH=<folders holding
# tyro, spmd_types, docstring_parser, typeguard, shtab>), its own
# CheckpointManager with "rng": RNGState(process=True) in its states
# (tests/upstream/run_torchtitan.py); with LIGHTNING=<a pytorch-lightning
# checkout> (LIGHTNING_PATH=<the src folders of lightning_utilities and
# torchmetrics>), Fabric's own save / load with "rng": RNGState(process=True)
# in its state, and the Trainer's fit and resume with RNGStateCallback
# (tests/upstream/run_lightning.py).  On
# CPU-only torch they run twice: as they are, and with a CPU stand-in of the
# CUDA generator (tests/upstream/cuda_emulation.py).  MEGATRON_LM names a
# checkout of main, whose signatures rngtrk.torch.megatron's names follow;
# MEGATRON_LM_LINES=<checkouts> runs the same tests of other lines of
# Megatron-LM (dev, a release branch), whose forms install() follows, without
# the signature check.  Needs checkouts, so it is not part of make test
# (docs/testing.md).
UPSTREAM_EMULATE = $(PYTHON) -c 'import torch; print("" if torch.cuda.is_available() else "--emulate-cuda")'
.PHONY: test-upstream
test-upstream:
	@test -n "$(MEGATRON_LM)$(MEGATRON_LM_LINES)$(SLAPO)$(ACCELERATE)$(TORCHTITAN)$(LIGHTNING)" || { echo "make test-upstream needs MEGATRON_LM=<a Megatron-LM main checkout>, MEGATRON_LM_LINES=<checkouts of other lines>, SLAPO=<a slapo checkout>, ACCELERATE=<an Accelerate checkout>, TORCHTITAN=<a torchtitan checkout> (TORCHTITAN_PATH=<folders of its imports>) and/or LIGHTNING=<a pytorch-lightning checkout> (LIGHTNING_PATH=<folders of its imports>)"; exit 2; }
	@tools/install-deps.sh torch pytest
	@$(MAKE) --no-print-directory lib
	@emulate=$$($(UPSTREAM_EMULATE)); set -e; \
	if [ -n "$(MEGATRON_LM)" ]; then \
	    MEGATRON_LM=$(abspath $(MEGATRON_LM)) $(PYTHON) -m pytest -q -p no:cacheprovider \
	        bindings/python/tests/test_torch_megatron.py -k upstream_source; \
	    $(PYTHON) tests/upstream/run_megatron_tests.py $(MEGATRON_LM); \
	    [ -z "$$emulate" ] || $(PYTHON) tests/upstream/run_megatron_tests.py $(MEGATRON_LM) $$emulate; \
	    $(PYTHON) tests/upstream/run_megatron_checkpoints.py $(MEGATRON_LM); \
	fi; \
	for line in $(MEGATRON_LM_LINES); do \
	    $(PYTHON) tests/upstream/run_megatron_tests.py $$line; \
	    [ -z "$$emulate" ] || $(PYTHON) tests/upstream/run_megatron_tests.py $$line $$emulate; \
	    $(PYTHON) tests/upstream/run_megatron_checkpoints.py $$line; \
	done; \
	if [ -n "$(SLAPO)" ]; then \
	    $(PYTHON) tests/upstream/run_slapo_tests.py $(SLAPO); \
	    [ -z "$$emulate" ] || $(PYTHON) tests/upstream/run_slapo_tests.py $(SLAPO) $$emulate; \
	fi; \
	if [ -n "$(ACCELERATE)" ]; then \
	    $(PYTHON) tests/upstream/run_accelerate.py $(ACCELERATE); \
	fi; \
	if [ -n "$(TORCHTITAN)" ]; then \
	    $(PYTHON) tests/upstream/run_torchtitan.py $(TORCHTITAN) $(foreach p,$(TORCHTITAN_PATH),--path $(p)); \
	fi; \
	if [ -n "$(LIGHTNING)" ]; then \
	    $(PYTHON) tests/upstream/run_lightning.py $(LIGHTNING) $(foreach p,$(LIGHTNING_PATH),--path $(p)); \
	fi
