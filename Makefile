# SPDX-License-Identifier: Apache-2.0
# rngtrk — top-level Makefile.  `make help` prints this list.
#   make all           (or just make) the shared and static library, rngtrk.pc and the rngtrk command, in build/
#   make lib           the libraries and rngtrk.pc only
#   make demo          a simulated training loop: checkpoint, resume, identical draws
#   make test          every test (see tests/run_all.sh); prints "N passed, N failed, N skipped"
#   make check         the fast inner loop: C, C++, Python and Rust unit tests
#   make bench         Google Benchmark figures (ratios against a reference in the same run)
#   make bench-python  the Python binding's per-call costs, next to a pure-Python tracker
#   make bench-rust    the safe Rust API's per-call costs, next to the raw C calls
#   make bench-torch   rngtrk.torch's ops, dropout and fork next to torch's own, with targets
#   make bench-dcp     rngtrk.torch.dcp's save and load for one rank of 1k, 4k and 16k ranks (simulated)
#   make bench-gpu     device figures (needs a GPU)
#   make test-gpu      the CUDA tests alone (needs a GPU)
#   make test-mpi      the Open MPI runs (8 ranks, then 4 on another layout); also in make test
#   make test-torch-dist  a torch.distributed job (4 ranks, resumed on 2); also in make test
#   make test-fresh [SUITE=trixie|sid|bookworm]   the README's commands on a bare Debian of that release
#                      (this machine's by default; debootstrap; root)
#   make test-packaging   the wheel (offline, manylinux tag, stripped), the sdist, pip -e, the Rust crates
#                      with no make nor installed library, the Debian 11 wheel (root); in .ci/run
#   make test-wheel / test-rust-bundled   its Python part (no root) / its Rust part
#   make wheel-manylinux  the Python wheel built in a Debian 11 root (root): build/wheelhouse/
#   make cuda12        the CUDA 12 module for R525-R575 drivers, with Debian 13's CUDA 12.4 in a Debian 11 root
#                      (root): build/librngtrk_cuda12.so, beside the CUDA 13 one (docs/cuda.md)
#   make sdist         the Python source archive, which builds the library when installed: dist/
#   make test-werror   warnings as errors with g++ and clang, every header compiled alone
#   make test-aarch64  cross-built for aarch64, the C API tests under qemu-aarch64
#   make test-upstream MEGATRON_LM=DIR SLAPO=DIR ACCELERATE=DIR TORCHTITAN=DIR LIGHTNING=DIR   upstream's own RNG tests and checkpoints against rngtrk (docs/pytorch.md)
#   make test-asan / test-tsan / test-valgrind / test-valgrind-rust   the tests under sanitizers and valgrind
#   make fuzz          libFuzzer harnesses, FUZZ_SECONDS each (this release's clang)
#   make abi-check     the exported ABI against abi/librngtrk.abi
#   make abi-update    record a deliberate ABI change in abi/librngtrk.abi
#   make python-cdef   regenerate bindings/python/rngtrk/_cdef.py and _rngtrk_ffi.py from c_api/rngtrk.h
#   make bindgen       regenerate bindings/rust/rngtrk-sys/src/lib.rs from c_api/rngtrk.h (Debian's bindgen)
#   make install       PREFIX=/usr/local DESTDIR= LIBDIR= INCLUDEDIR= PKGCONFIGDIR= CMAKEDIR= BINDIR=
#                      (the library, headers, rngtrk.pc, the CMake package, the rngtrk command)
#   make uninstall     the same variables
#   make clean         remove build/
#   make help          this list
# Built for baseline x86-64: no -march=native (users' CPUs differ).

# `make` alone builds everything (the explicit object rules below would
# otherwise make the first of them the default).
.DEFAULT_GOAL := all

# The version lives in c_api/rngtrk.h only.
version_field = $(shell sed -n 's/^\#define RNGTRK_VERSION_$(1) \([0-9][0-9]*\)$$/\1/p' c_api/rngtrk.h)
VERSION_MAJOR := $(call version_field,MAJOR)
VERSION_MINOR := $(call version_field,MINOR)
VERSION_PATCH := $(call version_field,PATCH)
VERSION := $(VERSION_MAJOR).$(VERSION_MINOR).$(VERSION_PATCH)

PREFIX       ?= /usr/local
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR     ?= $(LIBDIR)/cmake/rngtrk
BINDIR       ?= $(PREFIX)/bin
DESTDIR      ?=

# The sources and flags of the library: library.mk, shared with CMakeLists.txt.
include library.mk

# `make demo`, `make test` and `make test-werror` build with every core of the machine unless
# a -j was given (their sub-makes get -j$(JOBS)).
JOBS ?= $(shell nproc 2>/dev/null || echo 1)
BUILD_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(JOBS))

CXX      ?= g++
CC       ?= cc
OPTFLAGS ?= $(DEFAULT_OPTFLAGS)
# WERROR=1 (make test-werror, CI): every warning of the library, the rngtrk
# command, the test programs and the demo is an error.
WERROR ?= 0
WERROR_FLAG := $(if $(filter 1,$(WERROR)),-Werror)
# clang or GCC (some warning options are GCC's only).
CXX_IS_CLANG := $(findstring clang,$(shell $(CXX) --version 2>/dev/null | head -1))
LIB_CXXFLAGS := $(OPTFLAGS) $(WARNINGS) $(WERROR_FLAG) $(LIB_FLAGS) -MMD -MP $(CXXFLAGS)
lib_includes = $(addprefix -I,$(if $(filter c_api/%,$<),$(C_API_INCLUDES),$(CORE_INCLUDES)))

BUILD  := build
OBJDIR := $(BUILD)/obj

# Only x86-64 targets build X86_64_SOURCES (library.mk).
# (Read quietly: before `make demo` has installed g++ there is no compiler to
# ask, and this machine's own name says the same for a native build.)
TARGET_MACHINE := $(shell $(CXX) -dumpmachine 2>/dev/null || uname -m)
ifeq ($(findstring x86_64,$(TARGET_MACHINE)),)
LIB_SOURCES := $(filter-out $(X86_64_SOURCES),$(LIB_SOURCES))
endif
LIB_OBJECTS := $(patsubst %.cpp,$(OBJDIR)/%.o,$(LIB_SOURCES))

# CUDA: the kernels are built whenever nvcc is there (make CUDA=0 opts out),
# as library.mk says (CUDA_ARCHS overrides the architectures).
CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
CUDA ?= $(if $(wildcard $(NVCC)),1,0)
CUDA_ARCHS ?= $(foreach a,$(CUDA_ARCHITECTURES),-gencode arch=compute_$(a)$(comma)code=sm_$(a)) \
              $(foreach a,$(CUDA_PTX_ARCHITECTURES),-gencode arch=compute_$(a)$(comma)code=compute_$(a))
# library.mk's compression where this nvcc knows it (asked once, and only
# when CUDA is built); NVCC_THREADS: nvcc compiles the architectures of one
# source on that many threads (5 architectures and PTX: 90 s on one core,
# 56 s on two, on the 2-core CI machine).
NVCC_COMPRESS := $(if $(filter 1,$(CUDA)),$(shell $(NVCC) --help 2>/dev/null | grep -q -e '--compress-mode' && echo '$(NVCC_COMPRESS_FLAGS)'))
NVCC_THREADS ?= 2
# The backend names the code it carries when a GPU runs none of it
# (cuda/arch_support.h): the -gencode list's machine code and PTX (code=sm_80
# and code=[sm_120,compute_120] alike), passed as RNGTRK_ARCH(80)RNGTRK_ARCH(90):
# nvcc splits a -D value at its commas.
cuda_codes = $(patsubst code=%,%,$(filter-out arch=%,$(subst $(comma), ,$(subst [,,$(subst ],,$(CUDA_ARCHS))))))
cuda_list = $(subst $(space),,$(foreach a,$(patsubst $(1)%,%,$(filter $(1)%,$(cuda_codes))),RNGTRK_ARCH($(a))))
CUDA_CODE_DEFINES = '-DRNGTRK_CUDA_SASS=$(call cuda_list,sm_)' '-DRNGTRK_CUDA_PTX=$(call cuda_list,compute_)'
NVCC_BUILD_FLAGS = $(NVCC_FLAGS) $(NVCC_COMPRESS) --threads $(NVCC_THREADS) $(CUDA_ARCHS) $(CUDA_CODE_DEFINES) \
                   -Xcompiler -fPIC,-fvisibility=hidden,-pthread $(addprefix -I,$(CUDA_INCLUDES))
ifeq ($(CUDA),1)
# The shared library links no CUDA runtime: its loader opens the module of
# the driver's CUDA major beside it (cuda/cuda_module.h); the kernels and
# their statically linked runtime are that module, librngtrk_cudaNN.so, NN
# this nvcc's major.  The static archive carries the kernels themselves.
CUDA_MAJOR := $(shell $(NVCC) --version 2>/dev/null | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p')
CUDA_MODULE := $(BUILD)/librngtrk_cuda$(CUDA_MAJOR).so
SHARED_OBJECTS := $(LIB_OBJECTS) $(patsubst %.cpp,$(OBJDIR)/%.o,$(CUDA_LOADER_SOURCES))
STATIC_OBJECTS := $(LIB_OBJECTS) $(patsubst %.cu,$(OBJDIR)/%.o,$(CUDA_SOURCES))
MODULE_OBJECTS := $(patsubst %.cu,$(OBJDIR)/%.o,$(CUDA_SOURCES)) $(patsubst %.cpp,$(OBJDIR)/%.o,$(CUDA_MODULE_SOURCES)) \
                  $(patsubst %.cpp,$(OBJDIR)/%.o,$(CUDA_MODULE_CORE_SOURCES))
SHARED_LIBS := -ldl
CUDA_LIBS := -L$(CUDA_HOME)/lib64 $(addprefix -l,$(CUDA_LINK_LIBRARIES))
# Static consumers link the CUDA runtime too (rngtrk.pc, the CMake package),
# from the consumer's toolkit, not this machine's: rngtrk.pc's variable
# cudalibdir (pkg-config --define-variable=cudalibdir=DIR), the CMake
# package's CUDAToolkit or RNGTRK_CUDA_LIBDIR, both defaulting to the
# folder NVIDIA's installers use, whatever CUDA_HOME this build had.
CUDA_STANDARD_LIBDIR := /usr/local/cuda/lib64
CUDA_PC_LIBS := -L$${cudalibdir} $(addprefix -l,$(CUDA_LINK_LIBRARIES))
CUDA_PC_VARIABLE := cudalibdir=$(CUDA_STANDARD_LIBDIR)
else
CUDA_MODULE :=
SHARED_OBJECTS := $(LIB_OBJECTS) $(patsubst %.cpp,$(OBJDIR)/%.o,$(NO_CUDA_SOURCES))
STATIC_OBJECTS := $(SHARED_OBJECTS)
MODULE_OBJECTS :=
SHARED_LIBS :=
CUDA_LIBS :=
CUDA_PC_LIBS :=
CUDA_PC_VARIABLE :=
endif

# (library.mk: its architecture lists are this object's.)
$(OBJDIR)/cuda/%.o: cuda/%.cu $(wildcard core/*.h) $(wildcard cuda/*.h) c_api/rngtrk.h library.mk
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCC_BUILD_FLAGS) -c $< -o $@

$(patsubst %.cpp,$(OBJDIR)/%.o,$(NO_CUDA_SOURCES)): $(OBJDIR)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(LIB_CXXFLAGS) $(addprefix -I,$(CORE_INCLUDES)) -c $< -o $@

# The loader and the module's table know the version and the core headers
# they were built from (a hash of core/*.h and cuda/cuda_module.h, which
# the loader compares before it calls a module).
MODULE_SOURCE_ID := $(shell cat $(sort $(wildcard core/*.h)) cuda/cuda_module.h 2>/dev/null | sha256sum | cut -c1-16)
$(patsubst %.cpp,$(OBJDIR)/%.o,$(CUDA_LOADER_SOURCES) $(CUDA_MODULE_SOURCES)): $(OBJDIR)/%.o: %.cpp c_api/rngtrk.h \
    $(wildcard core/*.h) cuda/cuda_module.h
	@mkdir -p $(dir $@)
	$(CXX) $(LIB_CXXFLAGS) $(addprefix -I,$(CUDA_INCLUDES)) '-DRNGTRK_MODULE_VERSION="$(VERSION)"' \
	    '-DRNGTRK_MODULE_SOURCE_ID="$(MODULE_SOURCE_ID)"' -c $< -o $@

# make cuda12: the CUDA 12 module, built with Debian 13's CUDA 12.4 in a
# Debian 11 root (tools/build_cuda12.sh says how), next to this build's.
.PHONY: cuda12
cuda12:
	tools/build_cuda12.sh

# A CUDA module: the kernels, their runtime (static), and the table that
# is its one export.
$(CUDA_MODULE): $(MODULE_OBJECTS) cuda/cuda_module.map
	$(CXX) -shared $(MODULE_LINK_FLAGS) -o $@ $(MODULE_OBJECTS) $(CUDA_LIBS) $(LDFLAGS)

SONAME     := librngtrk.so.$(VERSION_MAJOR)
SHARED_LIB := $(BUILD)/librngtrk.so.$(VERSION)
STATIC_LIB := $(BUILD)/librngtrk.a
SHARED_ARCHIVE := $(OBJDIR)/shared-objects.a
PC_FILE    := $(BUILD)/rngtrk.pc
CLI        := $(BUILD)/rngtrk

.PHONY: all lib test demo bench install uninstall clean python-cdef bindgen help
# The list at the top of this file.
help:
	@sed -n 's/^#   //p' $(firstword $(MAKEFILE_LIST))
DEVICE_HEADER := $(BUILD)/include/rngtrk_device.cuh
all: lib $(CLI) $(DEVICE_HEADER)

# The installed device header: cuda/rngtrk_device.cuh with the core headers
# it includes pasted in (one file, no internal paths).
$(DEVICE_HEADER): cuda/rngtrk_device.cuh $(wildcard core/*.h) tools/amalgamate_device_header.sh
	@mkdir -p $(dir $@)
	tools/amalgamate_device_header.sh $@
lib: $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME) $(STATIC_LIB) $(PC_FILE) $(CUDA_MODULE) $(SHARED_ARCHIVE)

# A missing compiler is named in one line, with where to get it, before
# anything is built.
.PHONY: compilers-present
compilers-present:
	@for c in $(firstword $(CXX)) $(firstword $(CC)); do command -v $$c >/dev/null 2>&1 || { \
	    echo "make: no compiler $$c: install g++ (Debian: sudo apt-get install g++ make, or tools/install-deps.sh build)"; \
	    exit 1; }; done
$(SHARED_OBJECTS) $(STATIC_OBJECTS) $(MODULE_OBJECTS) $(CLI): | compilers-present

$(OBJDIR)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(LIB_CXXFLAGS) $(lib_includes) $(TARGET_FLAGS) -c $< -o $@

# The sampling engines' flags (library.mk says why).
objects_of = $(patsubst %.cpp,$(OBJDIR)/%.o,$(1))
$(call objects_of,$(ENGINE_SOURCES)): TARGET_FLAGS = $(ENGINE_FLAGS) \
    $(if $(filter $(call objects_of,$(AVX2_SOURCES)),$@),$(AVX2_FLAGS)) \
    $(if $(filter $(call objects_of,$(AVX512_SOURCES)),$@),$(AVX512_FLAGS) $(if $(CXX_IS_CLANG),,$(AVX512_GCC_FLAGS)))

$(SHARED_LIB): $(SHARED_OBJECTS) c_api/exports.map
	$(CXX) -shared -Wl,-soname,$(SONAME) $(LIB_LINK_FLAGS) -o $@ $(SHARED_OBJECTS) $(SHARED_LIBS) $(LDFLAGS)

$(BUILD)/$(SONAME) $(BUILD)/librngtrk.so: $(SHARED_LIB)
	ln -sf $(notdir $(SHARED_LIB)) $@

$(STATIC_LIB): $(STATIC_OBJECTS)
	rm -f $@
	ar rcs $@ $(STATIC_OBJECTS)

# The shared library's objects in one archive (not installed): the Python
# backend links the wheel's librngtrk from it (rngtrk_build_compile.py).
$(SHARED_ARCHIVE): $(SHARED_OBJECTS)
	rm -f $@
	ar rcs $@ $(SHARED_OBJECTS)

# The .pc names the install locations; `make install` writes it again with
# the PREFIX/LIBDIR/INCLUDEDIR given there.  The installed one finds its
# prefix from where it lies (${pcfiledir}), so an installed tree can move
# (and `pkg-config --define-prefix` agrees); libdir and includedir follow
# the prefix when they are under it.  Built with CUDA, the static line names
# the CUDA runtime (-lcudart_static) in ${cudalibdir}, the consumer's
# toolkit's folder (above; docs/c-api.md).
under_prefix = $(if $(filter $(PREFIX),$(1)),$${prefix},$(if $(filter $(PREFIX)/%,$(1)),$${prefix}/$(patsubst $(PREFIX)/%,%,$(1)),$(1)))
comma := ,
define make_pc
sed -e 's|@PREFIX@|$(2)|' -e 's|@LIBDIR@|$(call under_prefix,$(LIBDIR))|' \
    -e 's|@INCLUDEDIR@|$(call under_prefix,$(INCLUDEDIR))|' \
    -e 's|@VERSION@|$(VERSION)|' -e 's|@CUDA_LIBS@|$(CUDA_PC_LIBS)|' \
    -e 's|@CUDA_VARIABLE@|$(CUDA_PC_VARIABLE)|' pkgconfig/rngtrk.pc.in > $(1)
endef
$(PC_FILE): pkgconfig/rngtrk.pc.in c_api/rngtrk.h Makefile
	@mkdir -p $(BUILD)
	$(call make_pc,$@,$(PREFIX))

# The CMake package (find_package(rngtrk CONFIG)): its paths are relative to
# CMAKEDIR, so an installed tree can move.  The static target links what the
# .pc's Libs.private names; built with CUDA, the runtime comes from the
# consumer's toolkit (CMake's CUDAToolkit package where it finds one).
define make_cmake_config
sed -e 's|@VERSION@|$(VERSION)|g' -e 's|@VERSION_MAJOR@|$(VERSION_MAJOR)|g' -e 's|@VERSION_MINOR@|$(VERSION_MINOR)|g' \
    -e "s|@INCLUDEDIR_FROM_HERE@|$$(realpath -m --relative-to=$(CMAKEDIR) $(INCLUDEDIR))|" \
    -e 's|@STATIC_LINK_LIBRARIES@|stdc++;m;pthread|' -e 's|@WITH_CUDA@|$(if $(CUDA_PC_LIBS),ON,OFF)|' \
    -e 's|@CUDA_LINK_LIBRARIES@|$(subst $(space),;,$(CUDA_LINK_LIBRARIES))|' \
    -e 's|@CUDA_STANDARD_LIBDIR@|$(CUDA_STANDARD_LIBDIR)|' $(1) > $(2)
endef
space := $(empty) $(empty)

# The rngtrk command (tools/cli/) uses only the public C API, linked to the shared object.
# `rngtrk sample --help` prints tools/cli/sample_usage.txt: here it becomes a
# C string literal.
CLI_SOURCES := $(wildcard tools/cli/*.c)
CLI_USAGE   := $(BUILD)/gen/sample_usage.inc
$(CLI_USAGE): tools/cli/sample_usage.txt
	@mkdir -p $(dir $@)
	sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $< >$@
$(CLI): $(CLI_SOURCES) tools/cli/cli.h c_api/rngtrk.h $(CLI_USAGE) $(SHARED_LIB) $(BUILD)/librngtrk.so $(BUILD)/$(SONAME)
	$(CC) -std=c99 -O2 -Wall -Wextra -pedantic $(WERROR_FLAG) -D_POSIX_C_SOURCE=200809L -Ic_api -I$(BUILD)/gen -o $@ $(CLI_SOURCES) -lm \
	    -L$(BUILD) -lrngtrk -Wl,-rpath,'$$ORIGIN'

install: lib $(CLI) $(DEVICE_HEADER)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(BINDIR)
	install -m 644 c_api/rngtrk.h $(DESTDIR)$(INCLUDEDIR)/rngtrk.h
	install -m 644 $(DEVICE_HEADER) $(DESTDIR)$(INCLUDEDIR)/rngtrk_device.cuh
	install -m 755 $(SHARED_LIB) $(DESTDIR)$(LIBDIR)/
	ln -sf $(notdir $(SHARED_LIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(notdir $(SHARED_LIB)) $(DESTDIR)$(LIBDIR)/librngtrk.so
	install -m 644 $(STATIC_LIB) $(DESTDIR)$(LIBDIR)/
	@# The CUDA modules beside the library, where its loader looks (make
	@# cuda12 adds the CUDA 12 one to this build).
	for m in $(BUILD)/librngtrk_cuda[0-9]*.so; do if [ -e "$$m" ]; then install -m 755 "$$m" $(DESTDIR)$(LIBDIR)/; fi; done
	$(call make_pc,$(DESTDIR)$(PKGCONFIGDIR)/rngtrk.pc,$${pcfiledir}/$(shell realpath -m --relative-to=$(PKGCONFIGDIR) $(PREFIX)))
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/rngtrk.pc
	install -d $(DESTDIR)$(CMAKEDIR)
	$(call make_cmake_config,pkgconfig/rngtrkConfig.cmake.in,$(DESTDIR)$(CMAKEDIR)/rngtrkConfig.cmake)
	$(call make_cmake_config,pkgconfig/rngtrkConfigVersion.cmake.in,$(DESTDIR)$(CMAKEDIR)/rngtrkConfigVersion.cmake)
	chmod 644 $(DESTDIR)$(CMAKEDIR)/rngtrkConfig.cmake $(DESTDIR)$(CMAKEDIR)/rngtrkConfigVersion.cmake
	$(CC) -std=c99 -O2 -D_POSIX_C_SOURCE=200809L -Ic_api -I$(BUILD)/gen -o $(DESTDIR)$(BINDIR)/rngtrk $(CLI_SOURCES) -lm \
	    -L$(BUILD) -lrngtrk -Wl,-rpath,$(LIBDIR)
	@# What users of make install expect: programs find the library at once.
	@# Installing for this machine (no DESTDIR) as root refreshes the loader's
	@# cache; otherwise, and when LIBDIR is not among the loader's folders, say how.
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ] && command -v ldconfig >/dev/null 2>&1; then \
	    ldconfig; \
	    if ldconfig -p | grep -q " => $(LIBDIR)/$(SONAME)$$"; then \
	        echo "make install: ran ldconfig: programs find $(SONAME) in $(LIBDIR)"; \
	    else echo "make install: $(LIBDIR) is not among the loader's folders: add it to /etc/ld.so.conf.d/ and run ldconfig, or run programs with LD_LIBRARY_PATH=$(LIBDIR)"; fi; \
	else echo "make install: programs find $(SONAME) once ldconfig has run as root (or with LD_LIBRARY_PATH=$(DESTDIR)$(LIBDIR))"; fi

uninstall:
	rm -f $(DESTDIR)$(CMAKEDIR)/rngtrkConfig.cmake $(DESTDIR)$(CMAKEDIR)/rngtrkConfigVersion.cmake
	rm -f $(DESTDIR)$(INCLUDEDIR)/rngtrk.h $(DESTDIR)$(INCLUDEDIR)/rngtrk_device.cuh $(DESTDIR)$(PKGCONFIGDIR)/rngtrk.pc \
	      $(DESTDIR)$(LIBDIR)/$(notdir $(SHARED_LIB)) $(DESTDIR)$(LIBDIR)/$(SONAME) \
	      $(DESTDIR)$(LIBDIR)/librngtrk.so $(DESTDIR)$(LIBDIR)/librngtrk.a $(DESTDIR)$(BINDIR)/rngtrk \
	      $(DESTDIR)$(LIBDIR)/librngtrk_cuda[0-9]*.so
	@# The folders install made, when nothing else is in them (under a
	@# DESTDIR, their parents too, up to it).
	@for d in $(CMAKEDIR) $(PKGCONFIGDIR) $(LIBDIR) $(INCLUDEDIR) $(BINDIR); do \
	    while [ -d "$(DESTDIR)$$d" ] && [ "$$d" != / ] && rmdir "$(DESTDIR)$$d" 2>/dev/null; do \
	        [ -n "$(DESTDIR)" ] || break; d=$$(dirname "$$d"); \
	    done; \
	done

# The Python binding's cffi declarations come from the header: _cdef.py (the
# text) and _rngtrk_ffi.py (cffi's out-of-line ABI module of it, which the
# package imports).  Both are checked in, so importing needs no compiler and
# parses nothing; `make test` fails when they are stale.
PYTHON ?= /usr/bin/python3
python-cdef:
	@tools/install-deps.sh build python
	$(PYTHON) bindings/python/generate_cdef.py

# The Rust crate's raw declarations, generated by bindgen and checked in.
bindgen:
	@tools/install-deps.sh bindgen
	bindings/rust/rngtrk-sys/generate_sys.sh

# rustup's cargo lives in ~/.cargo/bin, which may not be on PATH.
CARGO ?= $(shell command -v cargo || echo $(HOME)/.cargo/bin/cargo)

# The ABI gate (docs/abi.md): `make abi-check` compares build/'s library with
# the committed baseline abi/librngtrk.abi (libabigail, Debian abigail-tools)
# and fails on anything that breaks existing callers; `make abi-update`
# rewrites the baseline on purpose.
ABI_BASELINE := abi/librngtrk.abi
ABIDW_FLAGS := --header-file c_api/rngtrk.h --no-corpus-path --no-comp-dir-path --drop-private-types \
               --exported-interfaces-only --drop-undefined-syms --no-show-locs --type-id-style hash
.PHONY: abi-check abi-update
abi-check: lib
	@tools/install-deps.sh abi
	tools/abi_check.sh $(ABI_BASELINE) $(SHARED_LIB)
abi-update: lib
	@tools/install-deps.sh abi
	abidw $(ABIDW_FLAGS) --out-file $(ABI_BASELINE) $(SHARED_LIB)

# `make test-aarch64`: the library, the rngtrk command and the C API tests
# cross-built for aarch64 (Grace: GH200/GB200 nodes) with Debian's
# g++-aarch64-linux-gnu and GoogleTest built from /usr/src/googletest, run
# under qemu-aarch64; then the shared sample vectors and golden checkpoints
# through the aarch64 rngtrk command.  The bits must equal x86-64's.
AARCH64_BUILD := $(BUILD)/aarch64
AARCH64_CROSS := CC=aarch64-linux-gnu-gcc CXX=aarch64-linux-gnu-g++ CUDA=0 BUILD=$(AARCH64_BUILD) \
                 GTEST_PREFIX=$(CURDIR)/$(AARCH64_BUILD)/gtest
GTEST_SRC ?= /usr/src/googletest/googletest
.PHONY: test-aarch64
test-aarch64:
	@tools/install-deps.sh aarch64
	@mkdir -p $(AARCH64_BUILD)/gtest/lib
	ln -sfn $(GTEST_SRC)/include $(AARCH64_BUILD)/gtest/include
	aarch64-linux-gnu-g++ -std=c++17 -O1 -I$(GTEST_SRC)/include -I$(GTEST_SRC) -pthread \
	    -c $(GTEST_SRC)/src/gtest-all.cc -o $(AARCH64_BUILD)/gtest/gtest-all.o
	aarch64-linux-gnu-g++ -std=c++17 -O1 -I$(GTEST_SRC)/include -c $(GTEST_SRC)/src/gtest_main.cc \
	    -o $(AARCH64_BUILD)/gtest/gtest_main.o
	ar rcs $(AARCH64_BUILD)/gtest/lib/libgtest.a $(AARCH64_BUILD)/gtest/gtest-all.o
	ar rcs $(AARCH64_BUILD)/gtest/lib/libgtest_main.a $(AARCH64_BUILD)/gtest/gtest_main.o
	$(MAKE) --no-print-directory $(AARCH64_CROSS) lib $(AARCH64_BUILD)/rngtrk $(AARCH64_BUILD)/tests/api_tests
	tests/aarch64_test.sh $(AARCH64_BUILD)

include tools/demo.mk
include tests/mpi/mpi.mk  # before tests.mk, whose test-programs lists $(MPI_PROGRAM)
include tests/tests.mk
include bench/bench.mk
include tests/fuzz/fuzz.mk

# The benchmarks (bench/bench.mk) install what they need first too, as
# order-only prerequisites (nothing is rebuilt for them): deps-PART runs
# tools/install-deps.sh PART.
$(BENCH) $(BENCH_GPU): | deps-bench
bench-python: | deps-python
bench-torch: | deps-torch
bench-dcp: | deps-torch
bench-rust: | deps-rust
deps-%:
	@tools/install-deps.sh $*

clean:
	rm -rf $(BUILD)

-include $(sort $(SHARED_OBJECTS:.o=.d) $(STATIC_OBJECTS:.o=.d) $(MODULE_OBJECTS:.o=.d))
