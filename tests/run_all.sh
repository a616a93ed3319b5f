#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs every test suite (called by `make test` after the build) and ends with
# one line "rngtrk: N passed, N failed, N skipped".  GoogleTest suites count
# their tests; each script check counts as one test.
#   tests/run_all.sh         everything (make test)
#   tests/run_all.sh check   the fast inner loop (make check): unit tests only
set -u
mode=${1:-all}
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
passed=0 failed=0 skipped=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# A GoogleTest binary: add its own counts.
gtest() {
    name=$1; shift
    echo "== $name"
    "$@" --gtest_color=no >"$log" 2>&1
    code=$?
    # A GTEST_SKIP's reason is the line after "Skipped"; show it once.
    grep -E -A1 'Skipped$' "$log" | grep -v -E 'Skipped$|^--$|^\[' | sort | uniq -c | sed 's/^ */skipped: /' | head -5
    grep -E '^\[  (FAILED|SKIPPED) |^\[  PASSED' "$log" | grep -v '^\[       OK' | head -40
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) tests\{0,1\}\..*/\1/p' "$log")
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) tests\{0,1\}, listed below.*/\1/p' "$log")
    s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) tests\{0,1\}, listed below.*/\1/p' "$log")
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); skipped=$((skipped + ${s:-0}))
    if [ $code -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
        echo "FAIL: $name exited $code"; tail -20 "$log"; failed=$((failed + 1))
    fi
}

# The Python binding's pytest suite: add its own counts.  A warning raised
# from rngtrk's own modules is an error (a deprecated torch API on rngtrk's
# path warns from there; docs/testing.md): torch's and the tests' own
# warnings are left as they are.
pytest_suite() {
    name=$1; shift
    echo "== $name"
    "$python" -m pytest -p no:cacheprovider -q -rfEs -W "error:::rngtrk" "$@" >"$log" 2>&1
    code=$?
    grep -E '^(FAILED|ERROR|SKIPPED)' "$log" | head -40
    summary=" $(tail -1 "$log")"
    p=$(printf '%s' "$summary" | sed -n 's/.*[^0-9]\([0-9][0-9]*\) passed.*/\1/p')
    f=$(printf '%s' "$summary" | sed -n 's/.*[^0-9]\([0-9][0-9]*\) failed.*/\1/p')
    e=$(printf '%s' "$summary" | sed -n 's/.*[^0-9]\([0-9][0-9]*\) errors\{0,1\}.*/\1/p')
    s=$(printf '%s' "$summary" | sed -n 's/.*[^0-9]\([0-9][0-9]*\) skipped.*/\1/p')
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0} + ${e:-0})); skipped=$((skipped + ${s:-0}))
    if [ $code -ne 0 ] && [ $((${f:-0} + ${e:-0})) -eq 0 ]; then
        echo "FAIL: $name exited $code"; tail -30 "$log"; failed=$((failed + 1))
    fi
}

# The Rust crate's cargo test: add the counts of every "test result:" line.
cargo_suite() {
    name=$1; shift
    echo "== $name"
    # --no-fail-fast: a failing test binary does not stop the others (the
    # doc tests run last); an ignored test is a skip, shown with its reason.
    (cd "$top/bindings/rust" && "$cargo" test --offline --workspace --no-fail-fast "$@") >"$log" 2>&1
    code=$?
    grep -E '^test .* FAILED$|^SKIPPED|panicked' "$log" | head -40
    grep -E '^test .* \.\.\. ignored' "$log" | sed 's/^test /skipped: /' | head -10
    p=0 f=0 s=0
    for n in $(sed -n 's/^test result: [A-Za-z]*\. \([0-9]*\) passed.*/\1/p' "$log"); do p=$((p + n)); done
    for n in $(sed -n 's/^test result: .* \([0-9]*\) failed.*/\1/p' "$log"); do f=$((f + n)); done
    for n in $(sed -n 's/^test result: .* \([0-9]*\) ignored.*/\1/p' "$log"); do s=$((s + n)); done
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    if [ $code -ne 0 ] && [ $f -eq 0 ]; then
        echo "FAIL: $name exited $code"; tail -30 "$log"; failed=$((failed + 1))
    fi
}

# A command that is one test.
check() {
    name=$1; shift
    echo "== $name"
    if "$@"; then passed=$((passed + 1)); else echo "FAIL: $name"; failed=$((failed + 1)); fi
}

cc=${CC:-cc}
# The Python tests run on the system interpreter, whose packages come from
# Debian (python3-cffi, python3-pytest, python3-numpy, python3-hypothesis).
python=${PYTHON:-/usr/bin/python3}
# rustup installs into ~/.cargo/bin, which a non-login shell may not have on PATH.
cargo=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
cxx=${CXX:-c++}
if [ "$mode" = check ]; then
    gtest "core tests (Random123 oracle, CRC-32, names)" "$build/tests/core_tests"
    gtest "C API tests (vectors, stream, tracker, checkpoints, cuRAND oracle)" "$build/tests/api_tests"
    pytest_suite "Python binding (cffi), without the packaging tests" "$top/bindings/python/tests" \
        --ignore="$top/bindings/python/tests/test_packaging.py" \
        --ignore="$top/bindings/python/tests/test_packaging_wheel.py"
    if command -v "$cargo" >/dev/null 2>&1; then
        cargo_suite "Rust workspace: unit and integration tests" --lib --tests
    else
        echo "== Rust: skipped: no cargo (Debian: cargo; make test installs it)"
    fi
    echo "make check is the fast loop; make test runs everything"
    echo "check: $passed passed, $failed failed, $skipped skipped"
    [ $failed -eq 0 ]
    exit
fi
check "licence: LICENSE is Apache-2.0, the manifests declare it, every source file has its SPDX line" "$top/tests/spdx_test.sh"
check "shared vectors are up to date" "$python" "$top/tests/vectors/generate.py" --check
check "header alone, C99 -pedantic -Werror" $cc -std=c99 -Wall -Wextra -pedantic -Werror -fsyntax-only \
    -I"$top/c_api" "$top/tests/c/header_alone.c"
check "header alone, C11 -pedantic -Werror" $cc -std=c11 -Wall -Wextra -pedantic -Werror -fsyntax-only \
    -I"$top/c_api" "$top/tests/c/header_alone.c"
check "header alone, C++11 -pedantic -Werror" $cxx -std=c++11 -Wall -Wextra -pedantic -Werror -fsyntax-only \
    -x c++ -I"$top/c_api" "$top/tests/c/header_alone.c"
check "header alone, C++17 -pedantic -Werror" $cxx -std=c++17 -Wall -Wextra -pedantic -Werror -fsyntax-only \
    -x c++ -I"$top/c_api" "$top/tests/c/header_alone.c"
check "every header of core/, c_api/, cuda/ alone, C++17, the project's warnings, -Werror ($cxx)" \
    "$top/tests/headers_alone_test.sh" "$cxx"
gtest "core tests (Random123 oracle, CRC-32, names)" "$build/tests/core_tests"
gtest "C API tests (vectors, stream, tracker, checkpoints, cuRAND oracle)" "$build/tests/api_tests"
# The sampling tests again on each forced CPU path (the default run above
# used the best path this CPU has); a path the CPU lacks falls back.
for path in scalar avx2 avx512; do
    gtest "C API sampling tests, RNGTRK_CPU=$path" env RNGTRK_CPU=$path "$build/tests/api_tests" \
        --gtest_filter='Sample*:Stream*:SharedVectors*:CurandOracle.SampleLayouts*'
done
# The SIMD normal transform against the scalar engine, through ranges,
# threads and slices, on each forced SIMD engine (skips, saying so, on a CPU
# without it).
for path in avx2 avx512; do
    gtest "core normal tests, RNGTRK_CPU=$path" env RNGTRK_CPU=$path "$build/tests/core_tests" \
        --gtest_filter='NormalPaths.*'
done
if [ -x "$build/tests/cuda_tests" ]; then
    gtest "CUDA device tests (skip without a GPU)" "$build/tests/cuda_tests"
else
    echo "== CUDA device tests: not built (no nvcc, or make CUDA=0)"
fi
if [ -e "$build/obj/cuda/cuda_backend.o" ]; then
    check "the fat binary: machine code and PTX for library.mk's GPU architectures, compressed, in the CUDA module and the static archive" \
        "$top/tests/fatbin_test.sh" "$build"
else
    echo "== the fat binary: skipped: the build has no CUDA (no nvcc, or make CUDA=0)"
    skipped=$((skipped + 1))
fi
if ls "$build"/librngtrk_cuda[0-9]*.so >/dev/null 2>&1; then
    check "a CUDA path that cannot run says why (stand-in driver: old, no GPU, no code, module missing or foreign)" \
        "$top/tests/driver_stand_in_test.sh" "$build"
else
    echo "== the CUDA reasons under a stand-in driver: skipped: the build has no CUDA module (no nvcc, or make CUDA=0)"
    skipped=$((skipped + 1))
fi
check "rngtrk_device.cuh on the host equals the library" "$build/tests/device_header_host"
check "crash-safe checkpoint files under SIGKILL" "$build/tests/crash_safe_test"
check "exports: rngtrk_* only (version nodes too), each function in an rngtrk_N.M node" "$top/tests/check_exports.sh" "$build/librngtrk.so" "$top/c_api/rngtrk.h"
check "the ABI gate fails on breaks and passes additions" "$top/tests/abi_gate_test.sh"
check "dlopen" "$build/tests/dlopen_consumer" "$build/librngtrk.so.$(sed -n 's/^#define RNGTRK_VERSION_MAJOR //p' "$top/c_api/rngtrk.h")"
check "install: pkg-config and CMake consumers, shared and static" "$top/tests/install_test.sh"
check "library.mk lists every source of the library once; its lists agree" "$top/tests/build_lists_test.sh"
check "CMake: the top-level CMakeLists.txt compiles with the Makefile's flags; add_subdirectory and FetchContent" \
    "$top/tests/cmake_subproject_test.sh"
check "install-deps without root, or without a network: one clear line, apt's errors, a clean stop" \
    "$top/tests/install_deps_test.sh"
check "Rust outside the checkout: a path dependency and the packed rngtrk-sys link the installed library" \
    "$top/tests/rust_outside_test.sh"
check "make help lists every target of the Makefiles" "$top/tests/make_help_test.sh" "$top"
check "rngtrk command" "$top/tests/cli_test.sh" "$build/rngtrk" "$top/tests/vectors"
check "rngtrk inspect on hostile files (one-line errors, bounded memory)" "$top/tests/cli_fault_test.sh" "$build/rngtrk" "$top/tests/vectors"
check "rngtrk seeds and dtensor-offsets" "$top/tests/cli_distributed_test.sh" "$build/rngtrk"
check "rngtrk sample: the shared sample vectors" "$top/tests/cli_sample_test.sh" "$build/rngtrk" "$top/tests/vectors"
check "rngtrk error manners: one line, the subcommand's prefix, names, exit 2 or 1; help" \
    "$top/tests/cli_errors_test.sh" "$build/rngtrk" "$top/tests/vectors"
check "README's C example" "$top/tests/readme_example_test.sh"
check "docs/c-api.md's C program" "$top/tests/readme_example_test.sh" "$top/docs/c-api.md" c-api-example
check "fresh clone: make -j2 demo from nothing built, then plain make builds the rest" "$top/tests/fresh_clone_test.sh"
demo_dir=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$demo_dir"' EXIT
check "demo: resumed run draws identical numbers" "$build/demo_training_loop" "$demo_dir"
check "demo: Python resumes C's checkpoint and draws the same numbers" \
    env PYTHONPATH="$top/bindings/python" "$python" "$top/tools/demo_resume.py" "$demo_dir"
check "MPI: 8 ranks train and save, 4 ranks resume on another layout, mpi4py" "$top/tests/mpi/run_mpi_tests.sh"
pytest_suite "Python binding (cffi): bindings/python/tests" "$top/bindings/python/tests"
check "torch.distributed: tp=2 x dp=2 job on gloo, resumed on tp=2 x dp=1 (tests/torch_dist)" "$top/tests/torch_dist/run.sh"
cargo_suite "Rust workspace (rngtrk, rngtrk-sys): cargo test --offline --workspace (unit, integration, doc, compile_fail)"
rust_examples="$build/rust/debug/examples"
check "bindings/coverage.txt: every exported function reached from Python and Rust (nm -D, getattr, rustc)" \
    sh -c "cd '$top/bindings/rust' && '$cargo' build --offline --lib --quiet && '$python' '$top/tests/coverage_test.py' '$build/librngtrk.so' '$build/rust/debug'"
check "Rust: cargo doc builds without warnings" \
    sh -c "cd '$top/bindings/rust' && RUSTDOCFLAGS='-D warnings' '$cargo' doc --offline --workspace --no-deps --quiet"
check "Rust: example inspect prints what the C tool prints" \
    "$top/tests/rust_inspect_test.sh" "$rust_examples/inspect" "$build/rngtrk" "$top/tests/vectors"
check "draws in C, Python and Rust: byte-identical bits or the same status on 1000 random cases (tests/cross_language)" \
    "$python" "$top/tests/cross_language/run.py" "$build/tests/draw_cases" "$rust_examples/draw_cases"
check "README's and docs/rust.md's Rust examples" "$top/tests/readme_rust_example_test.sh"
check "Rust: sharded dropout example: 4 ranks' blocks equal the unsharded tensor" "$rust_examples/sharded_dropout"
check "demo: Rust resumes C's checkpoint and draws the same numbers" "$rust_examples/demo_resume" "$demo_dir"

echo "rngtrk: $passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ]
