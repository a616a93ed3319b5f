#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rngtrk inspect on damaged and hostile files: empty, truncated, 1 GiB of
# zeros (sparse), random bytes, random bytes behind a valid magic, a folder.
# Each gives exactly one line on stderr and exit 1, within 256 MiB of
# address space (nothing is read or allocated beyond the header).
set -u
cli=$1
vectors=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
: > "$dir/empty.rtck"
head -c 30 "$vectors/checkpoints/megatron.rtck" > "$dir/truncated.rtck"
truncate -s 1G "$dir/huge_zeros.rtck"
head -c 4096 /dev/urandom > "$dir/random.rtck"
{ printf 'RNGTRKCK\001\000\000\000'; head -c 4096 /dev/urandom; } > "$dir/random_after_magic.rtck"
{ printf 'RNGTRKCK\001\000\000\000\000\000\000\100\000\000\000\000'; } > "$dir/claims_1gib.rtck"
mkdir "$dir/folder.rtck"
fail=0
for f in "$dir"/*.rtck; do
    err=$(ulimit -v 262144; "$cli" inspect "$f" 2>&1 >/dev/null); code=$?
    lines=$(printf '%s\n' "$err" | wc -l)
    if [ $code -ne 1 ] || [ "$lines" -ne 1 ] || [ -z "$err" ]; then
        echo "FAIL: $(basename "$f"): exit $code, stderr: $err"; fail=1
    fi
done
[ $fail -eq 0 ] && echo "cli faults: one-line errors, bounded memory"
exit $fail
