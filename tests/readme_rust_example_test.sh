#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The documentation's Rust programs are the crate's examples, word for word
# but the example's SPDX licence line, and run (cargo test has built them):
# README.md's is examples/readme.rs, docs/rust.md's is examples/tour.rs.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
examples="$top/build/rust/debug/examples"
fail=0
check() {  # check FILE MARKER EXAMPLE EXPECTED_OUTPUT_LINE_PATTERN
    block=$(sed -n "/<!-- $2:begin -->/,/<!-- $2:end -->/p" "$1" | sed '1,2d;$d' | sed '$d')
    if [ "$block" != "$(grep -v '^// SPDX-License-Identifier: ' "$top/bindings/rust/examples/$3.rs")" ]; then
        echo "FAIL: the Rust example in $1 differs from bindings/rust/examples/$3.rs"; fail=1
    fi
    # The whole output first: grep -q would close the pipe at its first
    # match, and the example's next println! would panic on the broken pipe.
    out=$("$examples/$3") || { echo "FAIL: examples/$3 exited $?"; fail=1; }
    printf '%s\n' "$out" | grep -q "$4" || { echo "FAIL: examples/$3 did not print $4"; fail=1; }
}
check "$top/README.md" readme-rust-example readme '^{"format_version": 1, "default"'
check "$top/docs/rust.md" rust-example tour '^duplicate seed: seed 3952'
exit $fail
