#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The shared object exports the C ABI and nothing else: every defined
# dynamic symbol starts with rngtrk_ — the version nodes' own symbols
# (rngtrk_0.1) included — every function carries a version node rngtrk_N.M
# (docs/abi.md), and every function in rngtrk.h is there.
set -eu
lib=$1
header=$2
unversioned=$(nm -D --defined-only --with-symbol-versions "$lib" | awk '{print $NF}' |
              grep -v '@rngtrk_[0-9.]*$' | grep -v '^rngtrk_[0-9.]*$' || true)
if [ -n "$unversioned" ]; then
    echo "FAIL: $lib exports symbols without an rngtrk_N.M version node:"; echo "$unversioned"; exit 1
fi
stray=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sed 's/@.*//' | grep -v '^rngtrk_' || true)
if [ -n "$stray" ]; then
    echo "FAIL: $lib exports symbols outside rngtrk_*:"; echo "$stray"; exit 1
fi
declared=$(grep -o 'rngtrk_[a-z0-9_]*(' "$header" | tr -d '(' | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" {print $NF}' | sed 's/@.*//' | sort -u)
missing=$(printf '%s\n' "$declared" | while read -r f; do
    printf '%s\n' "$exported" | grep -qx "$f" || echo "$f"; done)
if [ -n "$missing" ]; then
    echo "FAIL: declared in $header but not exported:"; echo "$missing"; exit 1
fi
echo "exports: ok ($(printf '%s\n' "$exported" | wc -l) symbols, all rngtrk_*, all declared ones present)"
