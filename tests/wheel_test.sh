#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# tests/wheel_test.sh [manylinux]: the Python packaging as a user meets it
# (bindings/python/build_backend/rngtrk_build.py), on a copy of this
# checkout (tracked and untracked files, and build/'s library objects when
# there, with their times: `make lib` then rebuilds only what is stale).
#
#   (no argument)  1. the README's wheel command, offline (PIP_NO_INDEX=1):
#                     the wheel's tag is the one its library needs by
#                     readelf (-d NEEDED, -V GLIBC_ versions), the backend's
#                     ELF reader agrees with readelf, the library is stripped;
#                  2. the sdist, installed into a new venv, compiles the
#                     library and draws the checkout's numbers from /tmp;
#                  3. pip install -e: import rngtrk from /tmp finds the
#                     checkout's build/librngtrk.so.0 and draws the same;
#                  4. no C++ compiler: pip fails with the backend's one
#                     message, no traceback (CXX unset and a PATH without
#                     compilers; then CXX=/nonexistent).
#   manylinux      tools/build_wheel_manylinux.sh (Debian 11 root, needs
#                  root): the tag is manylinux_2_17_x86_64 (the README's
#                  "glibc 2.17 and later"), true by readelf, and the wheel
#                  installs and draws here.
# Needs /usr/bin/python3 with venv, cffi and numpy, g++, make, binutils:
# tools/install-deps.sh build python installs what is missing.  Work files:
# build/wheel-test/ (RNGTRK_WHEEL_TEST_DIR).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
work=${RNGTRK_WHEEL_TEST_DIR:-$top/build/wheel-test}
python=/usr/bin/python3
export PIP_NO_INDEX=1 PIP_DISABLE_PIP_VERSION_CHECK=1
unset PYTHONPATH RNGTRK_LIBRARY RNGTRK_BUNDLE_LIBRARY PIP_FIND_LINKS   # as on a new machine
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }
t0=$(date +%s)
elapsed() { echo "$(($(date +%s) - t0)) s"; }
DRAW='import rngtrk
t = rngtrk.Tracker(); t.add("a", 1234)
print(rngtrk.uniform_f32(rngtrk.PhiloxState(42, 8), 6).tolist(), t.sample(5, dist="normal", dtype="f32").tolist())
print(rngtrk.library_path)'

# The platform tag a library needs by readelf alone (the oracle of the
# backend's reader): manylinux_2_N_ARCH, N the highest GLIBC_2.N (with
# GLIBC_ABI_DT_RELR as 2.36; at least 17), when every NEEDED library is one
# manylinux allows and none is libstdc++/libgcc_s (whose versions the backend
# does not check), and every glibc version it needs is one of those; else linux_ARCH.
readelf_tag() {
    arch=$(uname -m)
    allowed=" libc.so.6 libm.so.6 libpthread.so.0 libdl.so.2 librt.so.1 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1 "
    for lib in $(LC_ALL=C readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        case $allowed in *" $lib "*) ;; *) echo "linux_$arch"; return ;; esac
    done
    needs=$(LC_ALL=C readelf -V "$1" | sed -n '/.gnu.version_r/,$s/.*Name: \(GLIBC_[^ ]*\).*/\1/p')
    echo "$needs" | grep -v '^$' | grep -Evq '^GLIBC_2(\.[0-9]+)+$|^GLIBC_ABI_DT_RELR$' && { echo "linux_$arch"; return; }
    n=$(echo "$needs" | sed -n 's/^GLIBC_2\.\([0-9]*\).*/\1/p' | sort -n | tail -1)
    echo "$needs" | grep -qx 'GLIBC_ABI_DT_RELR' && [ "${n:-0}" -lt 36 ] && n=36
    [ "${n:-0}" -ge 17 ] || n=17
    echo "manylinux_2_${n}_$arch"
}

# check_wheel WHEEL: its tag is readelf's; the reader agrees with readelf;
# the library has no debug sections; it carries the GPU code of this
# checkout's build (when that has any).  Prints the library's highest GLIBC_.
check_wheel() {
    checked=$1
    dir=$work/unzipped-$(basename "$checked" .whl)
    rm -rf "$dir" && mkdir -p "$dir"
    "$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$checked" "$dir"
    lib=$dir/rngtrk/librngtrk.so.0
    [ -f "$lib" ] || { fail "$(basename "$checked") carries no rngtrk/librngtrk.so.0"; return; }
    tag=$(basename "$checked" .whl | sed 's/^rngtrk-[^-]*-py3-none-//')
    # The tag of the newest glibc the library or a CUDA module beside it needs.
    expected=$(for f in "$lib" "$dir"/rngtrk/librngtrk_cuda*.so; do [ -f "$f" ] && readelf_tag "$f"; done |
        sort -t_ -k3,3n | tail -1)
    [ "$tag" = "$expected" ] && ok "$(basename "$checked"): its tag is readelf's ($expected)" ||
        fail "$(basename "$checked") is tagged $tag; readelf says its library and modules need $expected"
    # The backend's ELF reader against readelf: NEEDED and every version.
    ours=$("$python" "$top/bindings/python/build_backend/rngtrk_build.py" needs "$lib" |
        "$python" -c 'import json, sys; d = json.load(sys.stdin)
print(" ".join(sorted(d["needed"]))); print(" ".join(sorted(v for vs in d["versions"].values() for v in vs)))')
    theirs=$(LC_ALL=C readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ' | sed 's/ $//'
             echo; LC_ALL=C readelf -V "$lib" | sed -n '/.gnu.version_r/,$s/.*Name: \([^ ]*\).*/\1/p' | sort | tr '\n' ' ' | sed 's/ $//')
    [ "$ours" = "$theirs" ] && ok "the backend's ELF reader agrees with readelf -d/-V" ||
        fail "the backend's ELF reader says
$ours
readelf says
$theirs"
    debug=$(LC_ALL=C readelf -S "$lib" | grep -c '\.debug_')
    [ "$debug" = 0 ] && ok "its library is stripped: no .debug_* section, $(wc -c <"$lib") bytes" ||
        fail "its library has $debug .debug_* sections"
    # With GPU code (the checkout's build had nvcc; the Debian 11 build
    # mounts the same toolkit), the wheel carries that nvcc's CUDA module
    # beside its library, and each module it carries has the entries of the
    # checkout's module of that name (a make cuda12 module stays in the
    # checkout: the wheels here are built from copies): each kind,
    # architecture and unpacked size (another host compiler packs a few
    # bytes differently), every entry unpacked and checked.  The library
    # itself carries none (its loader opens the module).
    entries() { awk '{print $1, $2, $(NF - 1)}' "$1"; }
    nvcc=${CUDA_HOME:-/usr/local/cuda}/bin/nvcc
    if [ -x "$nvcc" ] && [ "${RNGTRK_WHEEL_CUDA:-1}" != 0 ]; then
        own=librngtrk_cuda$("$nvcc" --version | sed -n 's/.*release \([0-9][0-9]*\)\..*/\1/p').so
        [ -f "$dir/rngtrk/$own" ] || fail "$(basename "$checked") carries no rngtrk/$own"
    fi
    for module in "$dir"/rngtrk/librngtrk_cuda[0-9]*.so; do
        [ -f "$module" ] || continue
        built=$top/build/$(basename "$module")
        [ -f "$built" ] || { fail "$(basename "$checked") carries $(basename "$module"), which the checkout's build has not"; continue; }
        "$top/tools/fatbin_list.py" "$built" >"$work/fatbin-build" || { fail "$built: no fat binary"; continue; }
        if "$top/tools/fatbin_list.py" --verify "$module" >"$work/fatbin-wheel" 2>&1 &&
            [ "$(entries "$work/fatbin-build")" = "$(entries "$work/fatbin-wheel")" ]; then
            ok "its $(basename "$module") carries the build's GPU code: $(awk '{print $2}' "$work/fatbin-wheel" | tr '\n' ' ')"
        else
            fail "its $(basename "$module")'s GPU code is not the build's:"; diff "$work/fatbin-build" "$work/fatbin-wheel"
        fi
    done
    if LC_ALL=C readelf -S "$lib" | grep -q nv_fatbin; then fail "its librngtrk.so.0 carries GPU code"; fi
    glibc=$(LC_ALL=C readelf -V "$lib" | grep -o 'GLIBC_2\.[0-9.]*' | sort -uV | tail -1)
    echo "    needs: $(LC_ALL=C readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')highest $glibc"
}

# draws VENV: the numbers the package of VENV draws, run from /tmp.
draws() {
    (cd /tmp && env -u PYTHONPATH -u RNGTRK_LIBRARY -u LD_LIBRARY_PATH "$1/bin/python" -c "$DRAW")
}
# same A B: A is B's numbers, and B is not empty.
same() { [ -n "$2" ] && [ "$(echo "$1" | head -1)" = "$2" ]; }
new_venv() { rm -rf "$1" && "$python" -m venv --system-site-packages "$1"; }

"$top/tools/install-deps.sh" build python || exit 1   # g++ make binutils, python3-venv/-cffi/-numpy: quiet when present
mkdir -p "$work"
copy=$work/checkout
if [ "${1:-}" != manylinux ]; then
    # The copy: the files git knows (with this tree's changes) and build/'s objects, times kept.
    rm -rf "$copy" && mkdir -p "$copy"
    (cd "$top" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp -a --parents -t "$copy" 2>/dev/null)
    (cd "$top" && for f in build/obj build/librngtrk.a build/librngtrk.so build/librngtrk.so.0 build/librngtrk.so.0.* build/rngtrk.pc; do
        [ -e "$f" ] && cp -a --parents "$f" "$copy"; done; true)
    echo "wheel-test: a copy of the checkout in $copy ($(elapsed))"

    # 1. The README's commands, exactly.
    cd "$copy" || exit 1
    readme_wheel='.venv/bin/pip wheel --no-deps -w dist bindings/python'
    grep -qF "$readme_wheel" README.md || fail "README.md does not say \`$readme_wheel\`"
    /usr/bin/python3 -m venv --system-site-packages .venv || exit 1
    rm -rf dist
    if sh -c "$readme_wheel" >"$work/readme-wheel.log" 2>&1; then
        ok "\`$readme_wheel\`, offline ($(elapsed))"
    else
        fail "\`$readme_wheel\` failed:"; tail -20 "$work/readme-wheel.log"
    fi
    wheel=$(ls dist/rngtrk-*.whl 2>/dev/null | head -1)
    if [ -n "$wheel" ]; then
        check_wheel "$copy/$wheel"
        new_venv "$work/venv-wheel" && "$work/venv-wheel/bin/pip" install -q "$copy/$wheel" >"$work/wheel-install.log" 2>&1 ||
            fail "the README's wheel does not install: $(tail -5 "$work/wheel-install.log")"
        wheel_draws=$(draws "$work/venv-wheel")
    fi
    reference=$(cd /tmp && PYTHONPATH="$copy/bindings/python" RNGTRK_LIBRARY="$copy/build/librngtrk.so.0" "$python" -c "$DRAW" | sed -n 1p)
    [ -n "$reference" ] || fail "the checkout's package draws nothing"
    same "${wheel_draws:-}" "$reference" && ok "the README's wheel draws the checkout's numbers" ||
        fail "the README's wheel draws '${wheel_draws:-}', the checkout '$reference'"

    # 2. The sdist: it carries the sources, and installing it compiles the library.
    rm -rf "$work/sdist" && mkdir -p "$work/sdist"
    sdist=$(env -u MAKEFLAGS -u MAKELEVEL make -s -C "$copy" sdist SDIST_DIR="$work/sdist" | tail -1) && sdist=${sdist##*/}
    new_venv "$work/venv-sdist"
    s0=$(date +%s)
    if "$work/venv-sdist/bin/pip" install "$work/sdist/$sdist" >"$work/sdist-install.log" 2>&1; then
        ok "pip install of the sdist (it compiles the library): $(($(date +%s) - s0)) s"
    else
        fail "pip install of the sdist failed:"; tail -20 "$work/sdist-install.log"
    fi
    sdist_draws=$(draws "$work/venv-sdist")
    case $(echo "$sdist_draws" | tail -1) in
        "$work/venv-sdist/"*/rngtrk/librngtrk.so.0) ok "the sdist's package loads its own library" ;;
        *) fail "the sdist's package loads '$(echo "$sdist_draws" | tail -1)'" ;;
    esac
    same "$sdist_draws" "$reference" && ok "the sdist's package draws the checkout's numbers from /tmp" ||
        fail "the sdist's package draws '$sdist_draws', the checkout '$reference'"

    # 3. Editable: without build/'s shared library, pip install -e must make it.
    rm -f "$copy"/build/librngtrk.so*
    new_venv "$work/venv-editable"
    if "$work/venv-editable/bin/pip" install -e "$copy/bindings/python" >"$work/editable.log" 2>&1; then
        editable_draws=$(draws "$work/venv-editable")
        [ "$(echo "$editable_draws" | tail -1)" = "$copy/build/librngtrk.so.0" ] &&
        same "$editable_draws" "$reference" &&
            ok "pip install -e: import rngtrk from /tmp loads the checkout's build/librngtrk.so.0 and draws its numbers" ||
            fail "pip install -e: from /tmp: $editable_draws"
    else
        fail "pip install -e bindings/python failed:"; tail -20 "$work/editable.log"
    fi

    # 4. No compiler: one message, no traceback.
    bare=$work/no-compiler-bin
    rm -rf "$bare" && mkdir -p "$bare"
    for tool in python3 ar strip readelf sh; do ln -s "$(command -v $tool)" "$bare/$tool"; done
    for cxx in "" /nonexistent; do
        out=$(cd /tmp && env PATH="$bare" CXX="$cxx" "$work/venv-sdist/bin/python" -m pip wheel --no-deps \
            -w "$work/no-compiler-out" "$work/sdist/$sdist" 2>&1)
        code=$?
        if [ $code != 0 ] && [ "$(echo "$out" | grep -c 'rngtrk: ')" = 1 ] &&
           echo "$out" | grep 'rngtrk: ' | grep -q 'apt-get install g++' && ! echo "$out" | grep -q Traceback; then
            ok "no compiler (CXX='$cxx'): the build fails with one line: $(echo "$out" | grep -m1 'rngtrk: ' | sed 's/^ *//' | cut -c1-100)..."
        else
            fail "no compiler (CXX='$cxx'): exit $code, output:"; echo "$out" | tail -15
        fi
    done
else
    # The Debian 11 wheel.
    s0=$(date +%s)
    rm -rf "$work/wheelhouse"
    if name=$("$top/tools/build_wheel_manylinux.sh" "$work/wheelhouse"); then
        ok "tools/build_wheel_manylinux.sh: $name ($(($(date +%s) - s0)) s)"
        check_wheel "$work/wheelhouse/$name"
        tag=$(echo "$name" | sed 's/^rngtrk-[^-]*-py3-none-//; s/\.whl$//')
        # The README: "make wheel-manylinux ... installs on glibc 2.17 and later".
        n=$(echo "$tag" | sed -n 's/^manylinux_2_\([0-9]*\)_x86_64$/\1/p')
        [ -n "$n" ] && [ "$n" -le 17 ] && ok "its tag $tag names glibc 2.17, as the README says" ||
            fail "its tag $tag is not manylinux_2_17_x86_64: the README says glibc 2.17 and later"
        new_venv "$work/venv-manylinux"
        "$work/venv-manylinux/bin/pip" install -q "$work/wheelhouse/$name" >"$work/manylinux-install.log" 2>&1 ||
            fail "it does not install here: $(tail -5 "$work/manylinux-install.log")"
        got=$(draws "$work/venv-manylinux")
        [ -e "$top/build/librngtrk.so.0" ] || make -C "$top" lib >"$work/make-lib.log" 2>&1
        reference=$(cd /tmp && PYTHONPATH="$top/bindings/python" RNGTRK_LIBRARY="$top/build/librngtrk.so.0" "$python" -c "$DRAW" | sed -n 1p)
        same "$got" "$reference" &&
            ok "installed here, it draws the checkout's numbers from /tmp" ||
            fail "installed here, it draws '$got'; the checkout '$reference'"
    else
        fail "tools/build_wheel_manylinux.sh failed"
    fi
fi
echo "wheel-test: $failures failures ($(elapsed))"
[ "$failures" = 0 ]
