#!/bin/sh
# Extracts the C program between the readme-example markers of README.md,
# builds it against build/ and runs it: the README's example cannot rot.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed -n '/<!-- readme-example:begin -->/,/<!-- readme-example:end -->/p' "$top/README.md" \
    | sed '1,2d;$d' | sed '$d' > "$work/example.c"
[ -s "$work/example.c" ] || { echo "FAIL: no example found in README.md"; exit 1; }
${CC:-cc} -std=c99 -Wall -Wextra -pedantic -Werror -I"$top/c_api" -o "$work/example" "$work/example.c" \
    -L"$top/build" -lrngtrk -Wl,-rpath,"$top/build"
"$work/example"
