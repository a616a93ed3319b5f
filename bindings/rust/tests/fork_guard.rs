// SPDX-License-Identifier: Apache-2.0
//! The fork guard: restores on drop, on panic, and reports restore errors.
mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};

use rngtrk::{ErrorKind, LoadOptions, PhiloxState, Tracker};

fn two_states() -> Tracker {
    let mut t = Tracker::new().unwrap();
    t.manual_seed(7).unwrap();
    t.add("model-parallel-rng", 2725).unwrap();
    t.add("data-parallel-rng", 7).unwrap();
    t
}

#[test]
fn dropping_the_guard_restores_and_keeps_the_advance() {
    let mut t = two_states();
    {
        let mut fork = t.fork("model-parallel-rng").unwrap();
        assert_eq!(fork.name(), "model-parallel-rng");
        assert_eq!(fork.fork_depth(), 1);
        assert_eq!(fork.active_state(), PhiloxState::new(2725, 0));
        fork.advance(10).unwrap();
        assert_eq!(fork.state("model-parallel-rng").unwrap(), PhiloxState::new(2725, 12));
        // live
    }
    assert_eq!(t.fork_depth(), 0);
    assert_eq!(t.active_state(), PhiloxState::new(7, 0));
    assert_eq!(t.state("model-parallel-rng").unwrap(), PhiloxState::new(2725, 12));
}

#[test]
fn explicit_restore_returns_ok() {
    let mut t = two_states();
    let fork = t.fork("data-parallel-rng").unwrap();
    fork.restore().unwrap();
    assert_eq!(t.fork_depth(), 0);
}

#[test]
fn the_guard_restores_while_a_panic_unwinds() {
    let mut t = two_states();
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut fork = t.fork("model-parallel-rng").unwrap();
        fork.advance(4).unwrap();
        panic!("the forward pass failed");
    }));
    assert!(result.is_err());
    assert_eq!(t.fork_depth(), 0);
    assert_eq!(t.active_state(), PhiloxState::new(7, 0));
    assert_eq!(t.state("model-parallel-rng").unwrap(), PhiloxState::new(2725, 4));
}

#[test]
fn nested_guards_close_innermost_first() {
    let mut t = two_states();
    {
        let mut outer = t.fork("model-parallel-rng").unwrap();
        {
            let mut inner = outer.fork("data-parallel-rng").unwrap();
            assert_eq!(inner.fork_depth(), 2);
            inner.advance(1).unwrap();
        }
        assert_eq!(outer.active_state(), PhiloxState::new(2725, 0));
        outer.advance(8).unwrap();
    }
    assert_eq!(t.state("data-parallel-rng").unwrap(), PhiloxState::new(7, 4));
    assert_eq!(t.state("model-parallel-rng").unwrap(), PhiloxState::new(2725, 8));
}

#[test]
fn forking_an_open_name_continues_its_one_stream() {
    // Megatron-LM's double fork: mp, dp, mp again, then out; each name draws
    // one uninterrupted stream, and the ledger (raise) would refuse a reuse.
    let mut t = two_states();
    t.set_ledger(rngtrk::LedgerMode::Raise, 0).unwrap();
    let (mut mp, mut dp) = (Vec::new(), Vec::new());
    let mut words = [0u32; 8];
    {
        let mut a = t.fork("model-parallel-rng").unwrap();
        a.random_u32(&mut words).unwrap();
        mp.extend_from_slice(&words);
        {
            let mut b = a.fork("data-parallel-rng").unwrap();
            b.random_u32(&mut words).unwrap();
            dp.extend_from_slice(&words);
            {
                let mut again = b.fork("model-parallel-rng").unwrap(); // already open
                assert_eq!(again.fork_depth(), 3);
                assert_eq!(again.active_state(), PhiloxState::new(2725, 8));
                again.random_u32(&mut words).unwrap();
                mp.extend_from_slice(&words);
                again.restore().unwrap();
            }
            b.random_u32(&mut words).unwrap();
            dp.extend_from_slice(&words);
            b.restore().unwrap();
        }
        assert_eq!(a.active_state(), PhiloxState::new(2725, 16));
        a.random_u32(&mut words).unwrap();
        mp.extend_from_slice(&words);
        a.restore().unwrap();
    }
    let mut whole_mp = [0u32; 24];
    let mut whole_dp = [0u32; 16];
    rngtrk::random_u32(&PhiloxState::new(2725, 0), 0, &mut whole_mp).unwrap();
    rngtrk::random_u32(&PhiloxState::new(7, 0), 0, &mut whole_dp).unwrap();
    assert_eq!(mp, whole_mp);
    assert_eq!(dp, whole_dp);
    assert_eq!(t.state("model-parallel-rng").unwrap(), PhiloxState::new(2725, 24));
    assert_eq!(t.state("data-parallel-rng").unwrap(), PhiloxState::new(7, 16));
    assert_eq!(t.fork_depth(), 0);
}

#[test]
fn calls_allowed_inside_a_fork_work_through_the_guard() {
    let mut t = two_states();
    let mut fork = t.fork("model-parallel-rng").unwrap();
    fork.set_state("model-parallel-rng", PhiloxState::new(2725, 64)).unwrap();
    assert_eq!(fork.active_state(), PhiloxState::new(2725, 64));
    fork.manual_seed(99).unwrap();
    assert_eq!(fork.active_state(), PhiloxState::new(2725, 64));
    let mut words = [0u32; 4];
    assert_eq!(fork.random_u32(&mut words).unwrap(), PhiloxState::new(2725, 64));
    let mut copy = Tracker::new().unwrap();
    copy.load(&fork.save().unwrap(), &LoadOptions::new()).unwrap(); // save inside a fork records live values
    assert_eq!(copy.state("model-parallel-rng").unwrap(), PhiloxState::new(2725, 68));
    drop(fork);
    assert_eq!(t.active_state(), PhiloxState::new(99, 0));
}

#[test]
fn a_leaked_inner_guard_is_reported_by_the_outer_restore() {
    let mut t = two_states();
    let mut outer = t.fork("model-parallel-rng").unwrap();
    std::mem::forget(outer.fork("data-parallel-rng").unwrap());
    let error = outer.restore().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ForkOrder);
    assert!(error.message().contains("data-parallel-rng"));
    // The leaked fork is still open: the library refuses what a fork forbids,
    // and allows what Megatron-LM allows inside one (add).
    assert_eq!(t.fork_depth(), 2);
    assert_eq!(t.reset().unwrap_err().kind(), ErrorKind::ForkOrder);
    assert_eq!(t.set_states(&[]).unwrap_err().kind(), ErrorKind::ForkOrder);
    t.add("new", 1).unwrap();
    let bytes = t.save().unwrap();
    assert_eq!(t.load(&bytes, &LoadOptions::new()).unwrap_err().kind(), ErrorKind::ForkOrder);
}
