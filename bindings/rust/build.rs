// SPDX-License-Identifier: Apache-2.0
//! The safe crate's tests and examples run with no LD_LIBRARY_PATH: when
//! rngtrk-sys linked a shared librngtrk, the folder it linked from (its
//! `links = "rngtrk"` metadata, DEP_RNGTRK_LIB_DIR) goes into their run
//! path; rngtrk-sys's own `rustc-link-arg` reaches only its own targets.
//! When rngtrk-sys built the library from sources (DEP_RNGTRK_LINK =
//! `static`) there is nothing to find at run time and no run path is
//! written.  Programs of yours that depend on the crate get the search path
//! from rngtrk-sys, not this run path (docs/rust.md: Linking).  The tests
//! get the folder and the kind of link too (RNGTRK_LINKED_LIB_DIR,
//! RNGTRK_LINKED_KIND), to link the C programs they build
//! (tests/common/mod.rs) against the same library.
use std::env;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_RNGTRK_LIB_DIR");
    println!("cargo:rerun-if-env-changed=DEP_RNGTRK_LINK");
    let kind = env::var("DEP_RNGTRK_LINK").unwrap_or_else(|_| "dylib".to_string());
    println!("cargo:rustc-env=RNGTRK_LINKED_KIND={}", kind);
    if let Ok(dirs) = env::var("DEP_RNGTRK_LIB_DIR") {
        println!("cargo:rustc-env=RNGTRK_LINKED_LIB_DIR={}", dirs);
        if kind == "dylib" {
            for dir in dirs.split(':').filter(|d| !d.is_empty()) {
                println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
            }
        }
    }
}
