#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rngtrk seeds and rngtrk dtensor-offsets.
set -u
cli=$1
fail=0
expect() {  # expect "what" "wanted output" command...
    what=$1; want=$2; shift 2
    got=$("$@" 2>&1)
    [ "$got" = "$want" ] || { echo "FAIL: $what: got '$got', want '$want'"; fail=1; }
}
# The hand-worked DTensor rows of tests/api/test_distributed.cpp.
expect "dtensor 2x4 S0,R" "pre=64 post=128" "$cli" dtensor-offsets --mesh 2x4 --coord 1,3 --placements S0,R --shape 8,16
expect "dtensor docstring example" "pre=96 post=128" "$cli" dtensor-offsets --mesh 2x2x2 --coord 1,0,1 --placements S1,R,S0 --shape 8,16
expect "dtensor double shard, torch" "pre=108 post=68" "$cli" dtensor-offsets --mesh 2x3 --coord 1,2 --placements S0,S0 --shape 12,5 --offset 8
expect "dtensor double shard, exact" "pre=60 post=68" "$cli" dtensor-offsets --mesh 2x3 --coord 1,2 --placements S0,S0 --shape 12,5 --offset 8 --rule exact
"$cli" dtensor-offsets --mesh 2x4 --coord 2,0 --placements S0,R --shape 8,16 >/dev/null 2>&1 && { echo "FAIL: coord outside the mesh accepted"; fail=1; }
"$cli" dtensor-offsets --mesh 2x4 --coord 1 --placements S0,R --shape 8,16 >/dev/null 2>&1 && { echo "FAIL: short coord accepted"; fail=1; }
# Megatron's formulas for seed 1234, rank 5 of tp=2 pp=2 dp=2 (tp 1, dp 0, pp 1).
line=$("$cli" seeds --policy megatron --seed 1234 --tp 2 --pp 2 --dp 2 | sed -n 6p)
[ "$line" = "rank=5 tp=1 pp=1 dp=0 ep=0 etp=0 default=1334 data-parallel-rng=1334 model-parallel-rng=4053 expert-parallel-rng=2358" ] ||
    { echo "FAIL: megatron rank 5: $line"; fail=1; }
[ "$("$cli" seeds --policy megatron --seed 1 --tp 2 --pp 2 --dp 2 | wc -l)" -eq 8 ] || { echo "FAIL: one line per rank"; fail=1; }
# Additive seeds collide on wide layouts; the checker says where and exits 1.
out=$("$cli" seeds --policy megatron --seed 1234 --tp 128 --pp 2 --dp 1 --check); code=$?
[ $code -eq 1 ] || { echo "FAIL: megatron tp=128 pp=2 --check exit $code"; fail=1; }
printf '%s\n' "$out" | grep -q '^collision: seed=4052: rank=100 model-parallel-rng rank=128 model-parallel-rng$' ||
    { echo "FAIL: the tp 100 / pp 1 collision is not reported"; fail=1; }
"$cli" seeds --policy megatron --seed 1 --tp 1 --pp 2 --dp 16 --dp-random-init --check >/dev/null && { echo "FAIL: dp-random-init collision missed"; fail=1; }
# The derived policy on a large layout: none.
out=$("$cli" seeds --policy derived --seed 1234 --tp 8 --pp 8 --dp 64 --ep 8 --etp 2 --dp-random-init --check); code=$?
[ $code -eq 0 ] && [ "$(printf '%s\n' "$out" | tail -1)" = "0 collisions" ] || { echo "FAIL: derived: exit $code"; fail=1; }
"$cli" seeds --policy derived --seed 1 --tp 3 --pp 1 --dp 1 --ep 2 >/dev/null 2>&1 && { echo "FAIL: ep*etp must divide tp*dp"; fail=1; }
# A flag the policy does not read is the library's refusal, by name: a usage error.
out=$("$cli" seeds --policy megatron --seed 1 --tp 2 --pp 1 --dp 1 --always-enable-tp-seed 2>&1); code=$?
[ $code -eq 2 ] && [ "$out" = "rngtrk seeds: invalid argument: policy megatron does not read flag always-enable-tp-seed (it reads dp-random-init)" ] ||
    { echo "FAIL: megatron --always-enable-tp-seed: exit $code, '$out'"; fail=1; }
# slapo's default takes the tp seed: one stream with model-parallel-rng, not a collision.
out=$("$cli" seeds --policy slapo --seed 1 --tp 4 --pp 2 --dp 2 --always-enable-tp-seed --check); code=$?
[ $code -eq 0 ] && [ "$(printf '%s\n' "$out" | tail -1)" = "0 collisions" ] || { echo "FAIL: slapo tp seed: exit $code"; fail=1; }
[ $fail -eq 0 ] && echo "cli distributed: ok"
exit $fail
