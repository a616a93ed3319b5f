#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make bench's sampling cases against two builds of librngtrk, one after the
# other on each CPU path, in the same session: this tree's bench binary
# (public C API only) run with the base library first (LD_LIBRARY_PATH),
# then with this tree's, ROUNDS times; ratios.py then prints each run.
# docs/performance.md's before/after figures for issue 30 come from it.
#
#   tools/bench_cpu_compare.sh BASE_LIBDIR [OUTDIR]
#
# BASE_LIBDIR holds the other librngtrk.so.0 (say main's `make lib CUDA=0`
# in a copy of its tree: git archive main | tar -x -C build/base, then
# make -C build/base lib CUDA=0: BASE_LIBDIR=build/base/build).  OUTDIR:
# default build/bench/compare.  BENCH_PATHS, ROUNDS (default 2) and
# BENCH_ARGS as for make bench.
set -eu
cd "$(dirname "$0")/.."
base=$(cd "$1" && pwd)
out=${2:-build/bench/compare}
paths=${BENCH_PATHS:-scalar avx2 avx512}
rounds=${ROUNDS:-2}
python=${PYTHON:-/usr/bin/python3}
make --no-print-directory build/bench/bench_rngtrk >/dev/null
mkdir -p "$out"
run() {  # run LABEL LIBDIR PATH ROUND
    LD_LIBRARY_PATH=$2 RNGTRK_CPU=$3 build/bench/bench_rngtrk --benchmark_filter='^BM_(sample|reference_random123)' \
        --benchmark_out="$out/$1_$3_$4.json" --benchmark_out_format=json --benchmark_min_time=0.5 \
        ${BENCH_ARGS:-} >/dev/null
}
r=1
while [ "$r" -le "$rounds" ]; do
    for p in $paths; do
        run before "$base" "$p" "$r"
        run after "$PWD/build" "$p" "$r"
    done
    r=$((r + 1))
done
for label in before after; do
    r=1
    while [ "$r" -le "$rounds" ]; do
        for p in $paths; do
            echo "== $label, $p, round $r"
            "$python" bench/ratios.py "$out/${label}_${p}_$r.json" "$out/${label}_${p}_$r.json" | grep -E '^(bench|target)'
        done
        r=$((r + 1))
    done
done
