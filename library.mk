# SPDX-License-Identifier: Apache-2.0
# The library's sources and compiler flags: their one list.  The Makefile
# includes this file; CMakeLists.txt, the Python backend (rngtrk_build_compile.py,
# for sdists) and rngtrk-sys's build.rs read it: a source or a flag written here is
# built alike by all.  Keep to lines `NAME := words` (and comments, blank
# lines), no `+=` nor `$(...)`: the readers parse exactly that.
# tests/build_lists_test.sh checks that every .cpp of core/ and c_api/ is listed.

# Every source of the library but the CUDA backend, in build order.
LIB_SOURCES := core/checkpoint.cpp core/checkpoint_file.cpp core/checkpoint_json.cpp core/cpu_dispatch.cpp \
    core/crc32.cpp core/distributed.cpp core/ledger.cpp core/name_rules.cpp core/sample.cpp core/sample_avx2.cpp \
    core/sample_avx512.cpp core/sample_scalar.cpp core/sample_spec.cpp core/seed_policy.cpp core/state_table.cpp \
    core/stream.cpp core/tracker.cpp core/utf8.cpp c_api/api_cuda.cpp c_api/api_distributed.cpp \
    c_api/api_errors.cpp c_api/api_generation.cpp c_api/api_kind_names.cpp c_api/api_ledger.cpp \
    c_api/api_sample.cpp c_api/api_sample_spec.cpp c_api/api_tracker.cpp
# The AVX2 and AVX-512 engines (AVX2_SOURCES and AVX512_SOURCES below) exist
# only for x86-64 targets; elsewhere (aarch64: Grace in GH200/GB200 nodes)
# the scalar engine alone is built, with the same bits (make test-aarch64).
X86_64_SOURCES := core/sample_avx2.cpp core/sample_avx512.cpp
# With CUDA the kernels; without, the stub whose functions say so.
CUDA_SOURCES := cuda/cuda_backend.cu
NO_CUDA_SOURCES := cuda/cuda_unavailable.cpp
# The shared library's CUDA side is a loader (no CUDA runtime in it); the
# kernels become a module, librngtrk_cudaNN.so, for each CUDA major built:
# CUDA_SOURCES, the module's table, and the core code the kernels call.
CUDA_LOADER_SOURCES := cuda/cuda_loader.cpp
CUDA_MODULE_SOURCES := cuda/cuda_module.cpp
CUDA_MODULE_CORE_SOURCES := core/sample_spec.cpp

# The optimisation of a default build (Makefile: OPTFLAGS; CMake: a build
# without CMAKE_BUILD_TYPE).  Neither defines NDEBUG.
DEFAULT_OPTFLAGS := -O2 -g
# The project's warning set (tests/headers_alone_test.sh reads it too).
WARNINGS := -Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align -Wpedantic
# -ffp-contract=off: no fused multiply-add behind our back, so the scalar,
# SIMD and CUDA paths round every float operation alike (core/det_math.h).
LIB_FLAGS := -std=c++17 -ffp-contract=off -pthread -fPIC -fvisibility=hidden -fvisibility-inlines-hidden
# The core and the CUDA backend see only core/ (they never include the
# public header: core/status.h is theirs); the C layer sees c_api/ and core/.
CORE_INCLUDES := core
C_API_INCLUDES := c_api core
# The sampling engines: -O3 lets the compiler vectorise the element
# transforms, and -fno-trapping-math lets it evaluate both arms of a select
# (it changes no result, only whether FP exception flags may be raised).
# The SIMD builds get their target flags and run only where cpuid allows;
# the rest of the library stays baseline x86-64 (no -march=native).
ENGINE_SOURCES := core/sample_scalar.cpp core/sample_avx2.cpp core/sample_avx512.cpp
ENGINE_FLAGS := -O3 -fno-trapping-math
AVX2_SOURCES := core/sample_avx2.cpp
AVX2_FLAGS := -mavx2
AVX512_SOURCES := core/sample_avx512.cpp
# -Wno-uninitialized: GCC 12 misreads _mm512_undefined in its own headers
# (and, GCC alone, -Wno-maybe-uninitialized: AVX512_GCC_FLAGS).
AVX512_FLAGS := -mavx512f -mavx512bw -mavx512dq -mavx512vl -Wno-uninitialized
AVX512_GCC_FLAGS := -Wno-maybe-uninitialized
# The shared object exports the C API alone, in version nodes.
LIB_LINK_FLAGS := -Wl,--version-script=c_api/exports.map -Wl,--no-undefined -pthread
# A CUDA module exports rngtrk_cuda_module_v1 alone, and needs nothing but
# glibc: its C++ runtime is linked in, as its CUDA runtime is (no exception
# leaves it), so it loads beside any libstdc++ and goes into a wheel as built.
MODULE_LINK_FLAGS := -Wl,--version-script=cuda/cuda_module.map -Wl,--no-undefined -pthread -static-libstdc++ -static-libgcc

# CUDA: machine code (SASS) for each GPU family trained on, and PTX of the
# newest so that a later GPU compiles the kernels when they load (docs/cuda.md
# has the table): 8.0 A100 (8.6 and 8.9 run its code: A10, L40S, RTX 4090),
# 9.0 H100/H200, 10.0 B200/GB200 (10.3 runs it: B300), 11.0 Thor, 12.0
# RTX PRO 6000/RTX 5090 (12.1 runs it: DGX Spark).  tests/fatbin_test.sh
# reads the built library's fat binary and checks it against these lines.
# The runtime is linked statically (the library still loads where there is
# no driver); --fmad=false: no fused multiply-add, so the device rounds as
# the CPU does.
CUDA_ARCHITECTURES := 80 90 100 110 120
CUDA_PTX_ARCHITECTURES := 120
# The CUDA 12 module (make cuda12: Debian 13's CUDA 12.4, whose nvcc knows
# nothing past sm_90) for drivers of the CUDA 12 era, R525 to R575: machine
# code for 8.0 and 9.0, and PTX of 9.0, which every later GPU (Blackwell
# included, on an R570 or later driver) compiles when the kernels load.
CUDA12_ARCHITECTURES := 80 90
CUDA12_PTX_ARCHITECTURES := 90
# nvcc 12.4 has no zstd: every entry packed with LZ4 (by default it packs
# the PTX alone).
CUDA12_COMPRESS_FLAGS := -Xfatbin -compress-all
CUDA_INCLUDES := core cuda
NVCC_FLAGS := -std=c++17 -O3 --fmad=false
# Where nvcc has it (12.8 and later): the fat binary compressed with zstd,
# 10.8 MB of machine code and PTX in 0.85 MB; the drivers that run such a
# runtime unpack it when the library's kernels load.
NVCC_COMPRESS_FLAGS := --compress-mode=size
CUDA_LINK_LIBRARIES := cudart_static dl rt
