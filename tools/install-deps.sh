#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages a part of rngtrk needs, when they are missing.
#
#   tools/install-deps.sh PART...
#   tools/install-deps.sh --missing PART...   prints the missing packages, installs nothing
#
#   build        the library and the rngtrk command (make)
#   python       the Python binding (cffi, numpy)
#   pytest       the Python tests' tools (pytest, hypothesis)
#   unit         the C and C++ unit tests (GoogleTest, Random123's headers and known-answer file)
#   gtest        GoogleTest alone (make test-gpu: the CUDA tests use nothing else)
#   rust         the Rust crate (cargo: rustup's in ~/.cargo/bin, else Debian's)
#   mpi          the Open MPI programs and the mpi4py example
#   torch        PyTorch for the CPU (Debian's python3-torch), for rngtrk.torch's tests;
#                where that torch is 2.x (not Debian 12's 1.13) also what torch.compile's
#                inductor compiles its C++ against: Python's and torch's headers, setuptools
#   bindgen      make bindgen (Debian's bindgen, rustfmt, libclang)
#   compilers    g++ and this release's clang (make test-werror)
#   demo         build python rust mpi
#   test         everything make test runs
#   bench        make bench (Google Benchmark)
#   reliability  sanitizers, valgrind and libFuzzer: this release's clang (make test-asan, test-valgrind, fuzz)
#   abi          libabigail's abidw and abidiff (make abi-check)
#   aarch64      the aarch64 cross compiler and qemu-user (make test-aarch64)
#   fresh        debootstrap, which makes the new machine of make test-fresh
#
# The names are Debian's and the same in Debian 12, 13 and unstable; clang
# is the unversioned package (clang-14 in 12, 19 in 13, 21 in unstable
# today), and make finds it as clang / clang++.
#
# Idempotent: when everything is present it prints nothing and changes
# nothing.  Otherwise it says what it installs and runs apt-get (as root;
# as another user through sudo when sudo works without a password), saying
# every 20 seconds what apt is doing.  When it cannot install (not root, no
# sudo) it prints one line naming the missing packages and the command, and
# exits 1; when apt fails (no network, say) it prints apt's errors and exits 1.
# On a system without dpkg it only says what it would need.
set -u

packages_of() {
    case $1 in
        build) echo g++ make binutils pkgconf ;;
        python) echo python3 python3-cffi python3-numpy python3-venv ;;
        pytest) echo python3-pytest python3-hypothesis ;;
        unit) echo "$(packages_of gtest) librandom123-dev librandom123-doc" ;;
        gtest) echo "$(packages_of build) libgtest-dev" ;;
        rust) echo ;;  # cargo is looked for as a command, below
        mpi) echo openmpi-bin libopenmpi-dev python3-mpi4py ;;
        torch) echo "$(packages_of python) python3-torch $(inductor_packages)" ;;
        bindgen) echo bindgen rustfmt libclang-dev ;;
        compilers) echo g++ clang ;;
        demo) echo "$(packages_of build) $(packages_of python) $(packages_of mpi)" ;;
        test) echo "$(packages_of unit) $(packages_of python) $(packages_of pytest) $(packages_of mpi)" \
                   "$(packages_of torch) $(packages_of bindgen) gzip zstd python3-pip abigail-tools cmake" ;;
        bench) echo "$(packages_of build) libbenchmark-dev python3" ;;
        reliability) echo valgrind clang libclang-rt-dev ;;
        abi) echo abigail-tools ;;
        aarch64) echo g++-aarch64-linux-gnu qemu-user googletest file ;;
        fresh) echo debootstrap ;;
        *) echo "install-deps: unknown part '$1' (build python pytest unit gtest rust mpi torch bindgen compilers demo test" \
                "bench reliability abi aarch64 fresh)" >&2
           exit 2 ;;
    esac
}

inductor_packages() {
    # Debian 12 (bookworm) has torch 1.13, which has no torch.compile.
    codename=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
    [ "$codename" = bookworm ] || echo python3-dev libtorch-dev python3-setuptools
}

needs_cargo() {
    case $1 in rust | demo | test) return 0 ;; *) return 1 ;; esac
}

only_list=no
[ "${1:-}" = --missing ] && { only_list=yes; shift; }
[ $# -gt 0 ] || { sed -n '2,/^set -u/{/^#/s/^# \{0,1\}//p}' "$0"; exit 2; }
wanted="" cargo=no
for part in "$@"; do
    wanted="$wanted $(packages_of "$part")" || exit 2
    needs_cargo "$part" && cargo=yes
done
# rustup's cargo may be installed but not on PATH.
if [ $cargo = yes ] && ! command -v cargo >/dev/null 2>&1 && ! [ -x "$HOME/.cargo/bin/cargo" ]; then
    wanted="$wanted cargo rustc"
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
    # Nothing can be told missing (--missing says nothing), only named.
    [ $only_list = yes ] || echo "install-deps: no dpkg here; make sure these (Debian names) are installed:$wanted"
    exit 0
fi

missing=""
for p in $wanted; do
    case " $missing " in *" $p "*) continue ;; esac
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ $only_list = yes ]; then
    [ -z "$missing" ] || echo "$missing"
    exit 0
fi
[ -z "$missing" ] && exit 0

if [ "$(id -u)" = 0 ]; then
    apt_get="apt-get"
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    apt_get="sudo -n apt-get"
else
    echo "install-deps: missing Debian packages:$missing (not root; run: sudo apt-get install$missing)" >&2
    exit 1
fi
log=/tmp/rngtrk-install-deps.log
: >"$log"
echo "install-deps: installing$missing"
echo "install-deps: apt-get update, then install: a few minutes on a new machine (log: $log)"
export DEBIAN_FRONTEND=noninteractive

# Runs "$@" with its output in the log; every 20 s says what apt is at.
run_apt() {
    "$@" >>"$log" 2>&1 &
    pid=$! waited=0
    while kill -0 "$pid" 2>/dev/null; do
        sleep 1
        waited=$((waited + 1))
        if [ $((waited % 20)) -eq 0 ]; then
            at=$(grep -E '^(Get:|Unpacking |Setting up |Preparing )' "$log" | tail -1 | cut -c1-100)
            echo "install-deps: working, ${waited} s: ${at:-apt-get $step}"
        fi
    done
    wait "$pid"
}

# Another apt (a second session, unattended-upgrades) may hold the lock: wait
# for it, up to 10 minutes, instead of failing at once.
lock_wait="-o DPkg::Lock::Timeout=600"
if ! { step=update; run_apt $apt_get $lock_wait update -q; } ||
   ! { step=install; run_apt $apt_get $lock_wait install -y -q --no-install-recommends $missing; }; then
    echo "install-deps: apt-get could not install$missing; apt said:" >&2
    errors=$(grep -E '^(E:|Err:|W:)' "$log" | tail -8)
    if [ -n "$errors" ]; then echo "$errors" >&2; else tail -8 "$log" >&2; fi
    echo "install-deps: (the whole log: $log)" >&2
    exit 1
fi
echo "install-deps: installed$missing"
