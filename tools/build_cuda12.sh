#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make cuda12: the CUDA 12 module, build/librngtrk_cuda12.so, for drivers of
# the CUDA 12 era (R525 to R575), built with Debian 13's CUDA 12.4 toolkit
# (non-free: nvidia-cuda-toolkit 12.4.131) in a root of its own, from a clone
# of this checkout's HEAD.  Its GPU code is library.mk's CUDA12_ARCHITECTURES
# and CUDA12_PTX_ARCHITECTURES (nvcc 12.4 knows nothing past sm_90: a
# Blackwell GPU runs the compute_90 PTX, compiled when the kernels load, on
# an R570 or later driver).  In the root it also checks the module's fat
# binary against those lists and runs the kernel bodies' host tests compiled
# by that toolkit's nvcc (tests/core/test_kernel_bodies.cpp,
# test_edge_parameters.cpp as CUDA sources): the same bits as the CPU
# engines, built by CUDA 12.4 as the CUDA 13 build's are by CUDA 13.
#
# The root is kept in build/cuda12-root-trixie (delete it to make a new one);
# the build's log: build/cuda12-root-trixie.build.log.  Needs root.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
suite=trixie
root=${RNGTRK_CUDA12_ROOT:-$top/build/cuda12-root-$suite}
if [ "$(id -u)" != 0 ]; then
    echo "make cuda12: needs root (debootstrap, chroot and unshare make the CUDA 12 build's root)" >&2
    exit 1
fi
start=$(date +%s)
if [ ! -e "$root/.rngtrk-cuda12-root" ]; then
    command -v debootstrap >/dev/null || "$top/tools/install-deps.sh" fresh || exit 1
    mirror=$(sed -n 's/^URIs: *\(http[^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
    [ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(http[^ ]*\) .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)
    mirror=${mirror:-http://deb.debian.org/debian}
    echo "make cuda12: debootstrap $suite (minbase, non-free's nvidia-cuda-toolkit) from $mirror into $root" >&2
    rm -rf "$root.tmp"
    mkdir -p "$(dirname "$root")"
    timeout 1500 debootstrap --variant=minbase --components=main,contrib,non-free \
        --include=make,python3,zstd,binutils,libgtest-dev "$suite" "$root.tmp" "$mirror" >"$root.debootstrap.log" 2>&1 ||
        { echo "make cuda12: debootstrap failed; its log: $root.debootstrap.log" >&2; tail -20 "$root.debootstrap.log" >&2; exit 1; }
    # The toolkit and the compiler it was made for (Debian's nvcc 12.4 calls
    # its own supported GCC, which the package depends on).
    chroot "$root.tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
        sh -c 'apt-get update -q && apt-get install -y -q --no-install-recommends nvidia-cuda-toolkit' \
        >>"$root.debootstrap.log" 2>&1 ||
        { echo "make cuda12: apt-get install nvidia-cuda-toolkit failed; its log: $root.debootstrap.log" >&2
          tail -20 "$root.debootstrap.log" >&2; exit 1; }
    touch "$root.tmp/.rngtrk-cuda12-root"
    mv "$root.tmp" "$root"
    echo "make cuda12: root made in $(($(date +%s) - start)) s" >&2
fi
rm -rf "$root/root/rngtrk"
"$top/tests/clone_checkout.sh" "$root/root/rngtrk"
unshare --mount --propagation private --fork sh -c '
    root=$1
    mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" || exit 1
    exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        sh -c "cd /root/rngtrk && tools/build_cuda12_inside.sh"' sh "$root" >"$root.build.log" 2>&1 ||
    { echo "make cuda12: the build in $suite failed; its log: $root.build.log" >&2; tail -30 "$root.build.log" >&2; exit 1; }
grep '^make cuda12:' "$root.build.log" >&2
cp "$root/root/rngtrk/build/librngtrk_cuda12.so" "$top/build/librngtrk_cuda12.so"
echo "make cuda12: $top/build/librngtrk_cuda12.so ($(wc -c <"$top/build/librngtrk_cuda12.so") bytes, $(($(date +%s) - start)) s)" >&2
