#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# make cuda12: the CUDA 12 module, build/librngtrk_cuda12.so, for drivers of
# the CUDA 12 era (R525 to R575), built with Debian 13's CUDA 12.4 toolkit
# (non-free: nvidia-cuda-toolkit 12.4.131), from a clone of this checkout
# (uncommitted changes included).  Its GPU code is library.mk's
# CUDA12_ARCHITECTURES and CUDA12_PTX_ARCHITECTURES (nvcc 12.4 knows nothing
# past sm_90: a Blackwell GPU runs the compute_90 PTX, compiled when the
# kernels load, on an R570 or later driver).
#
# Two roots.  The toolkit comes from Debian 13: apt installs it in a trixie
# root (build/cuda12-toolkit-trixie).  The module is built in a Debian 11
# root (build/cuda12-root-bullseye, glibc 2.31, g++ 10) with those packages'
# files copied in at their own paths: NVIDIA's compiler binaries need only
# an old glibc, and a module built against trixie's glibc 2.41 would need
# glibc 2.38 wherever it loads (not Debian 12, not Ubuntu 22.04); this one
# loads with glibc 2.31 and later.  In the build root it also checks the
# module's fat binary against those lists and runs the kernel bodies' host
# tests compiled by that nvcc (tools/build_cuda12_inside.sh).
#
# Both roots are kept (delete one to make it again); the build's log:
# build/cuda12-root-bullseye.build.log.  Needs root.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
toolkit=${RNGTRK_CUDA12_TOOLKIT_ROOT:-$top/build/cuda12-toolkit-trixie}
root=${RNGTRK_CUDA12_ROOT:-$top/build/cuda12-root-bullseye}
if [ "$(id -u)" != 0 ]; then
    echo "make cuda12: needs root (debootstrap, chroot and unshare make the CUDA 12 build's roots)" >&2
    exit 1
fi
start=$(date +%s)
command -v debootstrap >/dev/null || "$top/tools/install-deps.sh" fresh || exit 1
mirror=$(sed -n 's/^URIs: *\(http[^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(http[^ ]*\) .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}

# make_root DIR SUITE COMPONENTS PACKAGES [APT_PACKAGES]: debootstrap minbase
# with PACKAGES, then apt-get install APT_PACKAGES; kept once it is whole.
make_root() {
    [ -e "$1/.rngtrk-cuda12-root" ] && return 0
    echo "make cuda12: debootstrap $2 (minbase, $4${5:+, $5}) from $mirror into $1" >&2
    rm -rf "$1.tmp"
    mkdir -p "$(dirname "$1")"
    timeout 1500 debootstrap --variant=minbase --components="$3" --include="$4" "$2" "$1.tmp" "$mirror" \
        >"$1.debootstrap.log" 2>&1 ||
        { echo "make cuda12: debootstrap failed; its log: $1.debootstrap.log" >&2; tail -20 "$1.debootstrap.log" >&2; exit 1; }
    if [ -n "${5:-}" ]; then
        chroot "$1.tmp" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
            sh -c "apt-get update -q && apt-get install -y -q --no-install-recommends $5" >>"$1.debootstrap.log" 2>&1 ||
            { echo "make cuda12: apt-get install $5 failed; its log: $1.debootstrap.log" >&2
              tail -20 "$1.debootstrap.log" >&2; exit 1; }
    fi
    touch "$1.tmp/.rngtrk-cuda12-root"
    mv "$1.tmp" "$1"
    echo "make cuda12: $1 made ($(($(date +%s) - start)) s)" >&2
}
make_root "$toolkit" trixie main,contrib,non-free make nvidia-cuda-toolkit
make_root "$root" bullseye main g++,make,python3,binutils,libgtest-dev

# The toolkit's files (nvcc and its tools, the headers, libcu++'s
# <nv/target>, the static runtime), at their paths, into the build root:
# the files the three packages list, folders without their other contents.
if [ ! -e "$root/usr/bin/nvcc" ]; then
    chroot "$toolkit" dpkg -L nvidia-cuda-toolkit nvidia-cuda-dev libcu++-dev | sed 's|^/||' | sort -u >"$root.toolkit-files"
    tar -C "$toolkit" --no-recursion -cf - -T "$root.toolkit-files" | tar -C "$root" -xf -
    echo "make cuda12: $(wc -l <"$root.toolkit-files") files of nvidia-cuda-toolkit, nvidia-cuda-dev and libcu++-dev (<nv/target>) copied into $root" >&2
fi
rm -rf "$root/root/rngtrk"
"$top/tests/clone_checkout.sh" "$root/root/rngtrk"
unshare --mount --propagation private --fork sh -c '
    root=$1
    mount -t proc proc "$root/proc" && mount --rbind /dev "$root/dev" || exit 1
    exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        sh -c "cd /root/rngtrk && tools/build_cuda12_inside.sh"' sh "$root" >"$root.build.log" 2>&1 ||
    { echo "make cuda12: the build in bullseye failed; its log: $root.build.log" >&2; tail -30 "$root.build.log" >&2; exit 1; }
grep '^make cuda12:' "$root.build.log" >&2
cp "$root/root/rngtrk/build/librngtrk_cuda12.so" "$top/build/librngtrk_cuda12.so"
echo "make cuda12: $top/build/librngtrk_cuda12.so ($(wc -c <"$top/build/librngtrk_cuda12.so") bytes, $(($(date +%s) - start)) s)" >&2
