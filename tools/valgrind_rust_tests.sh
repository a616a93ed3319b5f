#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Runs the Rust crate's integration and unit test binaries under valgrind
# (make test-valgrind-rust): no invalid access, and no leak of a tracker,
# a fork guard or an error, including guards dropped during a panic.
# Threads are serialised (--test-threads=1) so the report is readable.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cargo=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
cd "$top/bindings/rust"
binaries=$("$cargo" test --offline --workspace --no-run --message-format=json 2>/dev/null |
    grep '"test":true' | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p')
status=0
for binary in $binaries; do
    case $binary in *sys_is_current*) continue ;; esac  # runs bindgen, not the library
    printf '%s: ' "$(basename "$binary")"
    if valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=99 "$binary" --test-threads=1 >/tmp/rngtrk-valgrind-rust.$$ 2>&1; then
        grep '^test result' /tmp/rngtrk-valgrind-rust.$$ | tail -1
    else
        echo "FAILED"; tail -40 /tmp/rngtrk-valgrind-rust.$$; status=1
    fi
done
rm -f /tmp/rngtrk-valgrind-rust.$$
exit $status
