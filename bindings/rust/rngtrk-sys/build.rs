//! Finds librngtrk to link, in this order:
//! 1. the folder in `RNGTRK_LIB_DIR`;
//! 2. what `pkg-config --libs-only-L rngtrk` answers (an installed rngtrk);
//! 3. the repository's `build/` folder (after `make`).
//!
//! The folder is also written into the test and example binaries' run path,
//! so `cargo test` works after `make` with no LD_LIBRARY_PATH, and handed to
//! crates that depend on this one (`links = "rngtrk"`: DEP_RNGTRK_LIB_DIR).
use std::env;
use std::path::PathBuf;
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

fn main() {
    // tests/sys_is_current.rs runs only where bindgen is (else it is
    // reported as ignored, with the reason).
    println!("cargo:rustc-check-cfg=cfg(rngtrk_has_bindgen)");
    println!("cargo:rerun-if-env-changed=PATH");
    if Command::new("bindgen").arg("--version").output().map(|o| o.status.success()).unwrap_or(false) {
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
    } else {
        let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
        let build = manifest.join("..").join("..").join("..").join("build");
        let build = build.canonicalize().unwrap_or(build);
        println!("cargo:rerun-if-changed={}", build.join("librngtrk.so").display());
        vec![build.display().to_string()]
    };
    for dir in &dirs {
        println!("cargo:rustc-link-search=native={}", dir);
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", dir);
    }
    println!("cargo:rustc-link-lib=dylib=rngtrk");
    // For crates that depend on this one (DEP_RNGTRK_LIB_DIR): where it linked from.
    println!("cargo:lib_dir={}", dirs.join(":"));
}
