#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The Rust example `inspect` prints what the C `rngtrk inspect` prints, byte
# for byte, on every checkpoint, valid or not: stdout, stderr and exit code.
set -u
rust=$1
c=$2
vectors=$3
fail=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for file in "$vectors"/checkpoints/*.rtck "$vectors"/checkpoints/invalid/*.rtck /nonexistent/file.rtck; do
    "$rust" "$file" >"$out/r.out" 2>"$out/r.err"; rc=$?
    "$c" inspect "$file" >"$out/c.out" 2>"$out/c.err"; cc=$?
    if [ $rc -ne $cc ] || ! cmp -s "$out/r.out" "$out/c.out" || ! cmp -s "$out/r.err" "$out/c.err"; then
        echo "FAIL: $file: Rust exit $rc, C exit $cc"; cat "$out/r.out" "$out/r.err" "$out/c.out" "$out/c.err"; fail=1
    fi
done
[ $fail -eq 0 ] && echo "rust inspect: identical to the C tool"
exit $fail
