#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Run by tests/fresh_machine_test.sh inside the new machine, as root in the
# clone: the README's commands as a new user types them, each bounded in
# time.  Prints "test-fresh: ok" when every step passed.
set -u
cd "$(dirname "$0")/.."
top=$(pwd)
log=/tmp/fresh-step.log
fail() { echo "test-fresh: FAIL: $*"; exit 1; }

step() {  # step NAME SECONDS COMMAND...: runs it with its output shown and kept
    name=$1 limit=$2
    shift 2
    echo "=== test-fresh: $name"
    began=$(date +%s)
    timeout "$limit" "$@" >"$log" 2>&1
    code=$?
    cat "$log"
    cat "$log" >>/tmp/all-steps.log
    [ $code -eq 124 ] && fail "$name did not finish in $limit s"
    [ $code -eq 0 ] || fail "$name exited $code"
    echo "=== test-fresh: $name: ok ($(($(date +%s) - began)) s)"
}

# A README block, by its markers: the lines inside its ``` fence.
block() {
    sed -n "/<!-- $1:begin -->/,/<!-- $1:end -->/p" README.md | sed -n '/^```/,/^```$/p' | sed '1d;$d'
}

# The README's two commands.
step "make demo" 2400 make demo
step "make test" 3000 make test
cp "$log" /tmp/make-test.log
tail -1 /tmp/make-test.log | grep -Eq '^rngtrk: [0-9]+ passed, 0 failed, [0-9]+ skipped$' ||
    fail "make test did not end with its count line and 0 failed"
# Every skip must be one this machine explains: it has no GPU, no CUDA
# toolkit (so no cuRAND), no Megatron-LM checkout, a torch older than a
# feature (Debian 12's 1.13: no torch.compile operators, DTensor, DCP, uint64
# keys or the non-reentrant early stop; Debian 13's 2.6: no torch.func._random;
# 13's and newer: DCP and uint64 present, so no refusal),
# the SIMD normal test that runs only where RNGTRK_CPU forces an engine
# (tests/run_all.sh runs it again so), and an engine this CPU lacks
# (AVX-512 on some x86-64 machines).
grep -E '^skipped: |^SKIPPED |^\[  SKIPPED \] [A-Za-z]' /tmp/make-test.log |
    grep -Ev 'no CUDA device|no GPU|no CUDA|libcurand not found|MEGATRON_LM does not name|CurandOracle\.|Cuda\.|has no torch\.library\.register_fake|has no torch\.compile custom operators|but this CPU lacks it|has no DTensor|has no torch\.distributed\.checkpoint|never stops early|has DCP: the module imports|has no uint64 tensors|this torch has uint64 tensors|has no torch\.func\._random|RNGTRK_CPU does not force a SIMD engine|NormalPaths\.ForcedEngine' \
    >/tmp/unexplained-skips.txt
[ -s /tmp/unexplained-skips.txt ] && { cat /tmp/unexplained-skips.txt; fail "skips this machine does not explain"; }
grep -n 'panicked\|rustc-check-cfg requires' /tmp/all-steps.log && fail "make demo or make test printed a panic or a cargo warning"

# The README's Python section: its install commands, then its example from another folder.
block readme-python-install >/tmp/python-install.sh
[ -s /tmp/python-install.sh ] || fail "no readme-python-install block"
step "README: Python install" 600 sh -eux /tmp/python-install.sh
block readme-python-example >/tmp/example.py
mkdir -p /tmp/elsewhere
step "README: the Python example from another folder" 120 sh -c "cd /tmp/elsewhere && $top/.venv/bin/python /tmp/example.py"
grep -q '"model-parallel-rng"' "$log" || fail "the Python example printed no checkpoint"

# The README's Rust section.
block readme-rust-run >/tmp/rust-run.sh
step "README: Rust" 900 sh -eux /tmp/rust-run.sh
grep -q '^{"format_version": 1' "$log" || fail "the Rust example printed no checkpoint"

# The README's C section: the program as app.c, then its build commands.
block readme-example >app.c
block readme-c-build >/tmp/c-build.sh
[ -s app.c ] && [ -s /tmp/c-build.sh ] || fail "no C example or build commands in README.md"
step "README: C (make install, pkg-config, run)" 600 sh -eux /tmp/c-build.sh
grep -q ' from seed 3952$' "$log" || fail "the C program did not run"

# This release's compilers: g++ and clang with -Werror, every header alone.
step "make test-werror (g++ and clang, -Werror)" 2400 make test-werror
. /etc/os-release
echo "test-fresh: $(tail -1 /tmp/make-test.log) ($PRETTY_NAME)"
echo "test-fresh: ok"
