// SPDX-License-Identifier: Apache-2.0
//! The ledger from Rust: reuse refused (nothing moves) or recorded, a
//! divergent replay refused at the first difference, a short one at its end,
//! and the guard ending the replay when dropped.
mod common;

use rngtrk::{ErrorKind, LedgerMode, PhiloxState, SampleSpec, Tracker};

fn seeded(mode: LedgerMode) -> Tracker {
    let mut t = Tracker::new().unwrap();
    t.manual_seed(1234).unwrap();
    t.add("model-parallel-rng", 3952).unwrap();
    t.set_ledger(mode, 0).unwrap();
    t
}

/// Back to where `seeded` left the default and the model-parallel states.
fn rewind(t: &mut Tracker) {
    t.set_default_state(PhiloxState::new(1234, 0)).unwrap();
    t.set_state("model-parallel-rng", PhiloxState::new(3952, 0)).unwrap();
}

#[test]
fn reuse_is_refused_or_recorded() {
    let mut t = seeded(LedgerMode::Raise);
    t.advance(64).unwrap();
    t.set_default_state(PhiloxState::new(1234, 32)).unwrap();
    let before = common::snapshot(&t);
    let e = t.advance(8).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::StreamReuse);
    assert!(e.message().contains("[32, 40)") && e.message().contains("[0, 64)"), "{}", e);
    assert_eq!(common::snapshot(&t), before);

    let mut r = seeded(LedgerMode::Record);
    r.advance(64).unwrap();
    r.set_default_state(PhiloxState::new(1234, 32)).unwrap();
    r.advance(8).unwrap();
    let overlaps = r.ledger_overlaps().unwrap();
    assert_eq!(overlaps.len(), 1);
    assert_eq!((overlaps[0].seed, overlaps[0].earlier, overlaps[0].later), (1234, Some((0, 64, 0)), (32, 40, 1)));
    assert_eq!(overlaps[0].name, "");
}

#[test]
fn replays_must_equal_the_forward() {
    let mut t = seeded(LedgerMode::Raise);
    let mark = t.mark().unwrap();
    t.fork("model-parallel-rng").unwrap().advance(4096).unwrap();
    t.advance(100).unwrap();
    t.mark().unwrap();
    let end_state = (t.default_state(), t.state("model-parallel-rng").unwrap());
    // Faithful.
    rewind(&mut t);
    {
        let mut replay = t.replay(mark).unwrap();
        replay.fork("model-parallel-rng").unwrap().advance(4096).unwrap();
        replay.advance(100).unwrap();
        replay.end().unwrap();
    }
    // One number more: refused at that reservation.
    rewind(&mut t);
    {
        let mut replay = t.replay(mark).unwrap();
        let e = replay.fork("model-parallel-rng").unwrap().advance(4097).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ReplayMismatch);
        assert!(e.message().contains("expected state 'model-parallel-rng'"), "{}", e);
    } // dropped: the replay ends
      // A draw skipped: refused at the end.
    rewind(&mut t);
    let mut replay = t.replay(mark).unwrap();
    replay.fork("model-parallel-rng").unwrap().advance(4096).unwrap();
    assert_eq!(replay.end().unwrap_err().kind(), ErrorKind::ReplayMismatch);
    t.set_default_state(end_state.0).unwrap();
    t.set_state("model-parallel-rng", end_state.1).unwrap();
    assert_eq!(t.replay(mark + 100).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

/// What a replay guard allows: reads through `Deref`, forks, and every draw,
/// each drawing the forward's numbers again (the `compile_fail` doc tests on
/// `ReplayGuard` show what it refuses: any `&mut Tracker`).
#[test]
fn a_replay_guard_reads_forks_and_draws_the_forwards_numbers() {
    let mut t = seeded(LedgerMode::Raise);
    let bits = SampleSpec::bits();
    let mask = SampleSpec::bernoulli(0.5);
    let mark = t.mark().unwrap();
    // The forward.
    let (mut x, mut u, mut f, mut kept, mut tile) = ([0u32; 8], [0u32; 4], [0f32; 4], [0f32; 16], [0u64; 2]);
    t.random_u32(&mut u).unwrap();
    {
        let mut fork = t.fork("model-parallel-rng").unwrap();
        fork.sample(&bits, &mut x).unwrap();
        fork.uniform_f32(&mut f).unwrap();
        fork.dropout(&mask, &[1.0; 16], &mut kept).unwrap();
    }
    t.sample_slice(&bits, &[4, 4], &[1, 2], &[1, 2], &mut tile).unwrap();
    t.mark().unwrap();
    let forward_end = common::snapshot(&t);

    t.set_default_state(PhiloxState::new(1234, 0)).unwrap();
    t.set_state("model-parallel-rng", PhiloxState::new(3952, 0)).unwrap();
    let (mut x2, mut u2, mut f2, mut kept2, mut tile2) = ([0u32; 8], [0u32; 4], [0f32; 4], [1f32; 16], [0u64; 2]);
    {
        let mut replay = t.replay(mark).unwrap();
        assert_eq!(replay.active_state(), PhiloxState::new(1234, 0)); // reads
        replay.random_u32(&mut u2).unwrap();
        {
            let mut fork = replay.fork("model-parallel-rng").unwrap();
            assert_eq!(fork.fork_depth(), 1);
            fork.sample(&bits, &mut x2).unwrap();
            fork.uniform_f32(&mut f2).unwrap();
            fork.dropout_in_place(&mask, &mut kept2).unwrap();
        }
        replay.sample_slice(&bits, &[4, 4], &[1, 2], &[1, 2], &mut tile2).unwrap();
        assert_eq!(replay.fork_depth(), 0);
        replay.end().unwrap();
    }
    assert_eq!((x2, u2, f2, kept2, tile2), (x, u, f, kept, tile));
    assert_eq!(common::snapshot(&t), forward_end);

    // Inside a replay a draw the forward did not make is refused, and
    // nothing moves.
    t.set_default_state(PhiloxState::new(1234, 0)).unwrap();
    let mut replay = t.replay(mark).unwrap();
    let before = common::snapshot(&replay);
    let e = replay.sample(&bits, &mut [0u32; 5]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ReplayMismatch);
    assert_eq!(common::snapshot(&replay), before);
}

#[test]
fn a_position_ends_no_region_and_a_prefix_replay_may_stop_early() {
    let mut t = seeded(LedgerMode::Raise);
    let mark = t.mark().unwrap();
    t.fork("model-parallel-rng").unwrap().advance(4096).unwrap();
    let position = t.ledger_position().unwrap();
    assert_eq!(position, mark + 1);
    t.advance(100).unwrap();
    // The position ended no region: the mark's region holds both draws.
    rewind(&mut t);
    let mut replay = t.replay(mark).unwrap();
    replay.fork("model-parallel-rng").unwrap().advance(4096).unwrap();
    assert_eq!(replay.end().unwrap_err().kind(), ErrorKind::ReplayMismatch);
    // A prefix replay may stop early, but not differ.
    rewind(&mut t);
    let mut replay = t.replay_prefix(mark).unwrap();
    replay.fork("model-parallel-rng").unwrap().advance(4096).unwrap();
    replay.end().unwrap();
    rewind(&mut t);
    let mut replay = t.replay_prefix(position).unwrap();
    let e = replay.advance(104).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ReplayMismatch);
    assert!(e.message().contains("expected state '(default)' seed 1234 offsets [0, 100)"), "{}", e);
    drop(replay);
    assert_eq!(t.replay_prefix(position + 5).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(Tracker::new().unwrap().ledger_position().unwrap_err().kind(), ErrorKind::InvalidArgument);
}
