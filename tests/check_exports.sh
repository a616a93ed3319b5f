#!/bin/sh
# The shared object exports the C ABI and nothing else: every defined
# dynamic symbol starts with rngtrk_ and carries a version node RNGTRK_*
# (docs/abi.md), and every function in rngtrk.h is there.
set -eu
lib=$1
header=$2
unversioned=$(nm -D --defined-only --with-symbol-versions "$lib" | awk '{print $NF}' |
              grep -v '@RNGTRK_[0-9.]*$' | grep -v '^RNGTRK_[0-9.]*$' || true)
if [ -n "$unversioned" ]; then
    echo "FAIL: $lib exports symbols without an RNGTRK_ version node:"; echo "$unversioned"; exit 1
fi
stray=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | grep -v '^rngtrk_' | grep -v '^RNGTRK_' || true)
if [ -n "$stray" ]; then
    echo "FAIL: $lib exports symbols outside rngtrk_*:"; echo "$stray"; exit 1
fi
declared=$(grep -o 'rngtrk_[a-z0-9_]*(' "$header" | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | grep '^rngtrk_' | sort -u)
missing=$(printf '%s\n' "$declared" | while read -r f; do
    printf '%s\n' "$exported" | grep -qx "$f" || echo "$f"; done)
if [ -n "$missing" ]; then
    echo "FAIL: declared in $header but not exported:"; echo "$missing"; exit 1
fi
echo "exports: ok ($(printf '%s\n' "$exported" | wc -l) symbols, all rngtrk_*, all declared ones present)"
