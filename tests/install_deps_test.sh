#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tools/install-deps.sh where packages cannot be installed, with stand-ins
# for dpkg-query (every package missing) and apt-get (the network down)
# first on PATH, so nothing on this machine changes:
#   * not root and no sudo: one line naming the packages and the command, exit 1;
#   * root, apt failing: apt's own error shown, exit 1;
#   * `make demo` then: one line naming what building needs, and a clean stop
#     before any compiler runs; `make test-mpi` and `make test-asan` stop the
#     same way, naming their packages; `make check` (which installs nothing)
#     names what it lacks in one line.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
chmod 755 "$fake"
cat >"$fake/dpkg-query" <<'EOF'
#!/bin/sh
exit 1
EOF
cat >"$fake/apt-get" <<'EOF'
#!/bin/sh
echo "Err:1 http://deb.debian.org/debian bookworm InRelease"
echo "  Temporary failure resolving 'deb.debian.org'"
echo "E: Failed to fetch http://deb.debian.org/debian/dists/bookworm/InRelease  Temporary failure resolving 'deb.debian.org'"
exit 100
EOF
chmod 755 "$fake/dpkg-query" "$fake/apt-get"
fail() { echo "FAIL: $*"; exit 1; }

# Root, and apt cannot reach the archive.
if PATH="$fake:$PATH" "$top/tools/install-deps.sh" build >"$fake/out" 2>&1; then fail "apt's failure was ignored"; fi
grep -q "^install-deps: apt-get could not install g++ make binutils pkgconf; apt said:$" "$fake/out" ||
    { cat "$fake/out"; fail "no line naming what could not be installed"; }
grep -q "^E: Failed to fetch .*Temporary failure resolving" "$fake/out" || { cat "$fake/out"; fail "apt's error swallowed"; }

# Not root, no sudo (the user nobody, with a PATH without sudo), on a copy
# of what make demo reads that nobody may read (the checkout may be in /root).
copy="$fake/repo"
for f in Makefile library.mk tools/install-deps.sh tools/demo.mk tests/mpi/mpi.mk tests/tests.mk bench/bench.mk \
         tests/fuzz/fuzz.mk c_api/rngtrk.h; do
    mkdir -p "$copy/$(dirname "$f")" && cp "$top/$f" "$copy/$f"
done
chmod -R a+rX "$copy"
as_nobody() {
    setpriv --reuid=nobody --regid=nogroup --clear-groups env PATH="$fake:/usr/bin:/bin" HOME=/tmp "$@"
}
if command -v setpriv >/dev/null 2>&1 && id nobody >/dev/null 2>&1; then
    if as_nobody "$copy/tools/install-deps.sh" build >"$fake/out" 2>&1; then fail "not root, yet it succeeded"; fi
    [ "$(wc -l <"$fake/out")" -eq 1 ] || { cat "$fake/out"; fail "more than one line"; }
    grep -q "^install-deps: missing Debian packages: g++ make binutils pkgconf (not root; run: sudo apt-get install g++ make binutils pkgconf)$" \
        "$fake/out" || { cat "$fake/out"; fail "the line does not name the packages and the command"; }
    # make demo stops there, naming what building needs, before any compiler runs.
    if as_nobody make --no-print-directory -C "$copy" demo >"$fake/demo" 2>&1; then fail "make demo went on"; fi
    grep -q "^demo: building rngtrk needs the Debian packages g++ make binutils pkgconf; install them" "$fake/demo" ||
        { cat "$fake/demo"; fail "make demo did not say what building needs"; }
    ! grep -Eq "error:|No such file or directory" "$fake/demo" || { cat "$fake/demo"; fail "a compiler error"; }
    # Targets on their own: the packages they need, named, and nothing built.
    for target in test-mpi:openmpi-bin test-asan:librandom123-doc check:python3-pytest; do
        name=${target%%:*} package=${target#*:}
        if as_nobody make --no-print-directory -C "$copy" "$name" >"$fake/$name" 2>&1; then fail "make $name went on"; fi
        grep -q "missing Debian packages:.* $package" "$fake/$name" ||
            { cat "$fake/$name"; fail "make $name did not name $package"; }
        ! grep -Eq "error:|No such file or directory|^g\+\+ |^cc " "$fake/$name" || { cat "$fake/$name"; fail "make $name built"; }
        [ ! -d "$copy/build" ] || { ls -R "$copy/build"; fail "make $name left a build folder"; }
    done
else
    echo "install-deps as another user: not checked (no setpriv or no user nobody)"
fi
echo "install-deps: ok (apt's errors shown; not root: one line and a clean stop of make demo, test-mpi, test-asan and check)"
