// SPDX-License-Identifier: Apache-2.0
//! Golden and invalid checkpoints, and recipes: the bytes Rust saves for a
//! recipe equal the golden file and what C saves for the same calls.
mod common;

use std::process::Command;

use common::{read_vector, run_recipe, snapshot, vector_path};
use rngtrk::{
    CheckpointSource, ErrorKind, ForkGuard, LoadOptions, ParallelRank, PhiloxState, SeedFlags, SeedPolicy, Tracker,
};

fn golden_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(vector_path("checkpoints"))
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter_map(|n| n.strip_suffix(".rtck").map(String::from))
        .collect();
    names.sort();
    names
}

#[test]
fn golden_files_load_save_back_and_decode_to_their_json() {
    let names = golden_names();
    assert!(names.len() >= 5);
    for name in names {
        let bytes = read_vector(&format!("checkpoints/{}.rtck", name));
        let mut t = Tracker::new().unwrap();
        t.load(&bytes, &LoadOptions::new()).unwrap();
        assert_eq!(t.save().unwrap(), bytes, "{}", name);
        let json = String::from_utf8(read_vector(&format!("checkpoints/{}.json", name))).unwrap();
        assert_eq!(rngtrk::checkpoint_to_json(&bytes).unwrap() + "\n", json, "{}", name);
    }
}

#[test]
fn invalid_files_fail_with_their_kind_and_change_nothing() {
    let manifest = String::from_utf8(read_vector("checkpoints/invalid/expected.txt")).unwrap();
    let mut checked = 0;
    for line in manifest.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        let (file, status) = line.split_once(' ').unwrap();
        let kind = match status {
            "RNGTRK_E_CORRUPT" => ErrorKind::Corrupt,
            "RNGTRK_E_UNSUPPORTED_VERSION" => ErrorKind::UnsupportedVersion,
            other => panic!("unexpected status {}", other),
        };
        let mut t = Tracker::new().unwrap();
        t.add("keep", 9).unwrap();
        let before = snapshot(&t);
        let error = t.load(&read_vector(&format!("checkpoints/invalid/{}", file)), &LoadOptions::new()).unwrap_err();
        assert_eq!(error.kind(), kind, "{}", file);
        assert_eq!(snapshot(&t), before, "{}", file);
        checked += 1;
    }
    assert!(checked >= 15);
}

fn recipes() -> Vec<(String, Vec<String>)> {
    let text = String::from_utf8(read_vector("checkpoints/recipes.txt")).unwrap();
    let mut found: Vec<(String, Vec<String>)> = Vec::new();
    let mut inside = false;
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.is_empty()) {
        if let Some(name) = line.strip_prefix("recipe ") {
            found.push((name.to_string(), Vec::new()));
            inside = true;
        } else if line == "end" {
            inside = false;
        } else {
            assert!(inside, "call outside a recipe: {}", line);
            found.last_mut().unwrap().1.push(line.to_string());
        }
    }
    found
}

fn num(s: &str) -> u64 {
    s.parse().unwrap()
}

/// Replays calls inside the fork `guard` until its "restore" line; returns
/// the number of lines consumed.  Fork guards nest as the recipe nests.
fn replay_in_fork(guard: &mut ForkGuard<'_>, calls: &[String]) -> usize {
    let mut i = 0;
    while i < calls.len() {
        let f: Vec<&str> = calls[i].split(' ').collect();
        i += 1;
        match f[0] {
            "restore" => {
                assert_eq!(f[1], guard.name());
                return i;
            }
            "advance" => drop(guard.advance(num(f[1])).unwrap()),
            "set_state" => guard.set_state(f[1], PhiloxState::new(num(f[2]), num(f[3]))).unwrap(),
            "manual_seed" => guard.manual_seed(num(f[1])).unwrap(),
            "fork" => {
                let mut inner = guard.fork(f[1]).unwrap();
                i += replay_in_fork(&mut inner, &calls[i..]);
                inner.restore().unwrap();
            }
            other => panic!("{} is not allowed inside a fork", other),
        }
    }
    panic!("fork {} is never restored", guard.name());
}

fn replay(t: &mut Tracker, calls: &[String]) {
    let mut i = 0;
    while i < calls.len() {
        let f: Vec<&str> = calls[i].split(' ').collect();
        i += 1;
        match f[0] {
            "manual_seed" => t.manual_seed(num(f[1])).unwrap(),
            "add" => t.add(f[1], num(f[2])).unwrap(),
            "advance" => drop(t.advance(num(f[1])).unwrap()),
            "set_state" => t.set_state(f[1], PhiloxState::new(num(f[2]), num(f[3]))).unwrap(),
            "set_default" => t.set_default_state(PhiloxState::new(num(f[1]), num(f[2]))).unwrap(),
            "reset" => t.reset().unwrap(),
            "seed_rank" => {
                // seed_rank POLICY SEED [FIELD=N]... [FLAG]..., by the library's names.
                let mut rank = ParallelRank::default();
                let mut flags = SeedFlags::NONE;
                for field in &f[3..] {
                    match field.split_once('=') {
                        Some((name, value)) => {
                            let value: u32 = value.parse().unwrap();
                            match name {
                                "tp" => rank.tp = value,
                                "pp" => rank.pp = value,
                                "dp" => rank.dp = value,
                                "ep" => rank.ep = value,
                                "etp" => rank.etp = value,
                                "gtp_remat" => rank.gtp_remat = value,
                                "gtp_remat_size" => rank.gtp_remat_size = value,
                                "egtp_remat" => rank.egtp_remat = value,
                                "egtp_remat_size" => rank.egtp_remat_size = value,
                                other => panic!("unknown rank field {}", other),
                            }
                        }
                        None => flags = flags | SeedFlags::from_name(field).expect("a flag's name"),
                    }
                }
                t.seed_rank(SeedPolicy::from_name(f[1]).unwrap(), num(f[2]), &rank, flags).unwrap();
            }
            "set_states" => {
                let states: Vec<(&str, PhiloxState)> =
                    f[1..].chunks(3).map(|c| (c[0], PhiloxState::new(num(c[1]), num(c[2])))).collect();
                t.set_states(&states).unwrap();
            }
            "fork" => {
                let mut guard = t.fork(f[1]).unwrap();
                i += replay_in_fork(&mut guard, &calls[i..]);
                guard.restore().unwrap();
            }
            other => panic!("unknown recipe call {}", other),
        }
    }
}

#[test]
fn recipes_save_the_same_bytes_as_c_and_the_golden_file() {
    let recipes = recipes();
    assert!(recipes.len() >= 2);
    let out_dir = std::env::temp_dir().join(format!("rngtrk-rust-recipes-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    for (name, calls) in recipes {
        let mut t = Tracker::new().unwrap();
        replay(&mut t, &calls);
        let written_by_rust = t.save().unwrap();
        let c_file = out_dir.join(format!("{}.rtck", name));
        let status = Command::new(run_recipe())
            .arg(vector_path("checkpoints/recipes.txt"))
            .arg(&name)
            .arg(&c_file)
            .status()
            .unwrap();
        assert!(status.success(), "run_recipe {} failed", name);
        assert_eq!(written_by_rust, std::fs::read(&c_file).unwrap(), "{}: Rust and C differ", name);
        assert_eq!(written_by_rust, read_vector(&format!("checkpoints/{}.rtck", name)), "{}", name);
    }
    std::fs::remove_dir_all(&out_dir).unwrap();
}

#[test]
fn checkpoint_files_round_trip_and_report_io_errors() {
    let dir = std::env::temp_dir().join(format!("rngtrk-rust-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tracker.rtck");
    let mut t = Tracker::new().unwrap();
    t.add("a", 1).unwrap();
    t.advance(8).unwrap();
    t.save_file(&file).unwrap();
    let mut u = Tracker::new().unwrap();
    u.load(&file, &LoadOptions::new()).unwrap();
    assert_eq!(u.save().unwrap(), t.save().unwrap());
    assert_eq!(u.load(&dir.join("missing.rtck"), &LoadOptions::new()).unwrap_err().kind(), ErrorKind::Io);
    assert_eq!(t.save_file(&dir.join("no/such/folder/x.rtck")).unwrap_err().kind(), ErrorKind::Io);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_load_call_takes_bytes_or_a_file_named_or_converted() {
    let dir = std::env::temp_dir().join(format!("rngtrk-rust-sources-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.rtck");
    let mut t = Tracker::new().unwrap();
    t.add("a", 1).unwrap();
    t.advance(8).unwrap();
    let bytes = t.save().unwrap();
    t.save_file(&path).unwrap();
    let sources = [
        CheckpointSource::Bytes(&bytes),
        CheckpointSource::File(&path),
        CheckpointSource::from(&bytes[..]),
        CheckpointSource::from(path.as_path()),
    ];
    for source in sources {
        let mut u = Tracker::new().unwrap();
        u.load(source, &LoadOptions::new()).unwrap();
        assert_eq!(u.save().unwrap(), bytes, "{:?}", source);
    }
    assert_eq!(CheckpointSource::from(&bytes), CheckpointSource::Bytes(&bytes));
    assert_eq!(CheckpointSource::from(&path), CheckpointSource::File(&path));
    assert_eq!(LoadOptions::default(), LoadOptions::new());
    assert_ne!(LoadOptions::new().any_rank(true), LoadOptions::new());
    // A file source is a path: its bytes are not taken for a checkpoint.
    let mut u = Tracker::new().unwrap();
    let e = u.load(std::path::Path::new("no\0file"), &LoadOptions::new()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    std::fs::remove_dir_all(&dir).unwrap();
}
