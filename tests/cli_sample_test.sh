#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rngtrk sample: every line of tests/vectors/sample_vectors.txt, printed with
# --bits, equals the vector's hex values; decimal printing and errors.
set -u
cli=$1
vectors=$2
fail=0
checked=0
while read -r kind layout dist dtype seed offset first count a b sm threads numel values; do
    [ "$kind" = sample ] || continue
    case $dist in
        uniform) params="--low $a --high $b" ;;
        normal) params="--mean $a --std $b" ;;
        bernoulli) params="--p $a" ;;
        *) params="" ;;
    esac
    # shellcheck disable=SC2086
    got=$("$cli" sample --layout "$layout" --dist "$dist" --dtype "$dtype" --seed "$seed" --offset "$offset" \
          --first "$first" --count "$count" $params --sm-count "$sm" --max-threads-per-sm "$threads" \
          --numel "$numel" --bits | tr '\n' ' ' | sed 's/ $//')
    if [ "$got" != "$values" ]; then
        echo "FAIL: rngtrk sample $layout $dist $dtype seed $seed first $first: $got != $values"; fail=1
    fi
    checked=$((checked + 1))
done < "$vectors/sample_vectors.txt"
[ $checked -ge 150 ] || { echo "FAIL: only $checked sample lines checked"; fail=1; }
# Decimal output: %.9g for f32 (torch.rand(4) on CUDA after manual_seed(0)).
got=$("$cli" sample --layout torch-eager-cuda --dist uniform --dtype f32 --seed 0 --offset 0 --count 2 | tr '\n' ' ')
[ "$got" = "0.399046481 0.516679168 " ] || { echo "FAIL: decimal f32 output: $got"; fail=1; }
got=$("$cli" sample --layout stateless --dist bits --dtype u32 --seed 0 --offset 0 --count 1)
[ "$got" = "1713891541" ] || { echo "FAIL: decimal u32 output: $got"; fail=1; }   # 0x6627e8d5
for bad in "--layout nope --dist bits --dtype u32 --seed 1 --offset 0 --count 1" \
           "--layout stateless --dist bits --dtype u32 --count 1" \
           "--layout stateless --dist bits --dtype u32 --seed x --offset 0 --count 1" \
           "--layout stateless --dist bits --dtype u32 --seed 1 --offset 0 --count 1 --bogus 3"; do
    # shellcheck disable=SC2086
    if "$cli" sample $bad >/dev/null 2>&1; then echo "FAIL: accepted: $bad"; fail=1; fi
done
# The documented defaults (stateless, uniform, f32, offset 0, first 0) are optional.
[ "$("$cli" sample --seed 7 --count 3)" = "$("$cli" sample --layout stateless --dist uniform --dtype f32 --seed 7 \
    --offset 0 --first 0 --count 3)" ] || { echo "FAIL: defaults"; fail=1; }
[ "$("$cli" sample --seed 7 --count 1 --dist bits)" = "$("$cli" sample --seed 7 --count 1 --dist bits --dtype u32)" ] ||
    { echo "FAIL: bits defaults to u32"; fail=1; }
# Streaming: ten billion values start at once, in 256 MiB of address space,
# and equal one library call's values however the output is chunked.
# RNGTRK_TEST_VM_LIMIT_KB=none drops the address-space bound: under an
# emulator (qemu-user) the bound would limit the emulator's own mapping of
# the guest, not the program, and qemu can fail to load it at all.
vm_limit=${RNGTRK_TEST_VM_LIMIT_KB:-262144}
if [ "$vm_limit" = none ]; then
    echo "cli sample: streaming checked without an address-space bound (RNGTRK_TEST_VM_LIMIT_KB=none)"
    first=$("$cli" sample --seed 1 --count 10000000000 | head -1)
else
    first=$( (ulimit -v "$vm_limit"; "$cli" sample --seed 1 --count 10000000000 | head -1) )
fi
[ "$first" = "$("$cli" sample --seed 1 --count 1)" ] || { echo "FAIL: streaming: $first"; fail=1; }
a=$("$cli" sample --layout torch-eager-cuda --seed 3 --first 65530 --count 20 --bits | md5sum)
b=$("$cli" sample --layout torch-eager-cuda --seed 3 --count 65550 --bits | tail -20 | md5sum)
[ "$a" = "$b" ] || { echo "FAIL: a range across a chunk boundary differs from the whole tensor's"; fail=1; }
# A misaligned offset is a usage error: exit 2, one line on stderr.
err=$("$cli" sample --layout stateless --dist bits --dtype u32 --seed 1 --offset 2 --count 1 2>&1 >/dev/null); code=$?
[ $code -eq 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { echo "FAIL: misaligned offset: exit $code: $err"; fail=1; }
[ $fail -eq 0 ] && echo "cli sample: $checked vector lines identical"
exit $fail
