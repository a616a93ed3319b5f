//! Paths and helpers shared by the integration tests.
#![allow(dead_code)]
use std::path::PathBuf;

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

/// A program `make test-programs` builds under build/tests.
pub fn build_program(name: &str) -> PathBuf {
    let path = repo().join("build").join("tests").join(name);
    assert!(path.exists(), "{} is missing: run `make test-programs` first", path.display());
    path
}
