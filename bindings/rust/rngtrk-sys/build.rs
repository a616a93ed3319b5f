// SPDX-License-Identifier: Apache-2.0
//! Finds librngtrk to link, in this order:
//! 1. the folder in `RNGTRK_LIB_DIR`;
//! 2. what the `pkg-config` command answers for rngtrk (an installed
//!    rngtrk: `make install`; no crate is needed for this);
//! 3. inside the rngtrk repository only, its `build/` folder (after `make`).
//!
//! Otherwise the build stops with one message saying how to provide it.
//! The folder is also written into the test and example binaries' run path,
//! so `cargo test` works with no LD_LIBRARY_PATH, and handed to crates that
//! depend on this one (`links = "rngtrk"`: DEP_RNGTRK_LIB_DIR).
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn from_pkg_config() -> Option<Vec<String>> {
    let output = Command::new("pkg-config").args(["--libs-only-L", "rngtrk"]).output().ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8(output.stdout).ok()?;
    let dirs: Vec<String> = text.split_whitespace().filter_map(|f| f.strip_prefix("-L")).map(String::from).collect();
    // An answer with no -L means the system's default folders.
    Some(dirs)
}

/// The repository's build/ folder, when this crate sits in an rngtrk
/// checkout (bindings/rust/rngtrk-sys, next to c_api/rngtrk.h).
fn checkout_build() -> Option<PathBuf> {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let top = manifest.join("..").join("..").join("..");
    if !top.join("c_api").join("rngtrk.h").is_file() {
        return None;
    }
    let build = top.join("build");
    Some(build.canonicalize().unwrap_or(build))
}

/// Where `program` is on PATH, if it is.
fn on_path(program: &str) -> Option<PathBuf> {
    env::split_paths(&env::var_os("PATH")?).map(|dir| dir.join(program)).find(|p| p.is_file())
}

/// The minor version of the rustc cargo runs (1.x), if it says.
fn rustc_minor() -> Option<u32> {
    let rustc = env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    text.split_whitespace().nth(1)?.split('.').nth(1)?.parse().ok()
}

fn main() {
    // tests/sys_is_current.rs runs only where bindgen and rustfmt both are
    // (bindgen formats its output with rustfmt); else it is reported as
    // ignored, with the reason.  Where one is missing, the build script is
    // asked to run again once it appears there.
    if rustc_minor().map_or(false, |minor| minor >= 80) {
        println!("cargo:rustc-check-cfg=cfg(rngtrk_has_bindgen)"); // older cargo warns about the line
    }
    println!("cargo:rerun-if-env-changed=PATH");
    let tools: Vec<Option<PathBuf>> = ["bindgen", "rustfmt"].iter().map(|t| on_path(t)).collect();
    for (tool, found) in ["bindgen", "rustfmt"].iter().zip(&tools) {
        if let Some(path) = found {
            println!("cargo:rerun-if-changed={}", path.display()); // gone: run again
            continue;
        }
        // Missing: run again once it is installed.  A Debian package's
        // files keep the package's old times, which cargo would take for
        // "unchanged since the last run"; dpkg's list of the package's files
        // is written when it is installed.
        println!("cargo:rerun-if-changed={}", Path::new("/usr/bin").join(tool).display());
        if Path::new("/var/lib/dpkg/info").is_dir() {
            println!("cargo:rerun-if-changed=/var/lib/dpkg/info/{}.list", tool);
        }
    }
    if tools.iter().all(Option::is_some) {
        println!("cargo:rustc-cfg=rngtrk_has_bindgen");
    }
    println!("cargo:rerun-if-env-changed=RNGTRK_LIB_DIR");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_LIBDIR");
    println!("cargo:rerun-if-changed=build.rs");

    let dirs: Vec<String> = if let Ok(dir) = env::var("RNGTRK_LIB_DIR") {
        vec![dir]
    } else if let Some(dirs) = from_pkg_config() {
        dirs
    } else if let Some(build) = checkout_build() {
        println!("cargo:rerun-if-changed={}", build.join("librngtrk.so").display());
        vec![build.display().to_string()]
    } else {
        eprintln!(
            "rngtrk-sys: librngtrk was not found: install rngtrk (`make install` in its repository) so that \
             `pkg-config rngtrk` finds it, or set RNGTRK_LIB_DIR to the folder holding librngtrk.so"
        );
        std::process::exit(1);
    };
    for dir in &dirs {
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
    println!("cargo:rustc-link-lib=dylib=rngtrk");
    // For crates that depend on this one (DEP_RNGTRK_LIB_DIR): where it linked from.
    println!("cargo:lib_dir={}", dirs.join(":"));
}
