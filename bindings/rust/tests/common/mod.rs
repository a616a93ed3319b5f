// SPDX-License-Identifier: Apache-2.0
//! Paths and helpers shared by the integration tests.
#![allow(dead_code)]
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use rngtrk::{PhiloxState, Tracker};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("..")
}

pub fn vector_path(relative: &str) -> PathBuf {
    repo().join("tests").join("vectors").join(relative)
}

pub fn read_vector(relative: &str) -> Vec<u8> {
    std::fs::read(vector_path(relative)).unwrap_or_else(|e| panic!("{}: {}", relative, e))
}

/// Lines of rngtrk_vectors.txt starting with `kind`, split into fields.
pub fn records(kind: &str) -> Vec<Vec<String>> {
    String::from_utf8(read_vector("rngtrk_vectors.txt"))
        .unwrap()
        .lines()
        .map(|l| l.split(' ').map(String::from).collect::<Vec<_>>())
        .filter(|f| f[0] == kind)
        .map(|f| f[1..].to_vec())
        .collect()
}

/// Everything observable about a tracker, to prove a failed call changed nothing.
pub fn snapshot(t: &Tracker) -> (Vec<u8>, PhiloxState, usize, Vec<(String, PhiloxState)>) {
    (t.save().unwrap(), t.active_state(), t.fork_depth(), t.states().unwrap())
}

/// A C program of the repository's tests/c, built by the test itself (so
/// `cargo test` needs no `make test-programs` first): `cc -std=c99` (or $CC)
/// against the checkout's header and the librngtrk this crate linked, into
/// cargo's temporary folder for tests.  Built once per test process.
pub fn c_program(name: &str, sources: &[&str]) -> PathBuf {
    static BUILT: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    if built.iter().any(|b| b == name) {
        return out;
    }
    let lib_dirs = option_env!("RNGTRK_LINKED_LIB_DIR").unwrap_or("");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let mut command = Command::new(&cc);
    command.args(["-std=c99", "-O1", "-o"]).arg(&out).arg("-I").arg(repo().join("c_api"));
    command.args(sources.iter().map(|s| repo().join("tests").join("c").join(s)));
    for dir in lib_dirs.split(':').filter(|d| !d.is_empty()) {
        command.arg(format!("-L{}", dir)).arg(format!("-Wl,-rpath,{}", dir));
    }
    command.arg("-lrngtrk");
    if option_env!("RNGTRK_LINKED_KIND") == Some("static") {
        // rngtrk-sys built librngtrk.a from sources: its C++ runtime too.
        command.args(["-lstdc++", "-lm", "-pthread"]);
    }
    let status = command.status().unwrap_or_else(|e| panic!("{}: cannot run the C compiler {}: {}", name, cc, e));
    assert!(status.success(), "{}: {:?} failed", name, command);
    built.push(name.to_string());
    out
}

/// tests/c/run_recipe.c: replays a checkpoint recipe through the C API.
pub fn run_recipe() -> PathBuf {
    c_program("run_recipe", &["run_recipe.c", "checkpoint_recipes.c"])
}
