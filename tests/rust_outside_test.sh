#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# Rust outside this checkout: rngtrk installed with `make install` into a
# prefix, then
#   1. a crate of its own, outside the repository, that depends on the
#      rngtrk crates by path builds, links the installed library (found by
#      rngtrk-sys's build script through the pkg-config command) and runs
#      with no LD_LIBRARY_PATH: its build.rs writes DEP_RNGTRK_LIB_DIR into
#      its run path, as docs/rust.md tells users to;
#   2. the pkg-config route for the crates' own binaries: an example of the
#      safe crate and rngtrk-sys's test binary, built from outside the
#      repository's cargo configuration, run with no LD_LIBRARY_PATH (the
#      run path their build scripts write);
#   3. `cargo package --offline` packs both crates (from a clone, so with no
#      vendored csrc/), and rngtrk-sys as packed (out of the repository, as
#      crates.io would hand it out) stops with one message naming what to
#      do when no librngtrk can be found and it has no sources, and links
#      the installed one when pkg-config finds it.
# (rngtrk-sys building the library from sources: tests/rust_bundled_test.sh.)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cargo=${CARGO:-$(command -v cargo || echo "$HOME/.cargo/bin/cargo")}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix="$stage/prefix"
env -u MAKEFLAGS -u MAKELEVEL make -s -C "$top" install PREFIX="$prefix" >/dev/null
installed="$prefix/lib/pkgconfig"
export CARGO_TARGET_DIR="$stage/target"
unset LD_LIBRARY_PATH RNGTRK_LIB_DIR 2>/dev/null || true
# links_installed BINARY: the loader resolves its librngtrk to the one installed.
links_installed() {
    lib=$(ldd "$1" | sed -n 's/^[[:space:]]*librngtrk\.so[^ ]* => \([^ ]*\) .*/\1/p')
    [ -n "$lib" ] && [ "$(readlink -f "$lib")" = "$(readlink -f "$prefix/lib/librngtrk.so")" ]
}

# 1. A crate outside the repository, depending on rngtrk by path.
mkdir -p "$stage/app/src"
cat >"$stage/app/Cargo.toml" <<EOF
[package]
name = "outside"
version = "0.1.0"
edition = "2021"

[dependencies]
rngtrk = { path = "$top/bindings/rust" }
# Only for its DEP_RNGTRK_* variables (build.rs); the same crate rngtrk uses.
rngtrk-sys = { path = "$top/bindings/rust/rngtrk-sys" }

[workspace]
EOF
cat >"$stage/app/build.rs" <<'EOF'
fn main() {
    // The folder rngtrk-sys linked librngtrk from, into this program's run path.
    if std::env::var("DEP_RNGTRK_LINK").map_or(false, |link| link == "dylib") {
        for dir in std::env::var("DEP_RNGTRK_LIB_DIR").unwrap_or_default().split(':').filter(|d| !d.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        }
    }
}
EOF
cat >"$stage/app/src/main.rs" <<'EOF'
fn main() -> Result<(), rngtrk::Error> {
    let mut tracker = rngtrk::Tracker::new()?;
    tracker.add("model-parallel-rng", 3952)?;
    let mut mask = [0f32; 4];
    tracker.fork("model-parallel-rng")?.uniform_f32(&mut mask)?;
    println!("outside: {} {:?}", rngtrk::version_string(), mask);
    Ok(())
}
EOF
(cd "$stage/app" && PKG_CONFIG_PATH="$installed" "$cargo" build --offline --quiet) >"$stage/app.log" 2>&1 ||
    { echo "FAIL: a crate outside the repository did not build"; cat "$stage/app.log"; exit 1; }
# The prefix is outside the loader's folders: the run path the app's
# build.rs wrote finds the library.
out=$("$stage/target/debug/outside") && printf '%s\n' "$out" | grep -q "^outside: 0\.1\.0 \[" ||
    { echo "FAIL: it did not run with no LD_LIBRARY_PATH"; exit 1; }
links_installed "$stage/target/debug/outside" ||
    { echo "FAIL: it did not link the installed library:"; ldd "$stage/target/debug/outside"; exit 1; }

# 2. The crates' own binaries by pkg-config.  Run from $stage, cargo reads
# none of bindings/rust/.cargo/config.toml (whose RNGTRK_LIB_DIR would pick
# build/); the checkout's build/ comes after pkg-config anyway.
(cd "$stage" && PKG_CONFIG_PATH="$installed" "$cargo" build --offline --quiet \
    --manifest-path "$top/bindings/rust/Cargo.toml" --example tour) >"$stage/example.log" 2>&1 ||
    { echo "FAIL: the example tour did not build by pkg-config"; cat "$stage/example.log"; exit 1; }
links_installed "$stage/target/debug/examples/tour" ||
    { echo "FAIL: the example did not link the installed library:"; ldd "$stage/target/debug/examples/tour"; exit 1; }
"$stage/target/debug/examples/tour" >"$stage/tour.out" 2>&1 ||
    { echo "FAIL: the example tour did not run with no LD_LIBRARY_PATH"; cat "$stage/tour.out"; exit 1; }
(cd "$stage" && PKG_CONFIG_PATH="$installed" "$cargo" test --offline --quiet \
    --manifest-path "$top/bindings/rust/Cargo.toml" -p rngtrk-sys --lib) >"$stage/sys-test.log" 2>&1 ||
    { echo "FAIL: rngtrk-sys's tests did not run by pkg-config"; cat "$stage/sys-test.log"; exit 1; }

# 3. The crates as packed.  rngtrk's dependency on rngtrk-sys resolves in a
# registry, as on crates.io once rngtrk-sys is published: a recent cargo
# packs the workspace into a local registry and verifies both; an older one
# packs one crate at a time, so a directory source holding the packed
# rngtrk-sys stands in for crates.io while rngtrk is packed and verified.
# Packed from a clone: no csrc/ (vendor_sources.sh) whatever this tree has.
"$top/tests/clone_checkout.sh" "$stage/clone"
cd "$stage/clone/bindings/rust"
packed="$stage/target/package"
# The clone's .cargo/config.toml names its build/ as RNGTRK_LIB_DIR, where no
# make ran (rngtrk-sys stops there, saying so): the installed library instead.
export RNGTRK_LIB_DIR="$prefix/lib"
"$cargo" package --offline --allow-dirty -p rngtrk-sys >"$stage/package.log" 2>&1 ||
    { echo "FAIL: cargo package -p rngtrk-sys"; cat "$stage/package.log"; exit 1; }
if "$cargo" package --offline --allow-dirty --workspace >>"$stage/package.log" 2>&1; then
    echo "cargo package: rngtrk-sys and rngtrk packed and verified (one local registry)"
else
    vendor="$stage/vendor"
    mkdir -p "$vendor"
    tar -xzf "$packed/rngtrk-sys-0.1.0.crate" -C "$vendor"
    ${PYTHON:-/usr/bin/python3} - "$vendor/rngtrk-sys-0.1.0" "$packed/rngtrk-sys-0.1.0.crate" <<'PY'
import hashlib, json, os, sys
root, crate = sys.argv[1], sys.argv[2]
digest = lambda path: hashlib.sha256(open(path, "rb").read()).hexdigest()
files = {os.path.relpath(os.path.join(d, f), root): digest(os.path.join(d, f))
         for d, _, fs in os.walk(root) for f in fs}
json.dump({"files": files, "package": digest(crate)}, open(os.path.join(root, ".cargo-checksum.json"), "w"))
PY
    "$cargo" package --offline --allow-dirty -p rngtrk --config 'source.crates-io.replace-with="packed"' \
        --config "source.packed.directory=\"$vendor\"" >>"$stage/package.log" 2>&1 ||
        { echo "FAIL: cargo package -p rngtrk"; cat "$stage/package.log"; exit 1; }
    echo "cargo package: rngtrk-sys packed and verified, then rngtrk against it ($("$cargo" --version))"
fi
unset RNGTRK_LIB_DIR
mkdir -p "$stage/crates"
tar -xzf "$packed/rngtrk-sys-0.1.0.crate" -C "$stage/crates"
tar -tzf "$packed/rngtrk-0.1.0.crate" | grep -q '^rngtrk-0.1.0/src/lib.rs$' || { echo "FAIL: rngtrk's .crate"; exit 1; }
mkdir -p "$stage/sys-app/src"
cat >"$stage/sys-app/Cargo.toml" <<EOF
[package]
name = "sys-outside"
version = "0.1.0"
edition = "2021"

[dependencies]
rngtrk-sys = { path = "$stage/crates/rngtrk-sys-0.1.0" }

[workspace]
EOF
cat >"$stage/sys-app/src/main.rs" <<'EOF'
fn main() {
    // SAFETY: returns a static NUL-terminated string.
    let version = unsafe { std::ffi::CStr::from_ptr(rngtrk_sys::rngtrk_version_string()) };
    println!("sys-outside: {}", version.to_str().unwrap());
}
EOF
cd "$stage/sys-app"
if env -u PKG_CONFIG_PATH PKG_CONFIG_LIBDIR="$stage/none" "$cargo" build --offline --quiet >"$stage/none.log" 2>&1; then
    echo "FAIL: the packed rngtrk-sys built with no librngtrk to be found"; exit 1
fi
grep -q "librngtrk was not found, and this crate holds no sources to build it from" "$stage/none.log" ||
    { echo "FAIL: no clear message without a librngtrk"; cat "$stage/none.log"; exit 1; }
PKG_CONFIG_PATH="$installed" "$cargo" build --offline --quiet >"$stage/sys.log" 2>&1 ||
    { echo "FAIL: the packed rngtrk-sys did not build against the installed library"; cat "$stage/sys.log"; exit 1; }
# No build.rs of its own writes a run path here: it finds the library as
# any program does, through LD_LIBRARY_PATH (docs/rust.md: Linking).
[ "$(LD_LIBRARY_PATH="$prefix/lib" "$stage/target/debug/sys-outside")" = "sys-outside: 0.1.0" ] ||
    { echo "FAIL: sys-outside did not run"; exit 1; }
echo "rust outside the checkout: ok (a path dependency, the crates' own binaries and the packed rngtrk-sys link the installed library; the first two run with no LD_LIBRARY_PATH)"
