#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The GPU proof (docs/cuda.md): on a machine with an NVIDIA GPU, build with
# the repository's Makefile, run the device tests (plain, under
# compute-sanitizer memcheck and racecheck), the PyTorch interop tests and
# the device benchmark, and keep every log.
#
#   tools/gpu_proof.sh [LOGDIR] [STEP...]      steps: info build test memcheck racecheck
#                                               torch compile torchbench megatron megatron-compile dcp
#                                               slapo python rust bench ncu (default: all)
#                                               compare (not in the default: needs the base tree)
#                                               short: info build test torch compile torchbench
#                                               (alone, or with more steps: short dcp)
#
# `short` is the check that fits a short slot of GPU time (issue 33; under
# 5 minutes on a 16-core H100 machine): the device tests, rngtrk.torch's
# GPU tests (test_torch.py, test_torch_dropout.py), the compile and
# checkpoint suites on CUDA, and `make bench-torch` with the training-step
# figure; it builds for this GPU's architecture alone (CUDA_ARCHS, unless
# set) and fetches nothing: GoogleTest and cffi come from .device/ as below.
#
# compare: tools/gpu_bench_compare.sh with ncu (NCU=1): the kernels before
# and after a change on the same card, and torch.randn next to them; the
# base tree in .device/base (see that script).  A short device run of issue
# 30's checks (about 4 minutes on a 16-core H100 machine, builds for sm_90
# only; make reads CUDA_ARCHS from the environment):
#   CUDA_ARCHS="-gencode arch=compute_90,code=sm_90" tools/gpu_proof.sh build/gpu-proof info compare test
# (compare builds this tree and the base in parallel; test then only adds the device tests).
#
# Every step runs even when an earlier one failed; the last lines are a
# table of steps and their exit codes, and the script exits non-zero if any
# step failed.  Optional helpers for machines that lack them, looked up in
# .device/ (ignored by git): .device/gtest/{include,lib} (GoogleTest) and
# .device/site (cffi for a Python without it; a .pth file in that Python's
# site-packages makes it visible to the subprocesses the tests start).
# The megatron step runs Megatron-LM's own RNG tests
# (tests/upstream/run_megatron_tests.py) on the checkout in .device/megatron-lm
# (a git archive of megatron/core/tensor_parallel and
# tests/unit_tests/tensor_parallel is enough; docs/testing.md) and the
# drop-in's fork benchmark, and does the same on .device/megatron-lm-dev
# when it is there (Megatron-LM dev, whose forms install() follows); the slapo step runs slapo's tests/test_random.py
# (tests/upstream/run_slapo_tests.py) on the checkout in .device/slapo (a git
# archive of slapo/random.py and tests/test_random.py is enough).
set -u
cd "$(dirname "$0")/.."
logdir=${1:-build/gpu-proof}
shift || true
steps=${*:-info build test memcheck racecheck torch compile torchbench megatron megatron-compile dcp slapo python rust bench ncu}
if [[ " $steps " == *" short "* ]]; then  # `short`, alone or with more steps after it (short dcp)
    steps=$(echo " $steps " | sed 's/ short / info build test torch compile torchbench /; s/^ //; s/ $//')
    if [ -z "${CUDA_ARCHS:-}" ] && cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1); then
        cap=${cap/./}
        export CUDA_ARCHS="-gencode arch=compute_$cap,code=sm_$cap"
    fi
fi
mkdir -p "$logdir"
jobs=$(nproc)
python=${PYTHON:-python3}
make_args=()
[ -d .device/gtest ] && ! [ -e /usr/include/gtest/gtest.h ] && make_args+=("GTEST_PREFIX=$PWD/.device/gtest")
if [ -d .device/site ] && ! "$python" -c 'import cffi' 2>/dev/null; then
    site=$("$python" -c 'import site; print(site.getsitepackages()[0])')
    echo "$PWD/.device/site" >"$site/rngtrk-device-cffi.pth"
fi
export PYTHONUNBUFFERED=1
results=()

step() {  # step NAME TIMEOUT COMMAND...: runs it, logs to LOGDIR/NAME.log
    local name=$1 limit=$2 start code
    shift 2
    start=$(date +%s)
    echo "=== $name: $*"
    timeout "$limit" "$@" >"$logdir/$name.log" 2>&1
    code=$?
    tail -25 "$logdir/$name.log"
    results+=("$(printf '%-10s exit %3d  %4ds' "$name" "$code" $(($(date +%s) - start)))")
}

for s in $steps; do
    case $s in
        info) step info 60 sh -c "nvidia-smi; /usr/local/cuda/bin/nvcc --version | tail -2;
              g++ --version | head -1; $python -c 'import sys, numpy, torch; print(sys.version); print(\"numpy\", numpy.__version__, \"torch\", torch.__version__, torch.version.cuda); p = torch.cuda.get_device_properties(0); print(p)';
              command -v compute-sanitizer ncu; date -u" ;;
        build) step build 300 make -j"$jobs" all "${make_args[@]}" ;;
        test) step test 150 make test-gpu "${make_args[@]}" ;;
        memcheck) step memcheck 200 compute-sanitizer --tool memcheck --error-exitcode 1 build/tests/cuda_tests ;;
        racecheck) step racecheck 200 compute-sanitizer --tool racecheck --error-exitcode 1 build/tests/cuda_tests ;;
        torch) step torch 200 "$python" -m pytest -p no:cacheprovider -q -rfEs bindings/python/tests/test_torch.py \
              bindings/python/tests/test_torch_dropout.py ;;
        # torch.compile, torch.export and activation checkpointing on CUDA (and
        # their CPU halves on this machine's torch).
        compile) step compile 300 "$python" -m pytest -p no:cacheprovider -q -rfEs \
              bindings/python/tests/test_torch_cuda_compile.py bindings/python/tests/test_torch_compile.py \
              bindings/python/tests/test_torch_checkpoint.py ;;
        # issue 33's figures: rngtrk.torch's ops, dropout and fork next to torch's, and the training step.
        torchbench) step torchbench 150 sh -c "$python bench/bench_torch.py && $python bench/bench_train_step.py" ;;
        megatron) step megatron 300 sh -c "$python tests/upstream/run_megatron_tests.py .device/megatron-lm && { [ ! -d .device/megatron-lm-dev ] || $python tests/upstream/run_megatron_tests.py .device/megatron-lm-dev --modes upstream,install; }" ;;
        # Megatron-LM's own tracker and rngtrk's under torch.compile, one layer, same GPU.
        megatron-compile) step megatron-compile 200 "$python" tests/upstream/compile_megatron_tracker.py \
              .device/megatron-lm ;;
        # rngtrk.torch.dcp with torch's CUDA generator: 2 ranks on cuda:0, resumed on 2, 1 and 3.
        dcp) step dcp 150 "$python" tests/torch_dist/dcp_cuda_job.py ;;
        slapo) step slapo 120 $python tests/upstream/run_slapo_tests.py .device/slapo ;;
        python) step python 300 sh -c "make build/rngtrk build/tests/run_recipe ${make_args[*]} >/dev/null &&
              $python -m pytest -p no:cacheprovider -q -rfEs bindings/python/tests --ignore=bindings/python/tests/test_torch.py" ;;
        # The Rust CUDA calls: examples/cuda_check, built with cargo where cargo is
        # (here, or carried in prebuilt: the device image may have no cargo).
        rust) step rust 120 sh -c 'b=build/rust/debug/examples/cuda_check;
              [ -x "$b" ] || (cd bindings/rust && cargo build --offline --example cuda_check) || exit 1;
              LD_LIBRARY_PATH=$PWD/build "$b"' ;;
        bench) step bench 150 make bench-gpu PYTHON="$python" "${make_args[@]}" ;;
        compare) step compare 400 env NCU=1 PYTHON="$python" tools/gpu_bench_compare.sh .device/base "$logdir/compare" ;;
        ncu) step ncu 300 sh -c 'for c in uniform_f32_stateless:in_order uniform_f32_torch_eager_cuda:eager \
                 bernoulli_mask_u8_stateless:in_order normal_f32_stateless:in_order uniform_bf16_stateless:in_order; do
                 ncu --clock-control none --kernel-name regex:${c#*:} --launch-skip 2 --launch-count 1 \
                     --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
                     --section LaunchStats --section Occupancy build/bench/bench_gpu "" ${c%%:*} || exit 1; done' ;;
        *) echo "unknown step $s"; exit 2 ;;
    esac
done
echo "=== summary"
printf '%s\n' "${results[@]}" | tee "$logdir/summary.txt"
! grep -qv 'exit   0' "$logdir/summary.txt"
