// SPDX-License-Identifier: Apache-2.0
//! The safe crate's tests and examples run from build/ without
//! LD_LIBRARY_PATH: the folder rngtrk-sys linked librngtrk from (its
//! `links = "rngtrk"` metadata, DEP_RNGTRK_LIB_DIR) goes into their run
//! path.  Programs of yours that depend on the crate get the search path
//! from rngtrk-sys, not this run path (README: Linking).  The tests get
//! the folder too (RNGTRK_LINKED_LIB_DIR), to link the C programs they
//! build (tests/common/mod.rs) against the same library.
use std::env;

fn main() {
    println!("cargo:rerun-if-env-changed=DEP_RNGTRK_LIB_DIR");
    if let Ok(dirs) = env::var("DEP_RNGTRK_LIB_DIR") {
        println!("cargo:rustc-env=RNGTRK_LINKED_LIB_DIR={}", dirs);
        for dir in dirs.split(':').filter(|d| !d.is_empty()) {
            println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
        }
    }
}
