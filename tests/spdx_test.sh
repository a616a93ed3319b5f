#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every source file of the checkout carries the licence's SPDX line
# (LICENSE: Apache-2.0) in its first three lines, and the package
# manifests declare it.  Run by tests/run_all.sh.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
line='SPDX-License-Identifier: Apache-2.0'
if [ -d .git ] && command -v git >/dev/null 2>&1; then
    files=$(git ls-files)
else
    files=$(find . -path ./build -prune -o -path ./.git -prune -o -type f -print | sed 's|^\./||')
fi
missing=0 checked=0
for f in $files; do
    case $f in
        tests/vectors/*.json | tests/vectors/checkpoints/* | tests/fuzz/corpus/*) continue ;;
        *.c | *.h | *.cpp | *.hpp | *.cu | *.cuh | *.inc | *.rs | *.py | *.sh | *.mk | Makefile | */Makefile | \
        CMakeLists.txt | */CMakeLists.txt | *.cmake | *.cmake.in | *.pc.in | .ci/run) ;;
        *) continue ;;
    esac
    checked=$((checked + 1))
    head -3 "$f" | grep -q "$line" || { echo "no SPDX line in the first three lines: $f"; missing=$((missing + 1)); }
done
for manifest in bindings/python/pyproject.toml bindings/rust/Cargo.toml bindings/rust/rngtrk-sys/Cargo.toml; do
    grep -q '^license = "Apache-2.0"' "$manifest" || { echo "$manifest declares no licence"; missing=$((missing + 1)); }
done
grep -q 'Apache License' LICENSE && grep -q 'Version 2.0, January 2004' LICENSE || { echo "LICENSE is not Apache-2.0's text"; missing=$((missing + 1)); }
echo "spdx: $checked source files checked, $missing problems"
[ "$missing" -eq 0 ] && [ "$checked" -gt 100 ]
