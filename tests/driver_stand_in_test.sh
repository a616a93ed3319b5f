#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# A CUDA path that cannot run says why, the same in rngtrk_cuda_available()
# and in a CUDA draw, and changes nothing: each case the loader
# (cuda/cuda_loader.cpp) tells apart, on the CPU, under a stand-in for the
# NVIDIA driver (tests/driver_stand_in/libcuda_stand_in.c) that reports the
# driver's CUDA version, its GPUs and cuInit's result as each case says.
# The library and its modules are staged in a folder of their own, so that
# the test chooses which modules sit beside librngtrk.so.  Then the same
# reason through Python and, where cargo is, Rust.
#   tests/driver_stand_in_test.sh BUILD_DIR
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
python=${PYTHON:-/usr/bin/python3}
major=$(sed -n 's/^#define RNGTRK_VERSION_MAJOR //p' "$top/c_api/rngtrk.h")
version=$(sed -n 's/^#define RNGTRK_VERSION_\(MAJOR\|MINOR\|PATCH\) //p' "$top/c_api/rngtrk.h" | paste -sd.)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "driver_stand_in_test: $*"; exit 1; }
cases=0

# The newest module first (alone beside the library); a CUDA 12 one of
# this build (make cuda12), if there, joins it for its own cases below.
module=$(ls "$build"/librngtrk_cuda[0-9]*.so 2>/dev/null | sort -V | tail -1)
[ -n "$module" ] || fail "$build has no CUDA module (librngtrk_cudaNN.so): build with nvcc"
module_major=$(basename "$module" .so | sed 's/librngtrk_cuda//')
cc=${CC:-cc}
mkdir -p "$work/driver" "$work/lib" "$work/other"
$cc -shared -fPIC -O2 -Wall -Wextra -Werror -o "$work/driver/libcuda.so.1" "$top/tests/driver_stand_in/libcuda_stand_in.c"
cp "$build/librngtrk.so.$major" "$work/lib/"
ln -s "librngtrk.so.$major" "$work/lib/librngtrk.so"
$cc -O2 -Wall -Wextra -Werror -I"$top/c_api" -o "$work/cuda_reason" "$top/tests/driver_stand_in/cuda_reason.c" \
    -L"$work/lib" -lrngtrk -Wl,-rpath,"$work/lib"
cp "$module" "$work/lib/"
# A module of another rngtrk version, to stand beside the library as the
# CUDA 12 one.
${CXX:-g++} -std=c++17 -shared -fPIC -O2 -I"$top/core" -I"$top/cuda" -o "$work/other/librngtrk_cuda12.so" -x c++ - <<'EOF'
#include "cuda_module.h"
extern "C" __attribute__((visibility("default"))) const rngtrk::cuda_module::Table *rngtrk_cuda_module_v1(void) {
    static const rngtrk::cuda_module::Table table{rngtrk::cuda_module::this_layout(), "0.0.1", "0000000000000000",
                                                  12040, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    return &table;
}
EOF
# And one of this version whose core headers were others (a stale build).
${CXX:-g++} -std=c++17 -shared -fPIC -O2 -I"$top/core" -I"$top/cuda" "-DVERSION=\"$version\"" \
    -o "$work/other/stale.so" -x c++ - <<'EOF'
#include "cuda_module.h"
extern "C" __attribute__((visibility("default"))) const rngtrk::cuda_module::Table *rngtrk_cuda_module_v1(void) {
    static const rngtrk::cuda_module::Table table{rngtrk::cuda_module::this_layout(), VERSION, "0123456789abcdef",
                                                  13000, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
    return &table;
}
EOF

# CASE NAME EXPECTED... -- ENV...: both lines say RNGTRK_E_UNAVAILABLE (-11)
# with one reason, which holds every EXPECTED text.
expect() {
    name=$1
    shift
    : >"$work/want"
    while [ "$1" != "--" ]; do printf '%s\n' "$1" >>"$work/want"; shift; done
    shift
    env LD_LIBRARY_PATH="$work/driver" "$@" "$work/cuda_reason" >"$work/out" 2>&1 ||
        { cat "$work/out"; fail "$name: the program failed (or changed the caller's state)"; }
    a=$(sed -n 's/^available //p' "$work/out")
    s=$(sed -n 's/^sample //p' "$work/out")
    case "$a" in "-11 "*) ;; *) cat "$work/out"; fail "$name: rngtrk_cuda_available() is not RNGTRK_E_UNAVAILABLE" ;; esac
    [ "$a" = "$s" ] || { cat "$work/out"; fail "$name: the draw's reason is not rngtrk_cuda_available()'s"; }
    while IFS= read -r text; do
        case "$a" in *"$text"*) ;; *) echo "$a"; fail "$name: the reason does not say: $text" ;; esac
    done <"$work/want"
    cases=$((cases + 1))
    echo "  $name: ${a#-11 }"
}

if [ -n "$(/sbin/ldconfig -p 2>/dev/null | grep 'libcuda\.so\.1 ')" ]; then
    echo "  no driver: not checked: this machine has an NVIDIA driver (libcuda.so.1)"
else
    expect "no driver" "no CUDA driver" "libcuda.so.1" -- LD_LIBRARY_PATH=/nonexistent
fi
expect "driver of CUDA 11.8" "too old" "runs CUDA up to 11.8" "librngtrk_cuda$module_major.so" "R5" -- \
    RNGTRK_STAND_IN_DRIVER=11080 RNGTRK_STAND_IN_GPUS=90
if [ "$module_major" -gt 12 ]; then
    expect "driver of CUDA 12.4, no CUDA 12 module" "runs CUDA up to 12.4" "R580" "make cuda12" -- \
        RNGTRK_STAND_IN_DRIVER=12040 RNGTRK_STAND_IN_GPUS=90
fi
expect "no GPU" "no CUDA device" "sees no GPU" "CUDA_VISIBLE_DEVICES=" -- \
    RNGTRK_STAND_IN_GPUS= CUDA_VISIBLE_DEVICES=
expect "cuInit: no device" "no CUDA device" -- RNGTRK_STAND_IN_INIT=100 RNGTRK_STAND_IN_GPUS=90
expect "cuInit fails" "failed to start" "CUDA_ERROR_UNKNOWN" -- RNGTRK_STAND_IN_INIT=999 RNGTRK_STAND_IN_GPUS=90
expect "a GPU without code (7.5)" "compute capability 7.5" "sm_75" "machine code for sm_80" \
    "the NVIDIA driver runs CUDA 13.1" "the library's CUDA runtime is $module_major." "make CUDA_ARCHS=" -- \
    RNGTRK_STAND_IN_DRIVER=13010 RNGTRK_STAND_IN_GPUS=75
expect "CUDA_FORCE_PTX_JIT=1 on 8.0" "compute capability 8.0" "CUDA_FORCE_PTX_JIT=1" "code=compute_80" -- \
    RNGTRK_STAND_IN_GPUS=80 CUDA_FORCE_PTX_JIT=1
expect "module missing" "cannot load the CUDA module $work/none.so" -- \
    RNGTRK_STAND_IN_GPUS=90 RNGTRK_CUDA_MODULE="$work/none.so"
expect "not a module" "is not an rngtrk CUDA module" -- \
    RNGTRK_STAND_IN_GPUS=90 RNGTRK_CUDA_MODULE="$work/driver/libcuda.so.1"
# The driver's major picks the module: a CUDA 12 driver takes the CUDA 12
# module beside the library (here one of another version, refused by name).
cp "$work/other/librngtrk_cuda12.so" "$work/lib/"
expect "CUDA 12 driver, module of another version" "$work/lib/librngtrk_cuda12.so" "rngtrk 0.0.1" \
    "this librngtrk is $version" -- RNGTRK_STAND_IN_DRIVER=12080 RNGTRK_STAND_IN_GPUS=90
rm "$work/lib/librngtrk_cuda12.so"
expect "a module of this version built from other core headers" "core 0123456789abcdef" \
    "this librngtrk is $version" -- RNGTRK_STAND_IN_GPUS=90 RNGTRK_CUDA_MODULE="$work/other/stale.so"
if [ -f "$build/librngtrk_cuda12.so" ] && [ "$module_major" -gt 12 ]; then
    # This build's own CUDA 12 module: a CUDA 12 driver takes it (its runtime
    # and PTX are named), a CUDA 13 driver still the newer one.
    cp "$build/librngtrk_cuda12.so" "$work/lib/"
    expect "CUDA 12 driver takes the CUDA 12 module" "the library's CUDA runtime is 12." \
        "machine code for sm_80, sm_90 and PTX for compute_90" "the NVIDIA driver runs CUDA 12.8" -- \
        RNGTRK_STAND_IN_DRIVER=12080 RNGTRK_STAND_IN_GPUS=75
    expect "CUDA 13 driver takes the CUDA 13 module" "the library's CUDA runtime is $module_major." -- \
        RNGTRK_STAND_IN_DRIVER=13000 RNGTRK_STAND_IN_GPUS=75
    expect "CUDA 11.8 driver, both modules" "librngtrk_cuda12.so (R525 or later)" "R525 branch" -- \
        RNGTRK_STAND_IN_DRIVER=11080 RNGTRK_STAND_IN_GPUS=90
    rm "$work/lib/librngtrk_cuda12.so"
else
    echo "  the CUDA 12 module: not checked: $build has none (make cuda12 builds it)"
fi
# Past every check of the loader the module's own CUDA runtime starts, and
# refuses the stand-in: its error, not a crash.
expect "the module's runtime on the stand-in" "cudaError" -- RNGTRK_STAND_IN_DRIVER=13000 RNGTRK_STAND_IN_GPUS=90

# The same reason through the bindings, for a GPU without code.
set -- env LD_LIBRARY_PATH="$work/driver" RNGTRK_STAND_IN_DRIVER=13010 RNGTRK_STAND_IN_GPUS=75
want=$("$@" "$work/cuda_reason" | sed -n 's/^available -11 //p')
[ -n "$want" ] || fail "no reason from the C API to compare the bindings' with"
"$@" RNGTRK_LIBRARY="$work/lib/librngtrk.so.$major" PYTHONPATH="$top/bindings/python" "$python" - "$want" <<'EOF' ||
import sys
import rngtrk
from rngtrk import sampling
from rngtrk.errors import UnavailableError

class NotOnDevice:  # a device array the draw must refuse before touching it
    __cuda_array_interface__ = {"shape": (16,), "typestr": "<f4", "data": (4096, False), "version": 3,
                                "stream": None}

assert not sampling.cuda_available()
try:
    sampling.cuda_sample(rngtrk.PhiloxState(1234, 0), NotOnDevice())
except UnavailableError as e:
    assert sys.argv[1] and sys.argv[1] in str(e), (str(e), sys.argv[1])
else:
    raise SystemExit("cuda_sample did not raise UnavailableError")
EOF
    fail "Python: the reason differs from the C API's"
cases=$((cases + 1))
echo "  Python: UnavailableError with the C API's reason"
cargo=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
if [ -x "$cargo" ] || command -v "$cargo" >/dev/null 2>&1; then
    (cd "$top/bindings/rust" && "$cargo" build --offline -q --example cuda_check) ||
        fail "Rust: cannot build the cuda_check example"
    got=$("$@" "$top/build/rust/debug/examples/cuda_check")
    case "$got" in *"$want"*) ;; *) echo "$got"; fail "Rust: cuda::available() does not give the C API's reason" ;; esac
    cases=$((cases + 1))
    echo "  Rust: cuda::available() gives the C API's reason"
else
    echo "  Rust: not checked: no cargo"
fi
echo "driver_stand_in_test: $cases cases, each with its reason"
