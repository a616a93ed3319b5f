#!/bin/sh
# The shared object exports the C ABI and nothing else: every defined
# dynamic symbol starts with rngtrk_, and every function in rngtrk.h is there.
set -eu
lib=$1
header=$2
stray=$(nm -D --defined-only "$lib" | awk '{print $NF}' | grep -v '^rngtrk_' || true)
if [ -n "$stray" ]; then
    echo "FAIL: $lib exports symbols outside rngtrk_*:"; echo "$stray"; exit 1
fi
declared=$(grep -o 'rngtrk_[a-z0-9_]*(' "$header" | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u)
missing=$(printf '%s\n' "$declared" | while read -r f; do
    printf '%s\n' "$exported" | grep -qx "$f" || echo "$f"; done)
if [ -n "$missing" ]; then
    echo "FAIL: declared in $header but not exported:"; echo "$missing"; exit 1
fi
echo "exports: ok ($(printf '%s\n' "$exported" | wc -l) symbols, all rngtrk_*, all declared ones present)"
