#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The CUDA kernels before and after a change, on the same card, in one run
# (issue 30): builds this tree's library and bench_gpu, builds the library
# of BASE next to it, links this tree's bench/bench_gpu.cu (public C API
# only) against each, runs both one after the other (then this tree's once
# more, to show the drift between runs), and ends with
# bench/bench_gpu_torch.py, which prints each case before and after and
# torch.rand / torch.randn measured right after.  With NCU=1, ncu profiles
# of the normal f32 kernel after and before (executed instructions too).
#
#   tools/gpu_bench_compare.sh [BASE] [OUTDIR]
#
# BASE: a folder holding the base tree (default .device/base), or a git
# revision of this repository (git archive).  On a machine without the
# repository's history, make the folder beforehand where the history is
# and carry it: git archive 4cec2c2 --prefix=base/ | tar -x -C .device
# (4cec2c2: main before issue 30).  OUTDIR: default build/gpu-compare.
# Builds for sm_90 only (CUDA_ARCHS to change), with make -j$(nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
base=${1:-.device/base}
out=${2:-build/gpu-compare}
archs=${CUDA_ARCHS:--gencode arch=compute_90,code=sm_90}
python=${PYTHON:-python3}
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
cuda_home=${CUDA_HOME:-/usr/local/cuda}
jobs=$(nproc)
mkdir -p "$out"
out=$(cd "$out" && pwd)

if [ ! -d "$base" ]; then
    if git rev-parse --verify -q "$base^{commit}" >/dev/null; then
        rev=$base
        base=$out/base-src
        rm -rf "$base" && mkdir -p "$base"
        git archive "$rev" | tar -x -C "$base"
    else
        echo "gpu_bench_compare: no folder or git revision '$base' (carry the base tree: see the header)" >&2
        exit 2
    fi
fi
base=$(cd "$base" && pwd)

echo "=== building this tree and the base ($base), CUDA_ARCHS=$archs"
start=$(date +%s)
make -j"$jobs" lib build/bench/bench_gpu CUDA_ARCHS="$archs" >"$out/build-after.log" 2>&1 &
after_build=$!
make -C "$base" -j"$jobs" lib CUDA_ARCHS="$archs" >"$out/build-before.log" 2>&1 &
before_build=$!
wait $after_build || { tail -20 "$out/build-after.log"; exit 1; }
wait $before_build || { tail -20 "$out/build-before.log"; exit 1; }
"$nvcc" -std=c++17 -O2 --fmad=false $archs -Ic_api -Ibuild/include -o "$out/bench_gpu_before" bench/bench_gpu.cu \
    -L"$base/build" -lrngtrk -L"$cuda_home/lib64" -lcurand -Xlinker -rpath,"$base/build" \
    -Xlinker -rpath,"$cuda_home/lib64"
echo "built in $(($(date +%s) - start)) s"

echo "=== after (this tree)"
build/bench/bench_gpu "$out/after.json" | tee "$out/after.txt"
echo "=== before ($base)"
"$out/bench_gpu_before" "$out/before.json" | tee "$out/before.txt"
echo "=== after, again (the drift between runs)"
build/bench/bench_gpu "$out/after2.json" | tee "$out/after2.txt"
echo "=== before and after, torch.rand and torch.randn"
"$python" bench/bench_gpu_torch.py "$out/after.json" "$out/before.json" | tee "$out/compare.txt"

if [ "${NCU:-0}" = 1 ]; then
    sections=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
              --section LaunchStats --section Occupancy)
    echo "=== ncu normal_f32_stateless after"
    ncu --clock-control none --kernel-name regex:in_order --launch-skip 2 --launch-count 1 "${sections[@]}" \
        build/bench/bench_gpu "" normal_f32_stateless | tee "$out/ncu-after-normal_f32_stateless.txt"
    echo "=== ncu normal_f32_stateless before"
    ncu --clock-control none --kernel-name regex:in_order --launch-skip 2 --launch-count 1 "${sections[@]}" \
        "$out/bench_gpu_before" "" normal_f32_stateless | tee "$out/ncu-before-normal_f32_stateless.txt"
fi
