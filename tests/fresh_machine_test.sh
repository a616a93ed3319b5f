#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `make test-fresh [SUITE=...]`: a new user on a new machine.
#   tests/fresh_machine_test.sh [SUITE]    bookworm, trixie, sid, ...; default: this machine's release
# A minimal Debian of that release (from the archive this machine uses;
# debootstrap's minbase plus only git, make and ca-certificates, checked
# against this machine's Debian archive keyring), in a chroot inside a private mount
# namespace, with no line for this machine's name in /etc/hosts (as in
# containers and chroots); a clone of this repository in it (with this
# working tree's uncommitted changes); then, as root there, exactly the
# README's commands (tests/fresh_machine_inside.sh).  It fails on any
# failure, any step that outlives its time limit, and any skip this
# machine does not explain; then make test-werror, this release's g++ and
# clang with -Werror.  Unstable (and testing) change every day and a
# mirror's copy of their Release file may be past its Valid-Until date: for
# those suites apt in the new machine is told not to check it.  Needs root
# (debootstrap, chroot, unshare) and Debian's archive.  Logs stay in
# build/fresh-SUITE/.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
if [ "$(id -u)" != 0 ]; then
    echo "test-fresh: needs root (debootstrap, chroot and unshare make the new machine)" >&2
    exit 1
fi
"$top/tools/install-deps.sh" fresh || exit 1
. /etc/os-release
suite=${1:-${VERSION_CODENAME:-}}
[ -n "$suite" ] || { echo "test-fresh: this machine names no Debian release: give one (make test-fresh SUITE=trixie)" >&2; exit 2; }
[ -e "/usr/share/debootstrap/scripts/$suite" ] ||
    { echo "test-fresh: this debootstrap does not know '$suite' (a newer debootstrap does)" >&2; exit 2; }
work=${RNGTRK_FRESH_DIR:-$top/build/fresh-$suite}
root="$work/root"
mkdir -p "$work"
# The namespace of an earlier run is gone with its process, and its mounts with it.
rm -rf "$root"

mirror=$(sed -n 's/^URIs: *\(http[^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -1)
[ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(http[^ ]*\) .*/\1/p' /etc/apt/sources.list 2>/dev/null | head -1)
mirror=${mirror:-http://deb.debian.org/debian}
echo "test-fresh: debootstrap $suite (minbase, git make ca-certificates) from $mirror"
start=$(date +%s)
timeout 1200 debootstrap --variant=minbase --include=git,make,ca-certificates "$suite" "$root" "$mirror" \
    >"$work/debootstrap.log" 2>&1 || { echo "FAIL: debootstrap"; tail -20 "$work/debootstrap.log"; exit 1; }
cp /etc/resolv.conf "$root/etc/resolv.conf"             # apt reaches the archive
case $suite in sid | unstable | testing | forky)
    echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99rngtrk-fresh-moving-suite" ;;
esac
printf '127.0.0.1 localhost\n::1 localhost\n' >"$root/etc/hosts"   # and nothing names this machine

clone="$root/root/rngtrk"
"$top/tests/clone_checkout.sh" "$clone"
echo "test-fresh: the new $suite machine is ready ($(($(date +%s) - start)) s); the README's commands run in it"

set +e
unshare --mount --propagation private --fork sh -c '
    root=$1
    mount -t proc proc "$root/proc" && mount --rbind /sys "$root/sys" && mount --rbind /dev "$root/dev" || exit 1
    exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        sh /root/rngtrk/tests/fresh_machine_inside.sh' sh "$root" 2>&1 | tee "$work/inside.log"
code=$?
set -e
# (tee's status hides the inner one: read the verdict line.)
grep -q '^test-fresh: ok' "$work/inside.log" && code=0 || code=1
echo "test-fresh: $suite: $(($(date +%s) - start)) s in all; log: $work/inside.log"
rm -rf "$root"
exit $code
