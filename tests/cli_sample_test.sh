#!/bin/sh
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
           "--layout stateless --dist bits --dtype u32 --seed 1 --count 1" \
           "--layout stateless --dist bits --dtype u32 --seed x --offset 0 --count 1" \
           "--layout stateless --dist bits --dtype u32 --seed 1 --offset 0 --count 1 --bogus 3"; do
    # shellcheck disable=SC2086
    if "$cli" sample $bad >/dev/null 2>&1; then echo "FAIL: accepted: $bad"; fail=1; fi
done
# A library refusal (misaligned offset) exits 1 with one line on stderr.
err=$("$cli" sample --layout stateless --dist bits --dtype u32 --seed 1 --offset 2 --count 1 2>&1 >/dev/null); code=$?
[ $code -eq 1 ] && [ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || { echo "FAIL: misaligned offset: exit $code: $err"; fail=1; }
[ $fail -eq 0 ] && echo "cli sample: $checked vector lines identical"
exit $fail
