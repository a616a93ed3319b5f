#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tools/build_wheel_manylinux.sh [OUTDIR]: the Python wheel built in the
# oldest Debian this machine's mirror still serves that builds the library
# (Debian 11 "bullseye": glibc 2.31, g++ 10, Python 3.9).  Its computed tag
# (bindings/python/build_backend/rngtrk_build_elf.py: platform_tag) is
# manylinux_2_17_x86_64, a wheel that installs on glibc 2.17 and later (the
# README's claim): the library needs no glibc symbol newer than GLIBC_2.14,
# so the tag is manylinux2014's floor; tests/wheel_test.sh manylinux fails
# on any other tag.  Writes OUTDIR/rngtrk-VERSION-py3-none-TAG.whl
# (default OUTDIR: build/wheelhouse) and prints its name; the build's log:
# build/wheel-root-bullseye.build.log.
#
# The root: debootstrap minbase of bullseye with g++, make, python3 and
# binutils (no cffi: the build does not import it), made once under
# build/wheel-root-bullseye and reused (delete it to make a new one;
# RNGTRK_WHEEL_SUITE picks another release).  In it, as root in a chroot in
# a private mount namespace: a clone of this repository with this working
# tree's uncommitted changes (tests/clone_checkout.sh), where the backend is
# called in place (python3 -c 'rngtrk_build.build_wheel(...)'; no pip, whose
# bullseye release, 20.3, would copy bindings/python away from the sources)
# and runs `make lib`, links the objects again with libstdc++ and libgcc
# linked in, strips the debug information (strip --strip-debug) and writes
# the wheel.  With CUDA: this machine's toolkit (CUDA_HOME, default
# /usr/local/cuda) is mounted read-only at /usr/local/cuda in the root, so
# nvcc compiles the kernels there with bullseye's g++ 10 and the wheel
# carries them; the CUDA runtime, linked statically, needs no glibc past
# 2.17 (nvcc 13.0), so the tag stays manylinux_2_17.  No toolkit, or
# RNGTRK_WHEEL_CUDA=0: a CPU-only wheel.  Needs root and the mirror this
# machine's apt uses (only when the root is made).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/wheelhouse}
suite=${RNGTRK_WHEEL_SUITE:-bullseye}
root=${RNGTRK_WHEEL_ROOT:-$top/build/wheel-root-$suite}
if [ "$(id -u)" != 0 ]; then
    echo "build_wheel_manylinux: needs root (debootstrap, chroot and unshare)" >&2
    exit 1
fi
start=$(date +%s)
if [ ! -e "$root/.rngtrk-wheel-root" ]; then
    command -v debootstrap >/dev/null || "$top/tools/install-deps.sh" fresh || exit 1
    mirror=$(sed -n 's/^URIs: *\(http[^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
    [ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(http[^ ]*\) .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)
    mirror=${mirror:-http://deb.debian.org/debian}
    echo "build_wheel_manylinux: debootstrap $suite (minbase, g++ make python3 binutils) from $mirror into $root" >&2
    rm -rf "$root.tmp"
    mkdir -p "$(dirname "$root")"
    timeout 1500 debootstrap --variant=minbase --include=g++,make,python3,binutils "$suite" "$root.tmp" "$mirror" \
        >"$root.debootstrap.log" 2>&1 ||
        { echo "build_wheel_manylinux: debootstrap failed; its log: $root.debootstrap.log" >&2; tail -20 "$root.debootstrap.log" >&2; exit 1; }
    touch "$root.tmp/.rngtrk-wheel-root"
    mv "$root.tmp" "$root"
    echo "build_wheel_manylinux: root made in $(($(date +%s) - start)) s" >&2
fi
rm -rf "$root/root/rngtrk" "$root/root/wheelhouse"
"$top/tests/clone_checkout.sh" "$root/root/rngtrk"
mkdir -p "$root/root/wheelhouse" "$root/usr/local/cuda"
cuda=${CUDA_HOME:-/usr/local/cuda}
[ "${RNGTRK_WHEEL_CUDA:-1}" != 0 ] && [ -x "$cuda/bin/nvcc" ] || cuda=
unshare --mount --propagation private --fork sh -c '
    root=$1 cuda=$2
    mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" || exit 1
    if [ -n "$cuda" ]; then mount --bind "$cuda" "$root/usr/local/cuda" && mount -o remount,bind,ro "$root/usr/local/cuda" || exit 1; fi
    exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        sh -c "cd /root/rngtrk/bindings/python/build_backend &&
               echo \"build_wheel_manylinux: in \$(. /etc/os-release; echo \$PRETTY_NAME): \$(ldd --version | head -1), \$(g++ --version | head -1), \$(python3 --version), \$(/usr/local/cuda/bin/nvcc --version 2>/dev/null | grep -o \"release [0-9.]*\" || echo \"no CUDA\")\" &&
               python3 -c \"import sys, rngtrk_build; print(rngtrk_build.build_wheel(sys.argv[1]))\" /root/wheelhouse" >&2' \
    sh "$root" "$cuda" 2>"$root.build.log" ||
    { echo "build_wheel_manylinux: the build in $suite failed; its log: $root.build.log" >&2; tail -30 "$root.build.log" >&2; exit 1; }
head -1 "$root.build.log" >&2
mkdir -p "$out"
for wheel in "$root"/root/wheelhouse/*.whl; do
    cp "$wheel" "$out/"
    echo "build_wheel_manylinux: $out/$(basename "$wheel") ($(($(date +%s) - start)) s)" >&2
    basename "$wheel"
done
