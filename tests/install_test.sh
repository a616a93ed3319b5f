#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make install DESTDIR=tmp`, then build a C99 program with nothing but
# `pkg-config --cflags --libs rngtrk` (shared) and `--static` (static archive),
# with the staging folder as PKG_CONFIG_SYSROOT_DIR, and with CMake's
# find_package(rngtrk) (tests/cmake_consumer: the shared and the static
# target), and run each against the installed copy; then the installed tree
# moved elsewhere: its rngtrk.pc (prefix from ${pcfiledir}) still builds both,
# as does `pkg-config --define-prefix`, the static line with nothing added
# (built with CUDA: the runtime from cudalibdir, and from another folder
# through --define-variable).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix=/opt/rngtrk-test
env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" install DESTDIR="$stage" PREFIX="$prefix" >/dev/null
export PKG_CONFIG_PATH="$stage$prefix/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$stage"
export PKG_CONFIG_LIBDIR="$PKG_CONFIG_PATH"
for f in include/rngtrk.h lib/librngtrk.so lib/librngtrk.a lib/pkgconfig/rngtrk.pc bin/rngtrk \
         lib/cmake/rngtrk/rngtrkConfig.cmake lib/cmake/rngtrk/rngtrkConfigVersion.cmake; do
    [ -e "$stage$prefix/$f" ] || { echo "FAIL: install did not create $prefix/$f"; exit 1; }
done
soname=$(readlink "$stage$prefix/lib/librngtrk.so")
[ -e "$stage$prefix/lib/$soname" ] || { echo "FAIL: dangling librngtrk.so link"; exit 1; }
grep -q '^prefix=${pcfiledir}/../..$' "$stage$prefix/lib/pkgconfig/rngtrk.pc" || { echo "FAIL: .pc prefix"; exit 1; }
cc=${CC:-cc}
# shellcheck disable=SC2046
$cc -std=c99 -Wall -Wextra -pedantic -Werror -o "$stage/consumer_shared" "$top/tests/c/installed_consumer.c" \
    $(pkg-config --cflags --libs rngtrk)
LD_LIBRARY_PATH="$stage$prefix/lib" "$stage/consumer_shared"
# The program must have run against the installed copy, not build/.
LD_LIBRARY_PATH="$stage$prefix/lib" ldd "$stage/consumer_shared" | grep -q "$stage$prefix/lib/librngtrk.so" \
    || { echo "FAIL: consumer did not load the installed library"; exit 1; }
# The static link line as pkg-config gives it, under the sysroot: it names
# no folder outside the stage (pkg-config puts the sysroot before the CUDA
# toolkit's folder too: a sysroot consumer's toolkit is in the sysroot, so
# this one gives the toolkit's -L itself).
static_line=$(pkg-config --cflags --static --libs rngtrk)
for word in $static_line; do
    case $word in -L"$stage"/* | -I"$stage"/* | -[lp]* | -Wl,-rpath*) ;;
        *) echo "FAIL: the static line names something of this machine: $word (in: $static_line)"; exit 1 ;; esac
done
cuda_dir=
case " $static_line " in *" -lcudart_static "*) cuda_dir="-L${CUDA_HOME:-/usr/local/cuda}/lib64" ;; esac
# The toolkit's folder appears once in each installed file: as the default
# of the consumer's variable, NVIDIA's standard folder whatever CUDA_HOME
# the build had.
standard=/usr/local/cuda/lib64
if [ -n "$cuda_dir" ]; then
    # The shared library's CUDA module beside it, where its loader looks.
    ls "$stage$prefix/lib/"librngtrk_cuda[0-9]*.so >/dev/null 2>&1 ||
        { echo "FAIL: make install put no CUDA module (librngtrk_cudaNN.so) beside librngtrk.so"; exit 1; }
    [ "$(grep -c /cuda "$stage$prefix/lib/pkgconfig/rngtrk.pc")" = 1 ] &&
        grep -qx "cudalibdir=$standard" "$stage$prefix/lib/pkgconfig/rngtrk.pc" ||
        { echo "FAIL: rngtrk.pc names a CUDA folder other than as cudalibdir=$standard"; exit 1; }
    [ "$(grep -c /cuda "$stage$prefix/lib/cmake/rngtrk/rngtrkConfig.cmake")" = 1 ] &&
        grep -q "set(RNGTRK_CUDA_LIBDIR \"$standard\" CACHE PATH" "$stage$prefix/lib/cmake/rngtrk/rngtrkConfig.cmake" ||
        { echo "FAIL: rngtrkConfig.cmake names a CUDA folder other than as RNGTRK_CUDA_LIBDIR's default"; exit 1; }
else
    ! grep -q /cuda "$stage$prefix/lib/pkgconfig/rngtrk.pc" || { echo "FAIL: a build without CUDA names CUDA"; exit 1; }
fi
# shellcheck disable=SC2046,SC2086
$cc -std=c99 -o "$stage/consumer_static" "$top/tests/c/installed_consumer.c" \
    $(printf '%s\n' "$static_line" | sed 's/-lrngtrk /-l:librngtrk.a /') $cuda_dir
"$stage/consumer_static"
! ldd "$stage/consumer_static" | grep -q librngtrk || { echo "FAIL: the static consumer linked the .so"; exit 1; }
# CMake: find_package through CMAKE_PREFIX_PATH, the shared target (the
# build tree's run path finds the staged library) and the static one; a
# version the package cannot give is refused.
cmake_build() {  # cmake_build DIR ARGS...: configure and build tests/cmake_consumer
    dir=$1; shift
    cmake -S "$top/tests/cmake_consumer" -B "$dir" -DCMAKE_PREFIX_PATH="$stage$prefix" "$@" >"$dir.log" 2>&1 &&
        cmake --build "$dir" >>"$dir.log" 2>&1 || { echo "FAIL: CMake consumer ($*)"; cat "$dir.log"; exit 1; }
}
cmake_build "$stage/cmake-shared"
"$stage/cmake-shared/consumer"
ldd "$stage/cmake-shared/consumer" | grep -q "$stage$prefix/lib/librngtrk.so" \
    || { echo "FAIL: the CMake consumer did not load the installed library"; exit 1; }
cmake_build "$stage/cmake-static" -DRNGTRK_STATIC=ON
"$stage/cmake-static/consumer"
# Built with CUDA and without CMake's CUDAToolkit: the runtime from
# RNGTRK_CUDA_LIBDIR (NVIDIA's standard folder, the toolkit's place here).
if [ -n "$cuda_dir" ]; then
    cmake_build "$stage/cmake-static-nocudatoolkit" -DRNGTRK_STATIC=ON -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=TRUE
    "$stage/cmake-static-nocudatoolkit/consumer"
fi
! ldd "$stage/cmake-static/consumer" | grep -q librngtrk || { echo "FAIL: the static target linked the .so"; exit 1; }
sed 's/find_package(rngtrk 0.1 /find_package(rngtrk 0.2 /' "$top/tests/cmake_consumer/CMakeLists.txt" \
    >"$stage/wrong-version.txt"
mkdir -p "$stage/wrong" && cp "$stage/wrong-version.txt" "$stage/wrong/CMakeLists.txt" && mkdir -p "$stage/c" &&
    cp "$top/tests/c/installed_consumer.c" "$stage/c/"
if cmake -S "$stage/wrong" -B "$stage/wrong-build" -DCMAKE_PREFIX_PATH="$stage$prefix" >"$stage/wrong.log" 2>&1; then
    echo "FAIL: find_package(rngtrk 0.2) accepted 0.1"; exit 1
fi
grep -q "0.1.0" "$stage/wrong.log" || { echo "FAIL: the refusal does not name the version found"; cat "$stage/wrong.log"; exit 1; }
# The installed tree moved: no sysroot, the .pc found where it now lies.
moved="$stage/moved/rngtrk"
mkdir -p "$stage/moved" && cp -a "$stage$prefix" "$moved"
for how in plain --define-prefix; do
    flag=$([ $how = plain ] || echo --define-prefix)
    # shellcheck disable=SC2086
    flags=$(env -u PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH="$moved/lib/pkgconfig" PKG_CONFIG_LIBDIR="$moved/lib/pkgconfig" \
        pkg-config $flag --cflags --libs rngtrk)
    case $flags in *"$moved/"*) ;; *) echo "FAIL: the moved .pc ($how) does not point into $moved: $flags"; exit 1 ;; esac
    case $flags in *"$prefix"*) echo "FAIL: the moved .pc ($how) still names $prefix: $flags"; exit 1 ;; esac
    # shellcheck disable=SC2086
    $cc -std=c99 -o "$stage/consumer_moved" "$top/tests/c/installed_consumer.c" $flags
    LD_LIBRARY_PATH="$moved/lib" "$stage/consumer_moved" >/dev/null
    LD_LIBRARY_PATH="$moved/lib" ldd "$stage/consumer_moved" | grep -q "$moved/lib/librngtrk.so" ||
        { echo "FAIL: the consumer built from the moved .pc ($how) did not load the moved library"; exit 1; }
    # The static line links as it is, with no folder added: the CUDA
    # runtime comes from cudalibdir, the toolkit's standard place here.
    # shellcheck disable=SC2086
    static=$(env -u PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_PATH="$moved/lib/pkgconfig" PKG_CONFIG_LIBDIR="$moved/lib/pkgconfig" \
        pkg-config $flag --static --cflags --libs rngtrk)
    # shellcheck disable=SC2086
    $cc -std=c99 -o "$stage/consumer_moved_static" "$top/tests/c/installed_consumer.c" $static ||
        { echo "FAIL: cc app.c \$(pkg-config $flag --static --cflags --libs rngtrk) does not link: $static"; exit 1; }
    # shellcheck disable=SC2086
    $cc -std=c99 -o "$stage/consumer_moved_static" "$top/tests/c/installed_consumer.c" \
        $(printf '%s\n' "$static" | sed 's/-lrngtrk /-l:librngtrk.a /')
    "$stage/consumer_moved_static" >/dev/null
done
# A toolkit elsewhere: --define-variable=cudalibdir names it, and the line
# follows (a folder without the runtime fails to link: the variable is used).
if [ -n "$cuda_dir" ]; then
    mkdir -p "$stage/elsewhere/lib64" "$stage/empty"
    cp "${CUDA_HOME:-/usr/local/cuda}/lib64/libcudart_static.a" "$stage/elsewhere/lib64/"
    for dir in "$stage/elsewhere/lib64" "$stage/empty"; do
        # shellcheck disable=SC2046
        if $cc -std=c99 -o "$stage/consumer_elsewhere" "$top/tests/c/installed_consumer.c" $(env -u PKG_CONFIG_SYSROOT_DIR \
            PKG_CONFIG_PATH="$moved/lib/pkgconfig" PKG_CONFIG_LIBDIR="$moved/lib/pkgconfig" pkg-config --define-prefix \
            --define-variable=cudalibdir="$dir" --static --cflags --libs rngtrk | sed 's/-lrngtrk /-l:librngtrk.a /') \
            2>"$stage/elsewhere.log"; then
            [ "$dir" = "$stage/elsewhere/lib64" ] || { echo "FAIL: linked with cudalibdir=$dir, which has no CUDA runtime"; exit 1; }
            "$stage/consumer_elsewhere" >/dev/null
        else
            [ "$dir" = "$stage/empty" ] && grep -q cudart_static "$stage/elsewhere.log" ||
                { echo "FAIL: cudalibdir=$dir:"; cat "$stage/elsewhere.log"; exit 1; }
        fi
    done
fi
env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" uninstall DESTDIR="$stage" PREFIX="$prefix" >/dev/null
# Nothing is left, not even the folders install made.
[ ! -e "$stage$prefix" ] || { echo "FAIL: uninstall left: $(find "$stage$prefix")"; exit 1; }
# A folder that holds something else stays.
mkdir -p "$stage/keep/lib" && : >"$stage/keep/lib/other.so"
env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" install DESTDIR="$stage" PREFIX=/keep >/dev/null
env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" uninstall DESTDIR="$stage" PREFIX=/keep >/dev/null
[ -e "$stage/keep/lib/other.so" ] && [ ! -e "$stage/keep/include" ] ||
    { echo "FAIL: uninstall removed a folder in use, or left an empty one: $(find "$stage/keep")"; exit 1; }
echo "install: ok (make install/uninstall; pkg-config under a sysroot and CMake, shared and static; a moved tree through its .pc)"
