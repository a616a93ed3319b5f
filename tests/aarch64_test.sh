#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make test-aarch64, the run: the aarch64 build's C API tests under
# qemu-aarch64, then the aarch64 rngtrk command on every shared sample
# vector and golden checkpoint (the x86-64 bits, written by the Python
# reference).  cuRAND (an x86-64 library) and the GPU are absent there:
# those tests skip and say so.
#   aarch64_test.sh BUILD_DIR
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
export QEMU_LD_PREFIX=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
fail=0
file -L "$build/librngtrk.so.0" | grep -q "ARM aarch64" || { echo "FAIL: $build/librngtrk.so.0 is not an aarch64 library"; exit 1; }
qemu-aarch64 "$build/tests/api_tests" --gtest_brief=1 >"$build/api_tests.log" 2>&1 || fail=1
grep -E "^\[  (PASSED|FAILED|SKIPPED) |CPU path" "$build/api_tests.log"
[ $fail -eq 0 ] || { tail -40 "$build/api_tests.log"; echo "FAIL: the C API tests on aarch64"; }
# The command line, through qemu.
wrapper="$build/rngtrk-qemu"
printf '#!/bin/sh\nexec qemu-aarch64 "%s" "$@"\n' "$build/rngtrk" >"$wrapper"
chmod +x "$wrapper"
# qemu-user maps the guest inside its own address space, so a host ulimit -v
# bounds qemu, not the program (and can stop qemu loading it): the native
# run of the same test keeps the bound.
RNGTRK_TEST_VM_LIMIT_KB=none "$top/tests/cli_sample_test.sh" "$wrapper" "$top/tests/vectors" || fail=1
"$top/tests/cli_test.sh" "$wrapper" "$top/tests/vectors" || fail=1
[ $fail -eq 0 ] && echo "aarch64: the C API tests pass and every shared vector and golden checkpoint is bit-identical"
exit $fail
