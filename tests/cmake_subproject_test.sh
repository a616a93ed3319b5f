#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The top-level CMakeLists.txt (docs/c-api.md, "CMake"):
# 1. it compiles every source with the flags the Makefile uses (both read
#    library.mk; compared source by source: CMake's compile_commands.json
#    against `make -n`);
# 2. add_subdirectory: a project (tests/cmake_subproject) builds rngtrk with
#    itself and links rngtrk::rngtrk and rngtrk::rngtrk_static; its programs
#    run, and draw the same bits as the Makefile's library (without CUDA, to
#    build once: CUDA is the same source with library.mk's nvcc flags);
# 3. FetchContent from an archive of the checkout configures and generates
#    both targets (the same CMakeLists.txt as 2; not built a second time);
# 4. a compiler without C++17 stops the configure with a clear message.
# Needs cmake and the Makefile's build (make test builds it first).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
quiet() { "$@" >"$work/log" 2>&1 || { cat "$work/log"; fail "$*"; }; }

# 1. The same flags, source by source.
quiet cmake -S "$top" -B "$work/flags" -DRNGTRK_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
(cd "$top" && make -n -B BUILD="$work/make" CUDA=0 lib) >"$work/make.txt" 2>&1 || { cat "$work/make.txt"; fail "make -n"; }
python3 "$top/tests/compare_compile_flags.py" cmake "$top" "$work/make.txt" compile_commands \
    "$work/flags/compile_commands.json" || fail "CMake and make compile with other flags"

# 2. add_subdirectory, built and run.
quiet cmake -S "$top/tests/cmake_subproject" -B "$work/sub" -DRNGTRK_SOURCE="$top" -DRNGTRK_CUDA=OFF
quiet cmake --build "$work/sub" -j "${JOBS:-2}"
for kind in shared static; do
    quiet "$work/sub/consumer_$kind"
    "$work/sub/draws_$kind" >"$work/draws_$kind.txt" || fail "draws_$kind"
done
ldd "$work/sub/consumer_shared" | grep -q "$work/sub/rngtrk/librngtrk.so" || fail "consumer_shared did not load the CMake-built library"
ldd "$work/sub/consumer_static" | grep -q librngtrk && fail "consumer_static loads librngtrk.so"
"$top/tests/check_exports.sh" "$work/sub/rngtrk/librngtrk.so" "$top/c_api/rngtrk.h" >/dev/null || fail "the CMake-built library's exports"
${CC:-cc} -std=c99 -I"$top/c_api" -o "$work/draws_make" "$top/tests/c/draw_digest.c" -L"$top/build" -lrngtrk \
    -Wl,-rpath,"$top/build"
"$work/draws_make" >"$work/draws_make.txt"
cmp -s "$work/draws_make.txt" "$work/draws_shared.txt" && cmp -s "$work/draws_make.txt" "$work/draws_static.txt" ||
    { cat "$work"/draws_*.txt; fail "the CMake build draws other bits than the Makefile's"; }

# 3. FetchContent from an archive of the checkout's files.
if [ -d "$top/.git" ] && command -v git >/dev/null 2>&1; then
    (cd "$top" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -czf "$work/rngtrk.tar.gz" --transform 's|^|rngtrk/|')
else
    (cd "$top/.." && tar -czf "$work/rngtrk.tar.gz" --exclude "$(basename "$top")/build" "$(basename "$top")")
fi
quiet cmake -S "$top/tests/cmake_subproject" -B "$work/fetch" -DRNGTRK_HOW=FetchContent \
    -DRNGTRK_URL="file://$work/rngtrk.tar.gz" -DRNGTRK_CUDA=OFF
cmake --build "$work/fetch" --target help >"$work/targets.txt" 2>&1
grep -q "rngtrk_static" "$work/targets.txt" || fail "FetchContent: no rngtrk_static target"

# 4. A compiler that refuses -std=c++17.
printf '#!/bin/sh\nfor a; do [ "$a" = -std=c++17 ] && { echo "unknown option $a" >&2; exit 1; }; done\nexec c++ "$@"\n' \
    >"$work/cxx14"
chmod +x "$work/cxx14"
if cmake -S "$top" -B "$work/old" -DCMAKE_CXX_COMPILER="$work/cxx14" >"$work/log" 2>&1; then
    fail "a compiler without C++17 configured"
fi
grep -q "rngtrk needs a C++17 compiler" "$work/log" || { cat "$work/log"; fail "no clear message for a compiler without C++17"; }
echo "cmake: add_subdirectory built and ran (shared, static; $(cat "$work/draws_make.txt" | cut -d' ' -f3) as make's), FetchContent configured, C++14 refused"
