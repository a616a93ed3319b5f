#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The CUDA 12 module's build, inside tools/build_cuda12.sh's build root
# (Debian 11, with the files of Debian 13's non-free CUDA 12.4 toolkit), in
# a clone of the checkout: the module for
# library.mk's CUDA12_* lists, its fat binary checked against them, and the
# kernel bodies' host tests compiled by this nvcc.
set -eu
list() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' library.mk | sed -n "s/^$1 := //p"; }
sass=$(list CUDA12_ARCHITECTURES)
ptx=$(list CUDA12_PTX_ARCHITECTURES)
compress=$(list CUDA12_COMPRESS_FLAGS)
nvcc=/usr/bin/nvcc
# The root's GCC (bullseye's g++ 10, which nvcc 12.4 supports and its
# Debian wrapper picks): the host objects are compiled by the same.
cxx=$(ls /usr/bin/g++-[0-9]* | sort -V | tail -1)
cc=$(ls /usr/bin/gcc-[0-9]* | grep -v -e '-ar-' -e '-nm-' -e '-ranlib-' | sort -V | tail -1)
echo "make cuda12: in $(. /etc/os-release; echo "$PRETTY_NAME"): nvcc $($nvcc --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p'), $($cxx --version | head -1)"
make -j"$(nproc)" CXX="$cxx" CC="$cc" CUDA_HOME=/usr NVCC=$nvcc CUDA_ARCHITECTURES="$sass" CUDA_PTX_ARCHITECTURES="$ptx" NVCC_COMPRESS="$compress" \
    build/librngtrk_cuda12.so build/librngtrk.a
# The fat binary: exactly those lists, every entry packed, unpacked and checked.
expected=$({ for a in $sass; do echo "sass sm_$a"; done; for a in $ptx; do echo "ptx compute_$a"; done; } | sort)
listing=$(python3 tools/fatbin_list.py --verify build/librngtrk_cuda12.so)
if echo "$listing" | grep -v ' lz4 '; then echo "make cuda12: the entries above are not packed"; exit 1; fi
found=$(echo "$listing" | awk '{print $1, $2}' | sort)
[ "$found" = "$expected" ] || { echo "make cuda12: the module carries"; echo "$found"; echo "not"; echo "$expected"; exit 1; }
echo "make cuda12: librngtrk_cuda12.so carries $(echo "$found" | awk '{print $2}' | tr '\n' ' ')and needs $(objdump -T build/librngtrk_cuda12.so | grep -o 'GLIBC_2\.[0-9.]*' | sort -uV | tail -1) at most"
# The kernel bodies on the host, as CUDA 12.4's nvcc compiles them, against
# the CPU engines (the CUDA 13 build runs the same tests compiled by g++).
mkdir -p build/cuda12-tests
# GoogleTest from Debian's sources, by this GCC: one compiler for the whole
# test program (a prebuilt libgtest.a of another GCC may call libstdc++
# functions this one lacks, as trixie's did with GCC 13).
gtest=/usr/src/googletest/googletest
for f in gtest-all gtest_main; do
    "$cxx" -std=c++17 -O1 -pthread -I$gtest/include -I$gtest -c "$gtest/src/$f.cc" -o "build/cuda12-tests/$f.o"
done
for t in test_kernel_bodies test_edge_parameters; do
    $nvcc -ccbin "$cxx" -x cu -std=c++17 -O2 --fmad=false -Icore -Icuda -Ic_api -Itests/core -I$gtest/include \
        -c "tests/core/$t.cpp" -o "build/cuda12-tests/$t.o"
done
$nvcc -ccbin "$cxx" -o build/cuda12-tests/kernel_bodies build/cuda12-tests/test_kernel_bodies.o \
    build/cuda12-tests/test_edge_parameters.o build/librngtrk.a build/cuda12-tests/gtest-all.o \
    build/cuda12-tests/gtest_main.o -lcudart_static -ldl -lrt -lpthread
build/cuda12-tests/kernel_bodies --gtest_brief=1 >build/cuda12-tests/kernel_bodies.log 2>&1 ||
    { cat build/cuda12-tests/kernel_bodies.log; exit 1; }
echo "make cuda12: kernel bodies compiled by nvcc 12.4 on the host: $(grep -o '[0-9]* tests\? from [0-9]* test suites\? ran' build/cuda12-tests/kernel_bodies.log), $(grep -o 'PASSED.*' build/cuda12-tests/kernel_bodies.log)"
