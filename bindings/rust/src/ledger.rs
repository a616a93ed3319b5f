// SPDX-License-Identifier: Apache-2.0
//! The reservation ledger (`docs/ledger.md`): catches reused random numbers
//! and proves that a recomputation replays the forward's draws exactly.
//!
//! ```
//! use rngtrk::{ErrorKind, LedgerMode, Tracker};
//! let mut t = Tracker::new()?;
//! t.add("model-parallel-rng", 3952)?;
//! t.set_ledger(LedgerMode::Raise, 0)?;
//! let start = t.states()?;
//! let mark = t.mark()?;
//! t.fork("model-parallel-rng")?.advance(4096)?;   // the forward
//! t.mark()?;                                        // the region ends
//! let after = t.states()?;
//! // Recompute: restore, replay, and the same draw passes...
//! let restore = |t: &mut Tracker, s: &[(String, rngtrk::PhiloxState)]| {
//!     let v: Vec<(&str, rngtrk::PhiloxState)> = s.iter().map(|(n, st)| (n.as_str(), *st)).collect();
//!     t.set_states(&v)
//! };
//! restore(&mut t, &start)?;
//! {
//!     let mut replay = t.replay(mark)?;
//!     replay.fork("model-parallel-rng")?.advance(4096)?;
//!     replay.end()?;
//! }
//! restore(&mut t, &after)?;
//! // ...while drawing the forward's numbers again outside a replay is refused.
//! restore(&mut t, &start)?;
//! let e = t.fork("model-parallel-rng")?.advance(8).unwrap_err();
//! assert_eq!(e.kind(), ErrorKind::StreamReuse);
//! # Ok::<(), rngtrk::Error>(())
//! ```
use std::ffi::CStr;

use crate::error::{check, Error};
use crate::sys;
use crate::tracker::Tracker;

/// What the ledger does with a reservation that overlaps an earlier one.
///
/// `#[non_exhaustive]`: it mirrors the C enum `rngtrk_ledger_mode`, which
/// the library may extend (see [`Layout`](crate::Layout)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LedgerMode {
    /// No ledger (the default): nothing recorded, no cost.
    Off,
    /// Refuse it with [`ErrorKind::StreamReuse`](crate::ErrorKind::StreamReuse); nothing changes.
    Raise,
    /// Hand it out and record the overlap ([`Tracker::ledger_overlaps`]).
    Record,
}

/// An overlap recorded in [`LedgerMode::Record`]: the later reservation's
/// state (`""` for the default state), the seed, and both offset ranges
/// `[begin, end)` with their sequence numbers (`earlier` is `None` when the
/// ledger's log no longer held it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LedgerOverlap {
    /// The later reservation's state.
    pub name: String,
    /// The seed both ranges are on.
    pub seed: u64,
    /// The earlier reservation: (begin, end, sequence).
    pub earlier: Option<(u64, u64, u64)>,
    /// The later reservation: (begin, end, sequence).
    pub later: (u64, u64, u64),
}

impl Tracker {
    /// Turns the ledger on (or off), empty; `capacity` (0: 2^20) bounds the
    /// reservations kept for replays.  The ledger survives `set_states`,
    /// `reset` and `load`, and is not written into checkpoints.
    pub fn set_ledger(&mut self, mode: LedgerMode, capacity: u64) -> Result<(), Error> {
        let mode = match mode {
            LedgerMode::Off => sys::rngtrk_ledger_mode_RNGTRK_LEDGER_OFF,
            LedgerMode::Raise => sys::rngtrk_ledger_mode_RNGTRK_LEDGER_RAISE,
            LedgerMode::Record => sys::rngtrk_ledger_mode_RNGTRK_LEDGER_RECORD,
        };
        // SAFETY: valid handle.
        check(unsafe { sys::rngtrk_tracker_set_ledger(self.raw_mut(), mode, capacity) })
    }

    /// A position in the ledger; a region runs from a mark to the next mark
    /// taken.  Errors: `InvalidArgument` (ledger off, a replay open).
    pub fn mark(&mut self) -> Result<u64, Error> {
        let mut out = 0u64;
        // SAFETY: valid handle and out-pointer.
        check(unsafe { sys::rngtrk_tracker_ledger_mark(self.raw_mut(), &mut out) })?;
        Ok(out)
    }

    /// Starts replaying the region of `mark`: while the guard lives, every
    /// reservation must equal the forward's, in order
    /// ([`ErrorKind::ReplayMismatch`](crate::ErrorKind::ReplayMismatch) at
    /// the first that differs).  [`ReplayGuard::end`] also fails if the
    /// replay drew less; dropping the guard ends the replay silently.
    pub fn replay(&mut self, mark: u64) -> Result<ReplayGuard<'_>, Error> {
        // SAFETY: valid handle.
        check(unsafe { sys::rngtrk_tracker_replay_begin(self.raw_mut(), mark) })?;
        Ok(ReplayGuard { tracker: self, open: true })
    }

    /// The ledger's position: the number of the next reservation, or during
    /// a replay the one the replay is at.  Takes no mark: no region ends
    /// there.  Errors: `InvalidArgument` (ledger off).
    pub fn ledger_position(&self) -> Result<u64, Error> {
        let mut out = 0u64;
        // SAFETY: valid handle and out-pointer.
        check(unsafe { sys::rngtrk_tracker_ledger_position(self.raw(), &mut out) })?;
        Ok(out)
    }

    /// Starts a replay that may stop early: while the guard lives, every
    /// reservation must equal, in order, the one recorded at the same place
    /// from `position` on, as far as the replay goes; [`ReplayGuard::end`]
    /// accepts fewer.  For recomputation whose region has no known end
    /// (docs/ledger.md).
    pub fn replay_prefix(&mut self, position: u64) -> Result<ReplayGuard<'_>, Error> {
        // SAFETY: valid handle.
        check(unsafe { sys::rngtrk_tracker_replay_prefix_begin(self.raw_mut(), position) })?;
        Ok(ReplayGuard { tracker: self, open: true })
    }

    /// The overlaps [`LedgerMode::Record`] recorded.
    pub fn ledger_overlaps(&self) -> Result<Vec<LedgerOverlap>, Error> {
        let mut count = 0usize;
        // SAFETY: a count query (NULL, capacity 0).
        let status = unsafe { sys::rngtrk_tracker_ledger_overlaps(self.raw(), std::ptr::null_mut(), 0, &mut count) };
        if status != sys::rngtrk_status::RNGTRK_E_BUFFER_TOO_SMALL {
            check(status)?;
        }
        // SAFETY: plain integers and a char array: zero is valid.
        let mut items: Vec<sys::rngtrk_overlap> = (0..count).map(|_| unsafe { std::mem::zeroed() }).collect();
        // SAFETY: `items` holds `count` structs.
        check(unsafe { sys::rngtrk_tracker_ledger_overlaps(self.raw(), items.as_mut_ptr(), count, &mut count) })?;
        Ok(items
            .iter()
            .take(count)
            .map(|o| LedgerOverlap {
                // SAFETY: the library NUL-terminates the name within the array.
                name: unsafe { CStr::from_ptr(o.name.as_ptr()) }.to_string_lossy().into_owned(),
                seed: o.seed,
                earlier: (o.earlier_known != 0).then_some((o.earlier_begin, o.earlier_end, o.earlier_sequence)),
                later: (o.later_begin, o.later_end, o.later_sequence),
            })
            .collect())
    }
}

/// An open replay ([`Tracker::replay`]): while it lives, the tracker is
/// reached only through it, as through a [`ForkGuard`](crate::ForkGuard):
/// reads through `Deref<Target = Tracker>`, and as its own methods the
/// calls a recomputation makes — `fork`, `advance`, the draws, `set_state`,
/// `manual_seed`.  [`ReplayGuard::end`] ends the replay and reports a short
/// one; dropping the guard ends it silently.
///
/// ```
/// # use rngtrk::{LedgerMode, PhiloxState, Tracker};
/// # let mut tracker = Tracker::new()?;
/// # tracker.add("model-parallel-rng", 3952)?;
/// # tracker.set_ledger(LedgerMode::Raise, 0)?;
/// let mark = tracker.mark()?;
/// tracker.fork("model-parallel-rng")?.advance(4096)?; // the forward
/// tracker.set_state("model-parallel-rng", PhiloxState::new(3952, 0))?; // rewound
/// let mut replay = tracker.replay(mark)?;
/// replay.fork("model-parallel-rng")?.advance(4096)?; // the recomputation
/// assert_eq!(replay.state("model-parallel-rng")?, PhiloxState::new(3952, 4096));
/// replay.end()?;
/// # Ok::<(), rngtrk::Error>(())
/// ```
///
/// It lends no `&mut Tracker`, so nothing can swap the replaying tracker
/// out from under it (the guard would then end another tracker's replay and
/// leave this one replaying), and `reset`, `load`, `add`, `set_states`,
/// `mark` and `set_ledger` do not compile while it lives.  Each of these is
/// rejected by the compiler:
///
/// ```compile_fail
/// # let mut tracker = rngtrk::Tracker::new()?;
/// # let mut other = rngtrk::Tracker::new()?;
/// let mut replay = tracker.replay(0)?;
/// std::mem::swap(&mut *replay, &mut other); // error: the guard lends no `&mut Tracker`
/// # Ok::<(), rngtrk::Error>(())
/// ```
///
/// ```compile_fail
/// # let mut tracker = rngtrk::Tracker::new()?;
/// let mut replay = tracker.replay(0)?;
/// replay.set_states(&[])?; // error: no `&mut Tracker` for `set_states` (nor reset, load, add, mark)
/// # Ok::<(), rngtrk::Error>(())
/// ```
///
/// ```compile_fail
/// # let mut tracker = rngtrk::Tracker::new()?;
/// let replay = tracker.replay(0)?;
/// tracker.advance(4)?; // error: `tracker` is mutably borrowed by `replay`
/// replay.end()?;
/// # Ok::<(), rngtrk::Error>(())
/// ```
pub struct ReplayGuard<'t> {
    pub(crate) tracker: &'t mut Tracker,
    open: bool,
}

impl ReplayGuard<'_> {
    /// Ends the replay; `ReplayMismatch` if a [`Tracker::replay`] drew less
    /// than the forward.
    pub fn end(mut self) -> Result<(), Error> {
        self.open = false;
        // SAFETY: valid handle.
        check(unsafe { sys::rngtrk_tracker_replay_end(self.tracker.raw_mut()) })
    }
}

impl Drop for ReplayGuard<'_> {
    fn drop(&mut self) {
        if self.open {
            // SAFETY: valid handle; Drop cannot report (use end()).
            let _ = unsafe { sys::rngtrk_tracker_replay_end(self.tracker.raw_mut()) };
        }
    }
}

impl std::fmt::Debug for ReplayGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayGuard").field("open", &self.open).field("tracker", &*self.tracker).finish()
    }
}
