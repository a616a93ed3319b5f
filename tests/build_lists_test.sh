#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# library.mk, the one list of the library's sources (read by the Makefile
# and CMakeLists.txt), names every .cpp of core/ and c_api/ and nothing
# else, and its per-source lists agree: the x86-64-only sources are the
# AVX2 and AVX-512 engines, which are engines, which are library sources.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
list() { sed -e ':a' -e '/\\$/N; s/\\\n//; ta' library.mk | sed -n "s/^$1 := //p" | tr -s ' ' '\n' | sed '/^$/d' | sort; }
failed=0
on_disk=$(ls core/*.cpp c_api/*.cpp | sort)
[ "$(list LIB_SOURCES)" = "$on_disk" ] || {
    echo "library.mk's LIB_SOURCES is not every .cpp of core/ and c_api/:"
    printf '%s\n' "$(list LIB_SOURCES)" >/tmp/rngtrk-listed.$$; printf '%s\n' "$on_disk" | diff /tmp/rngtrk-listed.$$ - || true
    rm -f /tmp/rngtrk-listed.$$; failed=1; }
[ "$(list X86_64_SOURCES)" = "$( (list AVX2_SOURCES; list AVX512_SOURCES) | sort)" ] ||
    { echo "X86_64_SOURCES is not AVX2_SOURCES and AVX512_SOURCES"; failed=1; }
for s in $(list ENGINE_SOURCES) $(list NO_CUDA_SOURCES) $(list CUDA_SOURCES); do
    [ -f "$s" ] || { echo "library.mk names $s, which does not exist"; failed=1; }
done
for s in $(list ENGINE_SOURCES); do
    list LIB_SOURCES | grep -qx "$s" || { echo "engine $s is not in LIB_SOURCES"; failed=1; }
done
[ $failed -eq 0 ] && echo "library.mk: $(list LIB_SOURCES | wc -l) sources, the lists agree"
exit $failed
