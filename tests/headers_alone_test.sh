#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Every header of core/, c_api/ and cuda/ compiled alone, as the first line
# of an empty C++17 file, with the project's warning set (the
# WARNINGS line in library.mk) and -Werror: a header that uses something it does not
# include (uint8_t without <cstdint>, which g++ 13 stopped bringing in
# through <string>) fails here on the compiler that no longer hides it.
# (The public header alone, as C and C++, is a test of its own in make test.)
#   tests/headers_alone_test.sh [CXX...]     default: $CXX, else c++
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
warnings=$(sed -n 's/^WARNINGS := //p' library.mk)
[ -n "$warnings" ] || { echo "headers alone: no WARNINGS line in library.mk"; exit 1; }
[ $# -gt 0 ] || set -- "${CXX:-c++}"
failed=0 checked=0
for cxx in "$@"; do
    command -v "$cxx" >/dev/null 2>&1 || { echo "headers alone: no compiler $cxx"; exit 1; }
    for h in core/*.h c_api/*.h cuda/*.h cuda/*.cuh; do
        # shellcheck disable=SC2086
        if ! out=$("$cxx" -std=c++17 $warnings -Werror -fsyntax-only -x c++ -Icore -include "$h" /dev/null 2>&1); then
            echo "FAIL: $h alone ($cxx):"
            printf '%s\n' "$out" | head -8
            failed=$((failed + 1))
        fi
        checked=$((checked + 1))
    done
done
echo "headers alone: $checked compiled, $failed failed ($*)"
[ $failed -eq 0 ]
