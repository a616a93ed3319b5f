#!/bin/sh
# README.md's Rust example is bindings/rust/examples/readme.rs, word for
# word, and runs (cargo test has built it).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
block=$(sed -n '/<!-- readme-rust-example:begin -->/,/<!-- readme-rust-example:end -->/p' "$top/README.md" |
        sed '1,2d;$d' | sed '$d')
if [ "$block" != "$(cat "$top/bindings/rust/examples/readme.rs")" ]; then
    echo "FAIL: README's Rust example differs from bindings/rust/examples/readme.rs"; exit 1
fi
"$top/build/rust/debug/examples/readme" | grep -q '^duplicate seed: seed 3952' || { echo "FAIL: the example's output"; exit 1; }
