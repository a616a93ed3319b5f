#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The CUDA 12 module's build, inside tools/build_cuda12.sh's root (Debian 13,
# non-free's CUDA 12.4 toolkit), in a clone of the checkout: the module for
# library.mk's CUDA12_* lists, its fat binary checked against them, and the
# kernel bodies' host tests compiled by this nvcc.
set -eu
list() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' library.mk | sed -n "s/^$1 := //p"; }
sass=$(list CUDA12_ARCHITECTURES)
ptx=$(list CUDA12_PTX_ARCHITECTURES)
nvcc=/usr/bin/nvcc
echo "make cuda12: in $(. /etc/os-release; echo "$PRETTY_NAME"): nvcc $($nvcc --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p'), $(g++ --version | head -1)"
make -j"$(nproc)" CUDA_HOME=/usr NVCC=$nvcc CUDA_ARCHITECTURES="$sass" CUDA_PTX_ARCHITECTURES="$ptx" \
    build/librngtrk_cuda12.so build/librngtrk.a
# The fat binary: exactly those lists, every entry unpacked and checked.
expected=$({ for a in $sass; do echo "sass sm_$a"; done; for a in $ptx; do echo "ptx compute_$a"; done; } | sort)
found=$(python3 tools/fatbin_list.py --verify build/librngtrk_cuda12.so | awk '{print $1, $2}' | sort)
[ "$found" = "$expected" ] || { echo "make cuda12: the module carries"; echo "$found"; echo "not"; echo "$expected"; exit 1; }
echo "make cuda12: librngtrk_cuda12.so carries $(echo "$found" | awk '{print $2}' | tr '\n' ' ')"
# The kernel bodies on the host, as CUDA 12.4's nvcc compiles them, against
# the CPU engines (the CUDA 13 build runs the same tests compiled by g++).
mkdir -p build/cuda12-tests
$nvcc -x cu -std=c++17 -O2 --fmad=false -Icore -Icuda -Ic_api -Itests/core \
    -o build/cuda12-tests/kernel_bodies tests/core/test_kernel_bodies.cpp tests/core/test_edge_parameters.cpp \
    build/librngtrk.a -lgtest -lgtest_main -lcudart_static -ldl -lrt -lpthread
build/cuda12-tests/kernel_bodies --gtest_brief=1 >build/cuda12-tests/kernel_bodies.log 2>&1 ||
    { cat build/cuda12-tests/kernel_bodies.log; exit 1; }
echo "make cuda12: kernel bodies compiled by nvcc 12.4 on the host: $(grep -o '[0-9]* tests\? from [0-9]* test suites\? ran' build/cuda12-tests/kernel_bodies.log), $(grep -o 'PASSED.*' build/cuda12-tests/kernel_bodies.log)"
