#!/bin/sh
# `make install DESTDIR=tmp`, then build a C99 program with nothing but
# `pkg-config --cflags --libs rngtrk` (shared) and `--static` (static archive)
# and run both against the installed copy.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix=/opt/rngtrk-test
env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" install DESTDIR="$stage" PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$stage$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
export PKG_CONFIG_LIBDIR="$PKG_CONFIG_PATH"
for f in include/rngtrk.h lib/librngtrk.so lib/librngtrk.a lib/pkgconfig/rngtrk.pc bin/rngtrk; do
    [ -e "$stage$prefix/$f" ] || { echo "FAIL: install did not create $prefix/$f"; exit 1; }
done
soname=$(readlink "$stage$prefix/lib/librngtrk.so")
[ -e "$stage$prefix/lib/$soname" ] || { echo "FAIL: dangling librngtrk.so link"; exit 1; }
grep -q "^prefix=$prefix\$" "$stage$prefix/lib/pkgconfig/rngtrk.pc" || { echo "FAIL: .pc prefix"; exit 1; }
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c99 -Wall -Wextra -pedantic -Werror -o "$stage/consumer_shared" "$top/tests/c/installed_consumer.c" \
    $(pkg-config --cflags --libs rngtrk)
LD_LIBRARY_PATH="$stage$prefix/lib" "$stage/consumer_shared"
# The program must have run against the installed copy, not build/.
LD_LIBRARY_PATH="$stage$prefix/lib" ldd "$stage/consumer_shared" | grep -q "$stage$prefix/lib/librngtrk.so" \
    || { echo "FAIL: consumer did not load the installed library"; exit 1; }
# shellcheck disable=SC2046
# (The sysroot that stands for DESTDIR also prefixes the CUDA toolkit's
# -L, which is not under the stage: undo that one.)
$cc -std=c99 -o "$stage/consumer_static" "$top/tests/c/installed_consumer.c" \
    $(pkg-config --cflags rngtrk) "$stage$prefix/lib/librngtrk.a" \
    $(pkg-config --static --libs rngtrk | sed -e 's/-lrngtrk //' -e "s|-L$stage$prefix/lib||" -e "s|$stage/usr/local/cuda|/usr/local/cuda|g")
"$stage/consumer_static"
env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" uninstall DESTDIR="$stage" PREFIX="$prefix" >/dev/null
# Nothing is left, not even the folders install made.
[ ! -e "$stage$prefix" ] || { echo "FAIL: uninstall left: $(find "$stage$prefix")"; exit 1; }
# A folder that holds something else stays.
mkdir -p "$stage/keep/lib" && : >"$stage/keep/lib/other.so"
env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" install DESTDIR="$stage" PREFIX=/keep >/dev/null
env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" uninstall DESTDIR="$stage" PREFIX=/keep >/dev/null
[ -e "$stage/keep/lib/other.so" ] && [ ! -e "$stage/keep/include" ] ||
    { echo "FAIL: uninstall removed a folder in use, or left an empty one: $(find "$stage/keep")"; exit 1; }
echo "install: ok (make install/uninstall, pkg-config shared and static)"
