#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The ABI gate (docs/abi.md): compares a freshly built librngtrk.so with the
# committed baseline (abidw's XML) and fails on any change that breaks a
# program built against the baseline: a removed or renamed symbol, a
# changed function (its parameters, or any type it reaches: a struct's
# layout, an enum's values), a changed variable.  Added functions pass.
#
#   abi_check.sh BASELINE.abi LIBRARY.so
#
# abidiff's exit status is a bit set: 1 error, 2 usage error, 4 ABI change,
# 8 incompatible change.  A change (4) alone may be an addition, so the
# summary lines decide.
set -u
baseline=$1
library=$2
command -v abidiff >/dev/null 2>&1 || { echo "abi-check: abidiff is missing (Debian: abigail-tools)"; exit 1; }
# (The baseline holds only the exported interface, so the new library needs
# no header filter: its extra private types cannot match anything.)
# --redundant: abidiff reports every changed function as Changed instead of
# folding repeats into "filtered out", so what it still filters out is what
# libabigail deems harmless, such as enumerators appended to an enum — which
# docs/abi.md allows (statuses, layouts and modes are only ever appended).
report=$(abidiff --no-show-locs --redundant "$baseline" "$library" 2>&1)
code=$?
if [ $((code & 3)) -ne 0 ]; then
    printf '%s\n' "$report"
    echo "abi-check: abidiff failed (exit $code)"
    exit 1
fi
# "Functions changes summary: R Removed, C Changed (F filtered out), A Added functions"
count() {  # count KIND WHAT: the number before WHAT on the KIND summary line (0 if none)
    n=$(printf '%s\n' "$report" | sed -n "s/^$1 changes summary:.*[^0-9]\([0-9][0-9]*\) $2.*/\1/p" | head -1)
    echo "${n:-0}"
}
removed=$(( $(count Functions Removed) + $(count Variables Removed) ))
changed=$(( $(count Functions Changed) + $(count Variables Changed) ))
harmless=$(count Functions 'filtered out')
added=$(( $(count Functions Added) + $(count Variables Added) ))
if [ $((code & 8)) -ne 0 ] || [ "$removed" -gt 0 ] || [ "$changed" -gt 0 ]; then
    printf '%s\n' "$report"
    echo "abi-check: FAILED: $removed removed, $changed changed against $baseline."
    echo "  If the break is intended (docs/abi.md says when it may be), run 'make abi-update' and commit $baseline."
    exit 1
fi
echo "abi-check: ok ($added added, $harmless with harmless changes such as appended enumerators, nothing removed or changed against $baseline)"
