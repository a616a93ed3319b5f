// SPDX-License-Identifier: Apache-2.0
//! Named Philox4x32-10 random-number states for distributed training.
//!
//! This crate is the Rust face of `librngtrk`, the C library that Python
//! (cffi) and C programs use too: one shared object, one definition.
//!
//! * A [`PhiloxState`] is 16 bytes, seed (u64 LE) then offset (u64 LE): the
//!   layout of `torch.cuda.get_rng_state()`.
//! * A [`Tracker`] holds a default state and named states (TransformerEngine's
//!   and Megatron-LM's `CudaRNGStatesTracker`: `add`, `fork`, get/set states,
//!   `reset`, checkpoint bytes), with distinct seeds.
//! * Generation ([`random_u32`], [`uniform_f32`]) is a pure function of
//!   (seed, offset, element index), so every slice of a tensor's random
//!   numbers can be made anywhere and equals the slice of the whole.
//! * Names of layouts, distributions, dtypes and seeding policies are the
//!   library's (`rngtrk_*_name`, `rngtrk_*_from_name`): this crate keeps no
//!   list of them, and an unknown name is the library's error.
//!
//! ```
//! use rngtrk::{LoadOptions, PhiloxState, Tracker};
//!
//! let mut tracker = Tracker::new()?;
//! tracker.manual_seed(1234)?;
//! tracker.add("model-parallel-rng", 1234 + 2718)?;
//! let mut mask = [0f32; 16];
//! {
//!     let mut fork = tracker.fork("model-parallel-rng")?;
//!     let drawn_from = fork.uniform_f32(&mut mask)?; // reserves 16 numbers
//!     assert_eq!(drawn_from, PhiloxState::new(3952, 0));
//! } // the fork is restored here, also if the block panics
//! assert_eq!(tracker.state("model-parallel-rng")?, PhiloxState::new(3952, 16));
//! let checkpoint = tracker.save()?;
//! let mut resumed = Tracker::new()?;
//! resumed.load(&checkpoint, &LoadOptions::new())?;
//! assert_eq!(resumed.states()?, tracker.states()?);
//! # Ok::<(), rngtrk::Error>(())
//! ```
//!
//! # Forks and the borrow checker
//!
//! [`Tracker::fork`] takes `&mut self` and returns a [`ForkGuard`] that holds
//! that mutable borrow until it ends.  So while a fork is open:
//!
//! * the tracker cannot be named directly: every use goes through the guard;
//! * the guard offers reads (through `Deref<Target = Tracker>`) and exactly the
//!   calls that are legal inside a fork — [`ForkGuard::advance`], the draws,
//!   [`ForkGuard::set_state`], [`ForkGuard::manual_seed`] and a nested
//!   [`ForkGuard::fork`].  `reset` and `load`, which the library refuses
//!   inside a fork, do not compile there, nor do `add` and `set_states`,
//!   which the library allows inside forks for Megatron-LM's sake (the C
//!   and Python APIs offer them): the guard keeps the set of names fixed
//!   while it lives, which is simpler to reason about; and since the guard
//!   gives out no `&mut Tracker`, the tracker cannot be swapped or replaced
//!   under it;
//! * a nested guard mutably borrows the outer guard, so the outer one can be
//!   neither used nor restored until the inner one has ended: restoring out
//!   of order does not compile.
//!
//! This compiles: forks closed innermost first, the tracker used again after.
//!
//! ```
//! # let mut tracker = rngtrk::Tracker::new()?;
//! # tracker.add("model-parallel-rng", 1)?;
//! # tracker.add("data-parallel-rng", 2)?;
//! let mut outer = tracker.fork("model-parallel-rng")?;
//! let mut inner = outer.fork("data-parallel-rng")?;
//! inner.advance(4)?;
//! inner.restore()?;
//! outer.restore()?;
//! tracker.advance(4)?;
//! tracker.add("late", 7)?;
//! # Ok::<(), rngtrk::Error>(())
//! ```
//!
//! Each of these, the same with one misuse, is rejected by the compiler (the
//! doc tests check it):
//!
//! ```compile_fail
//! # let mut tracker = rngtrk::Tracker::new()?;
//! let mut outer = tracker.fork("model-parallel-rng")?;
//! let inner = outer.fork("data-parallel-rng")?;
//! outer.restore()?; // error: `outer` is still borrowed by `inner`
//! inner.restore()?;
//! # Ok::<(), rngtrk::Error>(())
//! ```
//!
//! ```compile_fail
//! # let mut tracker = rngtrk::Tracker::new()?;
//! let mut fork = tracker.fork("model-parallel-rng")?;
//! fork.add("late", 7)?; // error: a guard has no `add` (nor reset, set_states, load)
//! # Ok::<(), rngtrk::Error>(())
//! ```
//!
//! ```compile_fail
//! # let mut tracker = rngtrk::Tracker::new()?;
//! let fork = tracker.fork("model-parallel-rng")?;
//! tracker.advance(4)?; // error: `tracker` is mutably borrowed by `fork`
//! drop(fork);
//! # Ok::<(), rngtrk::Error>(())
//! ```
//!
//! ```compile_fail
//! # let mut tracker = rngtrk::Tracker::new()?;
//! # let mut other = rngtrk::Tracker::new()?;
//! let mut fork = tracker.fork("model-parallel-rng")?;
//! std::mem::swap(&mut *fork, &mut other); // error: the guard lends no `&mut Tracker`
//! # Ok::<(), rngtrk::Error>(())
//! ```
//!
//! Dropping a guard restores its fork, also while a panic unwinds;
//! [`ForkGuard::restore`] does the same and returns the library's verdict.
//!
//! A [`ReplayGuard`] ([`Tracker::replay`]) follows the same rule with the
//! same calls: it lends no `&mut Tracker` either (its documentation shows
//! what does not compile, and why).
//!
//! A guard may fork a name that is already open (Megatron-LM's double fork):
//! forked states advance in place, so the nested fork continues that name's
//! one stream.
//!
//! What the types do not prevent (the library still refuses each at run time
//! with an [`Error`], changing nothing): an unknown name (`UnknownName`), and
//! leaking a guard with `std::mem::forget`, which leaves its fork open — the
//! tracker then answers `ForkOrder` to `reset`, `load`, a `set_states` that
//! drops the open fork's name, and the outer guard's `restore`.  None of these is undefined behaviour.
//!
//! # Threads
//!
//! `Tracker` is `Send` and `Sync`: calls that change it need `&mut`, and the
//! C functions behind `&self` calls are documented as safe to run
//! concurrently.  Errors carry their message, copied from the thread-local
//! `rngtrk_last_error()` right after the failing call.
//!
//! # Linking
//!
//! rngtrk-sys's `build.rs` links `librngtrk` from `RNGTRK_LIB_DIR`, else
//! from what `pkg-config rngtrk` answers (when its version is one this
//! crate serves), else from the repository's `build/` folder (after
//! `make`), else it builds the library from its C++ sources and links it
//! statically; the `bundled` feature always does the last.  A shared
//! library's folder goes into this crate's tests' and examples' run path.
//! The loaded library's version is checked once, before the first
//! [`Tracker`] ([`check_library_version`]).  Details: docs/rust.md.
#![warn(missing_docs)]

#[macro_use]
mod names;
mod c_name;
mod checkpoint_json;
pub mod cuda;
mod distributed;
mod error;
mod generation;
mod guards;
mod ledger;
mod load;
mod sampling;
mod state;
mod tracker;
mod tracker_draws;

/// The raw declarations (the rngtrk-sys crate), for what the safe API does
/// not cover.
pub use rngtrk_sys as sys;

use std::ffi::CStr;

pub use checkpoint_json::{checkpoint_file_to_json, checkpoint_to_json};
pub use distributed::{
    dtensor_local_box, dtensor_offsets, MeshPlacement, OffsetRule, Origin, ParallelRank, Placement, SeedFlags,
    SeedPolicy,
};
pub use error::{status_string, Error, ErrorKind};
pub use generation::{philox4x32_10, random_u32, uniform_f32};
pub use ledger::{LedgerMode, LedgerOverlap, ReplayGuard};
pub use load::{CheckpointSource, LoadOptions};
pub use sampling::{
    cpu_path, dropout, dropout_in_place, dropout_slice, dropout_slice_in_place, sample, sample_slice, BF16Bits,
    Distribution, DropoutElement, Dtype, Element, F16Bits, Layout, SampleSpec,
};
pub use state::PhiloxState;
pub use tracker::{ForkGuard, Tracker};

/// The loaded library's version, `MAJOR*10000 + MINOR*100 + PATCH`
/// (compare with [`sys::RNGTRK_VERSION_NUMBER`], the header's).
pub fn version_number() -> u32 {
    // SAFETY: no arguments, no failure.
    unsafe { sys::rngtrk_version_number() }
}

/// The loaded library's version, `"MAJOR.MINOR.PATCH"`.
pub fn version_string() -> &'static str {
    // SAFETY: the library returns a static NUL-terminated ASCII string.
    unsafe { CStr::from_ptr(sys::rngtrk_version_string()) }.to_str().unwrap_or("?")
}

/// The header this crate's declarations were generated from (rngtrk-sys's
/// `RNGTRK_VERSION_*`, as bindgen gave them).
const HEADER_VERSION: sys::version_rule::Version =
    (sys::RNGTRK_VERSION_MAJOR, sys::RNGTRK_VERSION_MINOR, sys::RNGTRK_VERSION_PATCH);

/// Whether the loaded librngtrk serves this crate, by the rule of the
/// Python binding (`sys::version_rule`): the same major version, and a
/// minor at least the header's (the same minor while the major is 0).
/// Checked once, before the first call that reaches the library and can
/// fail: [`Tracker::new`], the free functions that draw ([`sample`],
/// [`dropout`], [`uniform_f32`], the [`cuda`] calls, ...), read checkpoints
/// ([`checkpoint_to_json`]), place DTensor shards or look a name up
/// ([`Distribution::from_name`], ...) return this error
/// ([`ErrorKind::Unavailable`], naming both versions) when the library is
/// another.  The calls that cannot fail ([`version_number`],
/// [`version_string`], [`cpu_path`], names of values) are not checked.
/// Call it yourself to check earlier.
pub fn check_library_version() -> Result<(), Error> {
    static CHECK: std::sync::Once = std::sync::Once::new();
    static COMPATIBLE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    CHECK.call_once(|| {
        let compatible = library_version_verdict(version_number(), HEADER_VERSION).is_ok();
        COMPATIBLE.store(compatible, std::sync::atomic::Ordering::Release);
    });
    if COMPATIBLE.load(std::sync::atomic::Ordering::Acquire) {
        Ok(())
    } else {
        library_version_verdict(version_number(), HEADER_VERSION)
    }
}

/// The verdict on a library reporting `library_number` for declarations
/// generated from `header`.
fn library_version_verdict(library_number: u32, header: sys::version_rule::Version) -> Result<(), Error> {
    if sys::version_rule::is_compatible(library_number, header) {
        return Ok(());
    }
    Err(Error::unavailable(format!(
        "the loaded librngtrk is {}, but this crate was generated from rngtrk.h {}.{}.{} and needs librngtrk {}: \
         link a matching library (RNGTRK_LIB_DIR or pkg-config when building, the run path or LD_LIBRARY_PATH \
         when running) or build with the `bundled` feature",
        sys::version_rule::format(library_number),
        header.0,
        header.1,
        header.2,
        sys::version_rule::describe_range(header)
    )))
}

#[cfg(test)]
mod version_tests {
    use super::*;

    #[test]
    fn the_linked_library_passes() {
        assert_eq!(check_library_version(), Ok(()));
        assert_eq!(check_library_version(), Ok(()));
    }

    #[test]
    fn another_library_is_refused() {
        assert_eq!(library_version_verdict(101, (0, 1, 0)), Ok(()));
        assert_eq!(library_version_verdict(10300, (1, 2, 0)), Ok(()));
        for (library, header) in [(200, (0, 1, 0)), (10100, (0, 1, 0)), (10100, (1, 2, 0)), (20200, (1, 2, 0))] {
            let error = library_version_verdict(library, header).unwrap_err();
            assert_eq!(error.kind(), ErrorKind::Unavailable);
            assert!(error.message().contains(&sys::version_rule::format(library)), "{}", error);
            assert!(error.message().contains(&sys::version_rule::describe_range(header)), "{}", error);
        }
    }
}
