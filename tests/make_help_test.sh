#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make help` lists every target a user can ask for: each rule named in a
# .PHONY line of the Makefile or a makefile it includes, bar the internal
# ones below (the sub-makes of targets that install their packages first),
# must appear as "make TARGET" in its output.
#   make_help_test.sh TOP
set -eu
top=$1
internal=" test-programs demo-run check-run fuzz-run werror-programs compilers-present "
help=$(make -s -C "$top" help)
missing=0
for target in $(sed -n 's/^\.PHONY:[[:space:]]*//p' "$top/Makefile" "$top"/tests/*.mk "$top"/tests/*/*.mk \
                "$top"/bench/*.mk "$top"/tools/*.mk | tr ' ' '\n' | sort -u); do
    case "$internal" in *" $target "*) continue ;; esac
    if ! printf '%s\n' "$help" | grep -Eq "(^| / )(make )?$target( |$)"; then
        echo "make help does not list '$target'"
        missing=$((missing + 1))
    fi
done
[ "$missing" -eq 0 ] || exit 1
echo "make help: every target listed"
