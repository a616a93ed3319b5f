#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# rngtrk-sys builds librngtrk from its sources when none is installed, in a
# clone of this repository where `make` has not run (no build/), with no
# rngtrk that pkg-config could find and no RNGTRK_LIB_DIR:
#   a. a crate outside the clone that depends on bindings/rust by path
#      builds (the C++ core compiled from the clone, read from library.mk),
#      runs with no LD_LIBRARY_PATH, links no librngtrk.so (ldd), its
#      draws equal tests/vectors/sample_vectors.txt, and every source was
#      compiled with the Makefile's flags (`make -n`;
#      tests/compare_compile_flags.py, as for CMake);
#   b. rngtrk-sys packed with `cargo package` (its sources vendored into
#      csrc/ by vendor_sources.sh), unpacked outside, under the same safe
#      crate, builds from csrc/ and prints the same;
#   c. bad input, one message each and a failed build: no C++ compiler
#      (CXX=/nonexistent; none on PATH), and an installed rngtrk whose
#      version is out of the crate's range (a fake rngtrk.pc), which the
#      `bundled` feature overrides; and `cargo build` inside the clone
#      before `make` (its .cargo/config.toml names build/ as
#      RNGTRK_LIB_DIR, which holds no library yet).
# (The pkg-config route with an installed rngtrk: tests/rust_outside_test.sh.)
# RUST_BUNDLED_PARTS=c runs only part c (seconds, where a and b compile the
# library: minutes); the default is all: abc.
set -eu
parts=${RUST_BUNDLED_PARTS:-abc}
top=$(cd "$(dirname "$0")/.." && pwd)
cargo=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
started=$(date +%s)
fail() { echo "FAIL: $*"; exit 1; }

clone="$stage/clone"
"$top/tests/clone_checkout.sh" "$clone"
[ ! -e "$clone/build" ] || fail "the clone has a build/ folder"
# Nothing installed that pkg-config or the linker could take instead.
mkdir -p "$stage/no-pc"
export PKG_CONFIG_PATH="" PKG_CONFIG_LIBDIR="$stage/no-pc"
unset RNGTRK_LIB_DIR LD_LIBRARY_PATH CXX AR CXXFLAGS 2>/dev/null || true
if pkg-config --exists rngtrk 2>/dev/null; then fail "pkg-config still finds an rngtrk"; fi
if /sbin/ldconfig -p 2>/dev/null | grep -q librngtrk; then
    fail "a librngtrk is installed in the loader's folders ($(/sbin/ldconfig -p | grep librngtrk)); run this test where none is"
fi
export CARGO_TARGET_DIR="$stage/target"

# The program: every sample vector of u8/u32/u64/f32/f64 drawn through the
# safe crate, compared bit for bit; prints how many and the version.
app() { # app DIR NAME RNGTRK_DEPENDENCY
    mkdir -p "$1/src"
    cat >"$1/Cargo.toml" <<TOML
[package]
name = "$2"
version = "0.1.0"
edition = "2021"

[dependencies]
rngtrk = $3

[workspace]
TOML
    cat >"$1/src/main.rs" <<'RS'
use rngtrk::{Distribution, Layout, PhiloxState, SampleSpec};

fn hex<T: rngtrk::Element + Default + Clone>(
    state: &PhiloxState, spec: &SampleSpec, first: u64, count: usize, f: fn(&T) -> String,
) -> Vec<String> {
    let mut out = vec![T::default(); count];
    rngtrk::sample(state, spec, first, &mut out).unwrap();
    out.iter().map(f).collect()
}

fn main() {
    let path = std::env::args().nth(1).expect("sample_vectors.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let (mut checked, mut wrong) = (0, 0);
    for line in text.lines().filter(|l| l.starts_with("sample ")) {
        let f: Vec<&str> = line.split(' ').skip(1).collect();
        let (a, b): (f64, f64) = (f[7].parse().unwrap(), f[8].parse().unwrap());
        let distribution = match f[1].parse().unwrap() {
            Distribution::Uniform { .. } => Distribution::Uniform { low: a, high: b },
            Distribution::Normal { .. } => Distribution::Normal { mean: a, std: b },
            Distribution::Bernoulli { .. } => Distribution::Bernoulli { p: a },
            other => other,
        };
        let spec = SampleSpec::new(distribution)
            .layout(f[0].parse::<Layout>().unwrap())
            .sm_count(f[9].parse().unwrap())
            .max_threads_per_sm(f[10].parse().unwrap())
            .numel(f[11].parse().unwrap());
        let state = PhiloxState::new(f[3].parse().unwrap(), f[4].parse().unwrap());
        let (first, count): (u64, usize) = (f[5].parse().unwrap(), f[6].parse().unwrap());
        let got = match f[2] {
            "u8" => hex::<u8>(&state, &spec, first, count, |v| format!("{:02x}", v)),
            "u32" => hex::<u32>(&state, &spec, first, count, |v| format!("{:08x}", v)),
            "u64" => hex::<u64>(&state, &spec, first, count, |v| format!("{:016x}", v)),
            "f32" => hex::<f32>(&state, &spec, first, count, |v| format!("{:08x}", v.to_bits())),
            "f64" => hex::<f64>(&state, &spec, first, count, |v| format!("{:016x}", v.to_bits())),
            _ => continue,
        };
        checked += 1;
        if got != f[12..] {
            wrong += 1;
            eprintln!("differs: {}", line);
        }
    }
    let tracker = rngtrk::Tracker::new().expect("a tracker");
    drop(tracker);
    println!("librngtrk {}: {} sample vectors drawn, {} differ", rngtrk::version_string(), checked, wrong);
    std::process::exit(if wrong == 0 && checked >= 100 { 0 } else { 1 });
}
RS
}
vectors="$top/tests/vectors/sample_vectors.txt"
# runs DIR NAME: builds the app in DIR, runs it with no LD_LIBRARY_PATH,
# and checks that it links no shared librngtrk; prints its line.
runs() {
    (cd "$1" && "$cargo" build --offline --quiet) >"$stage/$2.log" 2>&1 ||
        { cat "$stage/$2.log"; fail "$2 did not build"; }
    ldd "$CARGO_TARGET_DIR/debug/$2" >"$stage/$2.ldd" || fail "ldd $2"
    if grep -q librngtrk "$stage/$2.ldd"; then cat "$stage/$2.ldd"; fail "$2 links a shared librngtrk"; fi
    "$CARGO_TARGET_DIR/debug/$2" "$vectors" || fail "$2 did not run, or drew other numbers"
}

# a. A path dependency on the clone's crates, no make.
t0=$(date +%s)
app "$stage/a" path-app "{ path = \"$clone/bindings/rust\" }"
case $parts in *a*)
out_a=$(runs "$stage/a" path-app)
[ ! -e "$clone/build/librngtrk.so" ] || fail "the build wrote into the clone's build/"
# The sources compiled with the Makefile's flags (both read library.mk):
# the arguments the build script recorded beside each object, against
# `make -n` in the clone.
objects=$(ls -d "$CARGO_TARGET_DIR"/debug/build/rngtrk-sys-*/out/obj | head -1)
(cd "$clone" && make -n -B BUILD="$stage/make-n" CUDA=0 CXX=c++ lib) >"$stage/make-n.txt" 2>&1 ||
    { cat "$stage/make-n.txt"; fail "make -n"; }
${PYTHON:-/usr/bin/python3} "$top/tests/compare_compile_flags.py" rngtrk-sys "$clone" "$stage/make-n.txt" \
    args-dir "$objects" "$clone" || fail "rngtrk-sys compiles with other flags than the Makefile"
echo "a. path dependency, no make: $out_a ($(($(date +%s) - t0)) s)"
esac

# b. The packed rngtrk-sys, unpacked outside, under the same safe crate.
case $parts in *b*)
t0=$(date +%s)
"$clone/bindings/rust/rngtrk-sys/vendor_sources.sh"
(cd "$clone/bindings/rust" && "$cargo" package --offline --allow-dirty --list -p rngtrk-sys) >"$stage/list.txt" 2>&1 ||
    { cat "$stage/list.txt"; fail "cargo package --list"; }
for f in build.rs src/lib.rs src/version_rule.rs csrc/library.mk csrc/LICENSE csrc/c_api/rngtrk.h \
    csrc/c_api/api_tracker.cpp csrc/core/tracker.cpp csrc/core/sample_engine.inc csrc/cuda/cuda_unavailable.cpp; do
    grep -qx "$f" "$stage/list.txt" || { cat "$stage/list.txt"; fail "the packed rngtrk-sys lacks $f"; }
done
(cd "$clone/bindings/rust" && CARGO_TARGET_DIR="$stage/package-target" "$cargo" package --offline --allow-dirty \
    --no-verify -p rngtrk-sys) >"$stage/package.log" 2>&1 || { cat "$stage/package.log"; fail "cargo package"; }
mkdir -p "$stage/unpacked"
tar -xzf "$stage/package-target/package/rngtrk-sys-0.1.0.crate" -C "$stage/unpacked"
mkdir -p "$stage/safe"
(cd "$clone/bindings/rust" && cp -r Cargo.toml build.rs src "$stage/safe/")
mv "$stage/unpacked/rngtrk-sys-0.1.0" "$stage/safe/rngtrk-sys"
app "$stage/b" packed-app "{ path = \"$stage/safe\" }"
out_b=$(runs "$stage/b" packed-app)
[ "$out_b" = "${out_a:-$out_b}" ] || fail "the packed crate printed '$out_b', the path dependency '$out_a'"
echo "b. packed rngtrk-sys, unpacked outside: $out_b ($(($(date +%s) - t0)) s)"
esac

# c. Bad input: one message, a failed build.
case $parts in *c*)
t0=$(date +%s)
expect_failure() { # NAME TEXT... : the last build of the path app failed saying each TEXT
    name=$1; shift
    for text in "$@"; do
        grep -qF -- "$text" "$stage/$name.log" || { cat "$stage/$name.log"; fail "$name: no message '$text'"; }
    done
    [ "$(grep -c '^ *rngtrk-sys: ' "$stage/$name.log")" = 1 ] || { cat "$stage/$name.log"; fail "$name: not one message"; }
}
compiler_help="install g++ (Debian: apt-get install g++) or install rngtrk so pkg-config finds it or set RNGTRK_LIB_DIR"
if (cd "$stage/a" && CXX=/nonexistent "$cargo" build --offline --quiet) >"$stage/no-cxx.log" 2>&1; then
    fail "built with CXX=/nonexistent"
fi
expect_failure no-cxx "CXX=/nonexistent" "$compiler_help"
# A PATH with every program of cargo's folder and /usr/bin but the C++
# compilers (cc stays: rustc links with it).  cargo's folder may be
# /usr/bin itself (Debian's cargo), so it is not put on PATH as it is.
mkdir -p "$stage/bin"
cargo_dir=$(dirname "$(command -v "$cargo")")
for p in "$cargo_dir"/* /usr/bin/* /bin/*; do
    case ${p##*/} in *++*) continue ;; esac
    [ -e "$stage/bin/${p##*/}" ] || ln -s "$p" "$stage/bin/${p##*/}"
done
if (cd "$stage/a" && PATH="$stage/bin" "$cargo" build --offline --quiet) >"$stage/no-compiler.log" 2>&1; then
    fail "built with no C++ compiler on PATH"
fi
expect_failure no-compiler "no C++ compiler (c++, g++ or clang++) is on PATH" "$compiler_help"
# An installed rngtrk of another version.
mkdir -p "$stage/fake-pc"
cat >"$stage/fake-pc/rngtrk.pc" <<PC
prefix=$stage/fake
libdir=\${prefix}/lib
includedir=\${prefix}/include
Name: rngtrk
Description: an rngtrk of another version
Version: 9.1.0
Libs: -L\${libdir} -lrngtrk
Cflags: -I\${includedir}
PC
if (cd "$stage/a" && PKG_CONFIG_PATH="$stage/fake-pc" "$cargo" build --offline --quiet) >"$stage/range.log" 2>&1; then
    fail "built against an rngtrk 9.1.0"
fi
header=$(sed -n 's/^#define RNGTRK_VERSION_\(MAJOR\|MINOR\) //p' "$top/c_api/rngtrk.h" | paste -sd.)
expect_failure range "pkg-config found rngtrk 9.1.0 ($stage/fake-pc/rngtrk.pc)" "needs librngtrk $header." \
    "install a matching rngtrk" "PKG_CONFIG_PATH" "bundled"
# With `bundled` that rngtrk.pc is not asked: the build goes to the sources
# (and stops at the missing compiler, so that nothing is compiled again).
if (cd "$stage/a" && PKG_CONFIG_PATH="$stage/fake-pc" CXX=/nonexistent "$cargo" build --offline --quiet \
    --features rngtrk/bundled) >"$stage/bundled.log" 2>&1; then
    fail "built with CXX=/nonexistent and bundled"
fi
expect_failure bundled "CXX=/nonexistent" "$compiler_help"
# Inside the clone before `make`: RNGTRK_LIB_DIR (from .cargo/config.toml)
# names build/, which holds no library.
if (cd "$clone/bindings/rust" && "$cargo" build --offline --quiet) >"$stage/no-make.log" 2>&1; then
    fail "cargo build inside the clone, before make, built"
fi
expect_failure no-make "RNGTRK_LIB_DIR is $clone/bindings/rust/../../build, which holds no librngtrk.so" \
    "make lib" "bundled"
echo "c. no compiler, an rngtrk of another version, cargo before make: one message each, the build failed ($(($(date +%s) - t0)) s)"
esac
echo "rust bundled ($parts): ok in $(($(date +%s) - started)) s ($("$cargo" --version))"
