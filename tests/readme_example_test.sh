#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Extracts the C program between the MARKER:begin and MARKER:end comments of
# FILE (default: README.md, readme-example), builds it against build/ and
# runs it: the documentation's C examples cannot rot.
#   readme_example_test.sh [FILE MARKER]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
file=${1:-$top/README.md}
marker=${2:-readme-example}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -n "/<!-- $marker:begin -->/,/<!-- $marker:end -->/p" "$file" \
    | sed '1,2d;$d' | sed '$d' > "$work/example.c"
[ -s "$work/example.c" ] || { echo "FAIL: no $marker example found in $file"; exit 1; }
${CC:-cc} -std=c99 -Wall -Wextra -pedantic -Werror -I"$top/c_api" -o "$work/example" "$work/example.c" \
    -L"$top/build" -lrngtrk -Wl,-rpath,"$top/build"
"$work/example"
