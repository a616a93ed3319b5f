#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The rngtrk command's error manners: for each subcommand, a misspelled
# option, a missing value, negative and too-large numbers, a wrong dtype for
# the distribution, an unknown subcommand, and corrupt, empty and directory
# inputs.  Each must print exactly one line on stderr (nothing on stdout),
# prefixed with the subcommand that failed, naming values by their names
# (never "dtype 1"), say what the case is about, and exit 2 for a usage
# error or 1 for a data error.  Then: help goes to stdout with exit 0.
set -u
cli=$1
vectors=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
: >"$dir/empty.rtck"
mkdir "$dir/folder.rtck"
fail=0 cases=0

# case EXIT PREFIX MUST_CONTAIN ARGS...
case_() {
    want_code=$1 prefix=$2 needle=$3
    shift 3
    cases=$((cases + 1))
    "$cli" "$@" >"$dir/out" 2>"$dir/err"
    code=$?
    lines=$(wc -l <"$dir/err")
    err=$(cat "$dir/err")
    problem=""
    [ "$code" -eq "$want_code" ] || problem="exit $code, want $want_code"
    [ "$lines" -eq 1 ] || problem="$problem; $lines lines on stderr"
    [ -s "$dir/out" ] && problem="$problem; wrote to stdout"
    case $err in "$prefix"*) ;; *) problem="$problem; no prefix '$prefix'" ;; esac
    case $err in *"$needle"*) ;; *) problem="$problem; does not mention '$needle'" ;; esac
    # (A value with no name, such as a checkpoint's unknown policy 7, is
    # named by its number.)
    if printf '%s' "$err" | grep -v 'unknown seeding policy' | grep -Eq '(dtype|layout|distribution|policy|status) [0-9]'; then
        problem="$problem; names a value by its number"
    fi
    if [ -n "$problem" ]; then
        echo "FAIL: rngtrk $*: $problem"
        echo "      stderr: $err"
        fail=1
    fi
}

# Subcommands.
case_ 2 "rngtrk: " "did you mean 'sample'" smaple --seed 1
case_ 2 "rngtrk: " "unknown command 'frobnicate'" frobnicate
case_ 2 "rngtrk: " "unknown option --frob" --frob
case_ 2 "rngtrk: " "did you mean 'inspect'" help inspekt

# sample
case_ 2 "rngtrk sample: " "did you mean --count" sample --seed 1 --cout 3
case_ 2 "rngtrk sample: " "--count needs a value" sample --seed 1 --count
case_ 2 "rngtrk sample: " "--seed must not be negative" sample --seed -1 --count 1
case_ 2 "rngtrk sample: " "--count is too large" sample --seed 1 --count 99999999999999999999999
case_ 2 "rngtrk sample: " "--seed needs a whole number" sample --seed 1.5 --count 1
case_ 2 "rngtrk sample: " "not u8" sample --seed 1 --count 1 --dist normal --dtype u8
case_ 2 "rngtrk sample: " "not u32" sample --seed 1 --count 1 --dtype u32
case_ 2 "rngtrk sample: " "did you mean 'f16'" sample --seed 1 --count 1 --dtype u16
case_ 2 "rngtrk sample: " "--low does not apply to --dist normal" sample --seed 1 --count 1 --dist normal --low 0
case_ 2 "rngtrk sample: " "--p does not apply to --dist uniform" sample --seed 1 --count 1 --p 0.5
case_ 2 "rngtrk sample: " "multiple of 4" sample --seed 1 --count 1 --offset 2
case_ 2 "rngtrk sample: " "--sm-count must be at least 1" sample --seed 1 --count 1 --layout torch-eager-cuda --sm-count 0
case_ 2 "rngtrk sample: " "--high needs a number" sample --seed 1 --count 1 --high x
case_ 2 "rngtrk sample: " "needs --seed and --count" sample --count 3
case_ 2 "rngtrk sample: " "uniform needs low <= high" sample --seed 1 --count 1 --low 2 --high 1
case_ 2 "rngtrk sample: " "given twice" sample --seed 1 --seed 2 --count 1

# seeds
case_ 2 "rngtrk seeds: " "did you mean --policy" seeds --polcy megatron --seed 1 --tp 1 --pp 1 --dp 1
case_ 2 "rngtrk seeds: " "--tp needs a value" seeds --policy megatron --seed 1 --pp 1 --dp 1 --tp
case_ 2 "rngtrk seeds: " "--tp must not be negative" seeds --policy megatron --seed 1 --tp -2 --pp 1 --dp 1
case_ 2 "rngtrk seeds: " "--tp is too large" seeds --policy megatron --seed 1 --tp 99999999999 --pp 1 --dp 1
case_ 2 "rngtrk seeds: " "did you mean 'megatron'" seeds --policy megatrom --seed 1 --tp 1 --pp 1 --dp 1
case_ 2 "rngtrk seeds: " "must divide" seeds --policy derived --seed 1 --tp 3 --pp 1 --dp 1 --ep 2

# dtensor-offsets
case_ 2 "rngtrk dtensor-offsets: " "did you mean --mesh" dtensor-offsets --meshh 2x4 --coord 1,3 --placements S0,R --shape 8,16
case_ 2 "rngtrk dtensor-offsets: " "--shape needs a value" dtensor-offsets --mesh 2x4 --coord 1,3 --placements S0,R --shape
case_ 2 "rngtrk dtensor-offsets: " "--offset must not be negative" dtensor-offsets --mesh 2 --coord 1 --placements S0 --shape 8 --offset -4
case_ 2 "rngtrk dtensor-offsets: " "--offset is too large" dtensor-offsets --mesh 2 --coord 1 --placements S0 --shape 8 --offset 99999999999999999999999
case_ 2 "rngtrk dtensor-offsets: " "--mesh: '2x-1'" dtensor-offsets --mesh 2x-1 --coord 1,0 --placements S0,R --shape 8
case_ 2 "rngtrk dtensor-offsets: " "--placements" dtensor-offsets --mesh 2 --coord 1 --placements Q --shape 8
case_ 2 "rngtrk dtensor-offsets: " "one entry per --mesh dimension" dtensor-offsets --mesh 2x4 --coord 1 --placements S0,R --shape 8

# inspect
case_ 2 "rngtrk inspect: " "needs a FILE" inspect
case_ 2 "rngtrk inspect: " "unknown option --fiel" inspect --fiel x
case_ 1 "rngtrk inspect: $dir/empty.rtck: " "bad magic" inspect "$dir/empty.rtck"
case_ 1 "rngtrk inspect: $dir/folder.rtck: " "cannot read: Is a directory" inspect "$dir/folder.rtck"
case_ 1 "rngtrk inspect: /nonexistent/x.rtck: " "No such file" inspect /nonexistent/x.rtck
for bad in "$vectors"/checkpoints/invalid/*.rtck; do
    case_ 1 "rngtrk inspect: $bad: " "" inspect "$bad"
    # The status is named once, never "corrupt checkpoint: corrupt checkpoint".
    if grep -q "corrupt checkpoint: corrupt checkpoint" "$dir/err"; then echo "FAIL: repeated prefix: $(cat "$dir/err")"; fail=1; fi
done

# Help: stdout, exit 0, the subcommand's usage.
for sub in inspect sample seeds dtensor-offsets; do
    for form in "help $sub" "$sub --help" "$sub -h"; do
        # shellcheck disable=SC2086
        out=$("$cli" $form 2>"$dir/err"); code=$?
        case $out in "usage: rngtrk $sub"*) ;; *) echo "FAIL: rngtrk $form does not print $sub's usage"; fail=1 ;; esac
        [ $code -eq 0 ] && [ ! -s "$dir/err" ] || { echo "FAIL: rngtrk $form: exit $code or stderr"; fail=1; }
    done
done
for form in help --help -h; do
    "$cli" $form | grep -q "^  sample " || { echo "FAIL: rngtrk $form lists no commands"; fail=1; }
done
"$cli" >/dev/null 2>"$dir/err"; code=$?
[ $code -eq 2 ] && grep -q "^usage: rngtrk COMMAND" "$dir/err" || { echo "FAIL: bare rngtrk: exit $code"; fail=1; }
[ "$("$cli" --version)" = "$("$cli" version)" ] || { echo "FAIL: --version"; fail=1; }

[ $fail -eq 0 ] && echo "cli errors: $cases cases, one line each, right prefix and exit code"
exit $fail
