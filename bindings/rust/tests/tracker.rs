// SPDX-License-Identifier: Apache-2.0
//! Every Tracker method and error path.  Each failure is checked to change nothing.
mod common;

use common::snapshot;
use rngtrk::{random_u32, uniform_f32, ErrorKind, LoadOptions, PhiloxState, Tracker};

const M64: u64 = u64::MAX;

fn megatron() -> Tracker {
    let mut t = Tracker::new().unwrap();
    t.manual_seed(1234).unwrap();
    t.add("data-parallel-rng", 1234).unwrap();
    t.add("model-parallel-rng", 1234 + 2718 + 3).unwrap();
    t
}

#[test]
fn a_new_tracker_is_empty() {
    let t = Tracker::new().unwrap();
    assert!(t.is_empty() && t.len() == 0 && t.names().unwrap().is_empty());
    assert_eq!(t.default_state(), PhiloxState::new(0, 0));
    assert_eq!(t.active_state(), PhiloxState::new(0, 0));
    assert_eq!(t.fork_depth(), 0);
}

#[test]
fn add_keeps_insertion_order() {
    let t = megatron();
    assert_eq!(t.names().unwrap(), ["data-parallel-rng", "model-parallel-rng"]);
    assert_eq!(t.len(), 2);
    assert!(t.contains("model-parallel-rng") && !t.contains("nope") && !t.contains("a\0b"));
    assert_eq!(t.state("model-parallel-rng").unwrap(), PhiloxState::new(3955, 0));
}

#[test]
fn add_errors_change_nothing() {
    let mut t = megatron();
    let before = snapshot(&t);
    let long = "x".repeat(256);
    for (name, seed, kind) in [
        ("data-parallel-rng", 9, ErrorKind::DuplicateName),
        ("other", 3955, ErrorKind::DuplicateSeed),
        ("", 9, ErrorKind::InvalidArgument),
        (long.as_str(), 9, ErrorKind::InvalidArgument),
        ("a\0b", 9, ErrorKind::InvalidArgument),
    ] {
        let error = t.add(name, seed).unwrap_err();
        assert_eq!(error.kind(), kind, "{:?}", name);
        assert!(!error.message().is_empty());
        assert_eq!(snapshot(&t), before);
    }
    t.add(&"é".repeat(127), 9).unwrap(); // 254 bytes: fine
}

#[test]
fn a_failed_add_burns_no_seed() {
    let mut t = Tracker::new().unwrap();
    t.add("a", 1).unwrap();
    assert_eq!(t.add("a", 2).unwrap_err().kind(), ErrorKind::DuplicateName);
    t.add("b", 2).unwrap();
}

#[test]
fn errors_display_the_status_and_the_library_message() {
    let mut t = megatron();
    let error = t.add("x", 3955).unwrap_err();
    assert_eq!(error.code(), -3);
    assert_eq!(error.to_string(), format!("{}: {}", rngtrk::status_string(-3), error.message()));
    assert!(error.message().contains("model-parallel-rng"));
    let boxed: Box<dyn std::error::Error> = Box::new(error);
    assert!(boxed.to_string().starts_with("duplicate seed"));
    assert_eq!(rngtrk::status_string(-99), "unknown status code");
}

#[test]
fn unknown_names() {
    let mut t = megatron();
    let before = snapshot(&t);
    assert_eq!(t.state("nope").unwrap_err().kind(), ErrorKind::UnknownName);
    assert_eq!(t.fork("nope").unwrap_err().kind(), ErrorKind::UnknownName);
    assert_eq!(t.set_state("nope", PhiloxState::new(1, 0)).unwrap_err().kind(), ErrorKind::UnknownName);
    assert_eq!(t.state("").unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(snapshot(&t), before);
}

#[test]
fn set_state_rules() {
    let mut t = megatron();
    t.set_state("data-parallel-rng", PhiloxState::new(5, 8)).unwrap();
    assert_eq!(t.state("data-parallel-rng").unwrap(), PhiloxState::new(5, 8));
    let before = snapshot(&t);
    assert_eq!(
        t.set_state("data-parallel-rng", PhiloxState::new(3955, 0)).unwrap_err().kind(),
        ErrorKind::DuplicateSeed
    );
    assert_eq!(
        t.set_state("data-parallel-rng", PhiloxState::new(5, 6)).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(snapshot(&t), before);
}

#[test]
fn set_states_replaces_all_or_nothing_and_keeps_the_default() {
    let mut t = megatron();
    t.advance(40).unwrap();
    let saved = t.states().unwrap();
    t.set_states(&[("b", PhiloxState::new(2, 8)), ("a", PhiloxState::new(1, 0))]).unwrap();
    assert_eq!(t.names().unwrap(), ["b", "a"]);
    assert_eq!(t.default_state(), PhiloxState::new(1234, 40));
    let before = snapshot(&t);
    for (states, kind) in [
        (vec![("a", PhiloxState::new(1, 0)), ("b", PhiloxState::new(1, 4))], ErrorKind::DuplicateSeed),
        (vec![("a", PhiloxState::new(1, 0)), ("a", PhiloxState::new(2, 4))], ErrorKind::DuplicateName),
        (vec![("a", PhiloxState::new(1, 2))], ErrorKind::InvalidArgument),
        (vec![("a\0", PhiloxState::new(1, 0))], ErrorKind::InvalidArgument),
    ] {
        assert_eq!(t.set_states(&states).unwrap_err().kind(), kind);
        assert_eq!(snapshot(&t), before);
    }
    let round: Vec<(&str, PhiloxState)> = saved.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    t.set_states(&round).unwrap();
    assert_eq!(t.states().unwrap(), saved);
    t.set_states(&[]).unwrap();
    assert!(t.is_empty());
}

#[test]
fn reset_and_manual_seed() {
    let mut t = megatron();
    t.advance(4).unwrap();
    t.reset().unwrap();
    assert!(t.is_empty());
    assert_eq!(t.default_state(), PhiloxState::new(0, 0));
    t.add("model-parallel-rng", 1).unwrap();
    t.manual_seed(77).unwrap();
    assert_eq!(t.active_state(), PhiloxState::new(77, 0));
}

#[test]
fn default_state_rules() {
    let mut t = Tracker::new().unwrap();
    t.set_default_state(PhiloxState::new(11, 44)).unwrap();
    assert_eq!(t.default_state(), PhiloxState::new(11, 44));
    assert_eq!(t.set_default_state(PhiloxState::new(11, 45)).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(t.default_state(), PhiloxState::new(11, 44));
}

#[test]
fn advance_rounds_up_and_returns_the_state_before() {
    let mut t = Tracker::new().unwrap();
    t.manual_seed(9).unwrap();
    assert_eq!(t.advance(0).unwrap(), PhiloxState::new(9, 0));
    assert_eq!(t.advance(1).unwrap(), PhiloxState::new(9, 0));
    assert_eq!(t.advance(5).unwrap(), PhiloxState::new(9, 4));
    assert_eq!(t.active_state(), PhiloxState::new(9, 12));
    t.set_default_state(PhiloxState::new(9, M64 - 7)).unwrap();
    let before = snapshot(&t);
    assert_eq!(t.advance(5).unwrap_err().kind(), ErrorKind::Overflow);
    assert_eq!(t.advance(M64).unwrap_err().kind(), ErrorKind::Overflow);
    assert_eq!(snapshot(&t), before);
    t.advance(4).unwrap();
    assert_eq!(t.active_state(), PhiloxState::new(9, M64 - 3));
}

#[test]
fn draws_come_from_the_active_state_and_advance_it() {
    let mut t = megatron();
    let mut words = [0u32; 10];
    let mut floats = [0f32; 3];
    {
        let mut fork = t.fork("model-parallel-rng").unwrap();
        assert_eq!(fork.random_u32(&mut words).unwrap(), PhiloxState::new(3955, 0));
        assert_eq!(fork.uniform_f32(&mut floats).unwrap(), PhiloxState::new(3955, 12));
    }
    let mut expected = [0u32; 10];
    random_u32(&PhiloxState::new(3955, 0), 0, &mut expected).unwrap();
    assert_eq!(words, expected);
    let mut expected = [0f32; 3];
    uniform_f32(&PhiloxState::new(3955, 12), 0, &mut expected).unwrap();
    assert_eq!(floats, expected);
    assert_eq!(t.state("model-parallel-rng").unwrap(), PhiloxState::new(3955, 16));
    assert_eq!(t.uniform_f32(&mut floats).unwrap(), PhiloxState::new(1234, 0));
    assert_eq!(t.active_state(), PhiloxState::new(1234, 4));
}

#[test]
fn stream_errors() {
    let mut out = [0u32; 2];
    assert_eq!(random_u32(&PhiloxState::new(1, 2), 0, &mut out).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(random_u32(&PhiloxState::new(1, 0), M64, &mut out).unwrap_err().kind(), ErrorKind::Overflow);
    random_u32(&PhiloxState::new(1, 0), M64, &mut out[..1]).unwrap(); // the last index there is
    random_u32(&PhiloxState::new(1, 0), 0, &mut []).unwrap();
}

#[test]
fn save_and_load() {
    let mut t = megatron();
    t.fork("model-parallel-rng").unwrap().advance(37).unwrap();
    let bytes = t.save().unwrap();
    assert_eq!(&bytes[..8], b"RNGTRKCK");
    let mut resumed = Tracker::new().unwrap();
    resumed.load(&bytes, &LoadOptions::new()).unwrap();
    assert_eq!(resumed.save().unwrap(), bytes);
    assert_eq!(resumed.states().unwrap(), t.states().unwrap());
    let before = snapshot(&resumed);
    assert_eq!(resumed.load(&[], &LoadOptions::new()).unwrap_err().kind(), ErrorKind::Corrupt);
    assert_eq!(resumed.load(&bytes[..bytes.len() - 1], &LoadOptions::new()).unwrap_err().kind(), ErrorKind::Corrupt);
    assert_eq!(snapshot(&resumed), before);
}

#[test]
fn trackers_move_between_threads_and_share_for_reading() {
    let t = megatron();
    let t = std::thread::spawn(move || {
        let mut t = t;
        t.advance(8).unwrap();
        t
    })
    .join()
    .unwrap();
    assert_eq!(t.default_state(), PhiloxState::new(1234, 8));
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    assert_eq!(t.state("model-parallel-rng").unwrap(), PhiloxState::new(3955, 0));
                    assert_eq!(t.save().unwrap().len(), t.save().unwrap().len());
                }
            });
        }
    });
}

#[test]
fn debug_output_names_the_states() {
    let text = format!("{:?}", megatron());
    assert!(text.contains("model-parallel-rng") && text.contains("3955"));
}

#[test]
fn version_is_the_headers() {
    assert_eq!(rngtrk::version_number(), rngtrk::sys::RNGTRK_VERSION_NUMBER);
    assert_eq!(rngtrk::version_string(), env!("CARGO_PKG_VERSION"));
}

#[test]
fn bad_inputs_from_rust_return_errors_and_change_nothing() {
    // The Rust rows of docs/errors.md: NULL handles, use after free, double
    // close and restoring twice cannot be written (ownership and borrows);
    // the rest are values the library refuses.
    let mut t = megatron();
    let before = snapshot(&t);
    let long = "n".repeat(256);
    for name in ["", long.as_str(), "nul\0inside"] {
        assert_eq!(t.add(name, 99).unwrap_err().kind(), ErrorKind::InvalidArgument);
        assert_eq!(t.fork(name).unwrap_err().kind(), ErrorKind::InvalidArgument);
    }
    assert_eq!(
        t.set_state("data-parallel-rng", PhiloxState::new(1, M64 - 2)).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(t.load(b"RNGTRKCK", &LoadOptions::new()).unwrap_err().kind(), ErrorKind::Corrupt);
    assert_eq!(snapshot(&t), before);
    let mut out = [0u32; 2];
    assert_eq!(random_u32(&PhiloxState::new(1, 0), M64, &mut out).unwrap_err().kind(), ErrorKind::Overflow);
    t.set_default_state(PhiloxState::new(5, M64 - 3)).unwrap();
    let before = snapshot(&t);
    assert_eq!(t.advance(1).unwrap_err().kind(), ErrorKind::Overflow);
    assert_eq!(snapshot(&t), before);
    let bytes = t.save().unwrap();
    let mut fork = t.fork("model-parallel-rng").unwrap();
    let before = snapshot(&fork);
    // Forking the open name again is allowed; restoring it leaves the outer fork as it was.
    fork.fork("model-parallel-rng").unwrap().restore().unwrap();
    assert_eq!(snapshot(&fork), before);
    drop(fork);
    t.load(&bytes, &LoadOptions::new()).unwrap();
}

#[test]
fn advanced_is_the_trackers_advance_and_refuses_as_it_does() {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for i in 0..100u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let state = PhiloxState::new(x, (x >> 14) * 4);
        let increment = if i < 12 { i } else { x >> 24 };
        let mut t = Tracker::new().unwrap();
        t.set_default_state(state).unwrap();
        t.advance(increment).unwrap();
        assert_eq!(state.advanced(increment).unwrap(), t.default_state());
    }
    let top = PhiloxState::new(1, u64::MAX - 7);
    assert_eq!(top.advanced(4).unwrap().offset, u64::MAX - 3);
    assert_eq!(top.advanced(5).unwrap_err().kind(), ErrorKind::Overflow);
    assert_eq!(PhiloxState::new(1, 6).advanced(4).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn the_trackers_last_error_is_readable_from_another_thread() {
    let mut t = Tracker::new().unwrap();
    assert_eq!(t.last_error(), "");
    let message = std::thread::scope(|s| {
        s.spawn(|| t.fork("not-added-on-that-thread").map(|_| ()).unwrap_err().message().to_string()).join().unwrap()
    });
    assert!(message.contains("not-added-on-that-thread"), "{}", message);
    assert_eq!(t.last_error(), message);
    t.add("fine", 1).unwrap();
    assert_eq!(t.last_error(), message);
}

#[test]
fn a_path_that_is_not_utf8_comes_back_escaped() {
    use std::os::unix::ffi::OsStrExt;
    let t = Tracker::new().unwrap();
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(b"/nonexistent-rngtrk/\xff\xfe.rtck"));
    let e = t.save_file(path).unwrap_err();
    assert!(e.message().contains("/nonexistent-rngtrk/\\xff\\xfe.rtck"), "{}", e.message());
    assert!(!e.message().contains('\u{fffd}'));
}
