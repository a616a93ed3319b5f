// SPDX-License-Identifier: Apache-2.0
//! `Tracker` and its fork guard.
use std::ffi::{CStr, CString};
use std::fmt;
use std::os::raw::c_char;
use std::ptr::{self, NonNull};

use crate::c_name::with_c_name;
use crate::error::{check, Error};
use crate::generation;
use crate::state::PhiloxState;
use crate::sys;

/// A name for a call that takes several at once (set_states).
fn c_string(name: &str) -> Result<CString, Error> {
    CString::new(name).map_err(|_| Error::invalid(format!("state name {:?} contains a NUL byte", name)))
}

pub(crate) fn path_to_c(path: &std::path::Path) -> Result<CString, Error> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::invalid(format!("path {:?} contains a NUL byte", path)))
}

/// Named Philox states: a default state, named states in insertion order
/// with distinct seeds, and a stack of forks (rules: `docs/tracker.md`).
///
/// Mutating calls take `&mut self`; reading calls take `&self` and may run
/// from several threads at once (see the `Sync` note in the source).
pub struct Tracker {
    handle: NonNull<sys::rngtrk_tracker>,
}

// SAFETY (Send): the C tracker is plain heap data owned by this handle, with
// no thread affinity and no thread-local parts; moving the owner to another
// thread moves nothing but the pointer.
unsafe impl Send for Tracker {}

// SAFETY (Sync), deliberate: every `&self` method calls only functions that
// take `const rngtrk_tracker *`, which rngtrk.h documents as safe to run
// concurrently with each other; every function that mutates the tracker
// needs `&mut self`, which Rust never hands out while a `&Tracker` is shared.
// The error message is thread-local in C, so concurrent failures do not mix.
unsafe impl Sync for Tracker {}

impl Tracker {
    /// A new tracker: default state (0, 0), no named states.
    ///
    /// Errors: `Unavailable` when the loaded librngtrk is a version this
    /// crate does not serve ([`crate::check_library_version`], checked once).
    pub fn new() -> Result<Tracker, Error> {
        crate::check_library_version()?;
        let mut raw = ptr::null_mut();
        // SAFETY: `raw` is a valid out-pointer.
        check(unsafe { sys::rngtrk_tracker_new(&mut raw) })?;
        Ok(Tracker { handle: NonNull::new(raw).expect("rngtrk_tracker_new returned OK and NULL") })
    }

    pub(crate) fn raw(&self) -> *const sys::rngtrk_tracker {
        self.handle.as_ptr()
    }

    pub(crate) fn raw_mut(&mut self) -> *mut sys::rngtrk_tracker {
        self.handle.as_ptr()
    }

    /// Registers the named state (seed, 0).  Errors: `DuplicateName`,
    /// `DuplicateSeed`, `InvalidArgument` (empty, longer than 255 bytes, NUL).
    /// A failed add changes nothing.
    pub fn add(&mut self, name: &str, seed: u64) -> Result<(), Error> {
        let t = self.raw_mut();
        // SAFETY: valid handle and NUL-terminated name for the call.
        check(with_c_name(name, |name| unsafe { sys::rngtrk_tracker_add(t, name, seed) })?)
    }

    /// Makes the named state active until the returned guard is dropped or
    /// [`ForkGuard::restore`]d.  While the guard lives, the tracker is
    /// reachable only through it (see the crate documentation).  A guard may
    /// fork a name that is already open (Megatron-LM's double fork): the
    /// state advances in place, so the nested fork continues that name's one
    /// stream and no number is drawn twice.  Errors: `UnknownName`.
    ///
    /// The guard keeps `name` to restore it, so the name must outlive the
    /// guard (a literal or a `String` that is still around).
    pub fn fork<'t>(&'t mut self, name: &'t str) -> Result<ForkGuard<'t>, Error> {
        ForkGuard::open(self, name)
    }

    /// The named state.  Errors: `UnknownName`, `InvalidArgument`.
    pub fn state(&self, name: &str) -> Result<PhiloxState, Error> {
        // SAFETY: valid handle, name and out-state for the call.
        with_c_name(name, |name| self.read(|t, out| unsafe { sys::rngtrk_tracker_get_state(t, name, out) }))?
    }

    /// Replaces the named state (allowed while it is forked).  Errors:
    /// `UnknownName`, `InvalidArgument` (offset not a multiple of 4),
    /// `DuplicateSeed`.
    pub fn set_state(&mut self, name: &str, state: PhiloxState) -> Result<(), Error> {
        let (t, c) = (self.raw_mut(), state.to_c());
        // SAFETY: valid handle, name and state for the call.
        check(with_c_name(name, |name| unsafe { sys::rngtrk_tracker_set_state(t, name, &c) })?)
    }

    /// Replaces all named states at once, in the given order; the default
    /// state is kept (TransformerEngine's `set_states`).  All or nothing.
    pub fn set_states(&mut self, states: &[(&str, PhiloxState)]) -> Result<(), Error> {
        let names = states.iter().map(|(n, _)| c_string(n)).collect::<Result<Vec<_>, _>>()?;
        let pointers: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let c_states: Vec<sys::rngtrk_philox_state> = states.iter().map(|(_, s)| s.to_c()).collect();
        // SAFETY: both arrays hold states.len() valid elements for the call.
        check(unsafe {
            sys::rngtrk_tracker_set_states(self.raw_mut(), pointers.as_ptr(), c_states.as_ptr(), states.len())
        })
    }

    /// Every named state with its name, in insertion order (TransformerEngine's
    /// `get_states`): a snapshot.
    pub fn states(&self) -> Result<Vec<(String, PhiloxState)>, Error> {
        self.names()?.into_iter().map(|n| self.state(&n).map(|s| (n, s))).collect()
    }

    /// The names of the named states, in insertion order.
    pub fn names(&self) -> Result<Vec<String>, Error> {
        (0..self.len())
            .map(|i| {
                let mut name: *const c_char = ptr::null();
                // SAFETY: valid handle and out-pointer; i < count.
                check(unsafe { sys::rngtrk_tracker_name_at(self.raw(), i, &mut name) })?;
                // SAFETY: the library returns a NUL-terminated UTF-8 name it
                // owns, valid while the tracker is not mutated (we hold &self).
                Ok(unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned())
            })
            .collect()
    }

    /// The number of named states.
    pub fn len(&self) -> usize {
        let mut n = 0;
        // SAFETY: valid handle and out-pointer; cannot fail with them.
        unsafe { sys::rngtrk_tracker_count(self.raw(), &mut n) };
        n
    }

    /// Whether there are no named states.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether a named state called `name` exists.
    pub fn contains(&self, name: &str) -> bool {
        self.state(name).is_ok()
    }

    /// The number of open forks.
    pub fn fork_depth(&self) -> usize {
        let mut n = 0;
        // SAFETY: valid handle and out-pointer; cannot fail with them.
        unsafe { sys::rngtrk_tracker_fork_depth(self.raw(), &mut n) };
        n
    }

    /// The message of the most recent failed call on this tracker, from
    /// whichever thread made it ("" if none failed yet): the text its
    /// [`Error`] carried.  Errors already carry their message; this is for
    /// code that learns of a failure some other way (a status passed
    /// between threads).
    pub fn last_error(&self) -> String {
        let mut buf = [0u8; sys::RNGTRK_ERROR_MESSAGE_CAPACITY as usize];
        let mut len = 0usize;
        // SAFETY: valid handle; the buffer holds any message with its NUL
        // (RNGTRK_ERROR_MESSAGE_CAPACITY), so the call cannot fail.
        unsafe { sys::rngtrk_tracker_last_error(self.raw(), buf.as_mut_ptr().cast(), buf.len(), &mut len) };
        // The library's messages are well-formed UTF-8.
        String::from_utf8_lossy(&buf[..len]).into_owned()
    }

    /// Drops every named state; the default becomes (0, 0).
    pub fn reset(&mut self) -> Result<(), Error> {
        // SAFETY: valid handle.
        check(unsafe { sys::rngtrk_tracker_reset(self.raw_mut()) })
    }

    /// Sets the default state to (seed, 0), like `torch.manual_seed`.
    pub fn manual_seed(&mut self, seed: u64) -> Result<(), Error> {
        // SAFETY: valid handle.
        check(unsafe { sys::rngtrk_tracker_manual_seed(self.raw_mut(), seed) })
    }

    /// The default state (active outside any fork).
    pub fn default_state(&self) -> PhiloxState {
        self.read(|t, out| unsafe { sys::rngtrk_tracker_get_default(t, out) })
            .expect("get_default cannot fail on a valid tracker")
    }

    /// Replaces the default state (e.g. by `torch.cuda.get_rng_state()`'s
    /// 16 bytes).  Errors: `InvalidArgument` (offset not a multiple of 4).
    pub fn set_default_state(&mut self, state: PhiloxState) -> Result<(), Error> {
        let c = state.to_c();
        // SAFETY: valid handle and state.
        check(unsafe { sys::rngtrk_tracker_set_default(self.raw_mut(), &c) })
    }

    /// The innermost forked state, or the default state outside any fork.
    pub fn active_state(&self) -> PhiloxState {
        self.read(|t, out| unsafe { sys::rngtrk_tracker_active_state(t, out) })
            .expect("active_state cannot fail on a valid tracker")
    }

    /// Reserves `increment` outputs of the active state; returns the state to
    /// draw them from.  The offset moves by `increment` rounded up to a
    /// multiple of 4.  Errors: `Overflow` (nothing changes).
    #[inline]
    pub fn advance(&mut self, increment: u64) -> Result<PhiloxState, Error> {
        let mut out = sys::rngtrk_philox_state { seed: 0, offset: 0 };
        // SAFETY: valid handle and out-pointer.
        check(unsafe { sys::rngtrk_tracker_advance(self.raw_mut(), increment, &mut out) })?;
        Ok(PhiloxState::from_c(out))
    }

    /// Reserves `out.len()` outputs of the active state and writes them into
    /// `out`; returns the state they were drawn from.
    pub fn random_u32(&mut self, out: &mut [u32]) -> Result<PhiloxState, Error> {
        let state = self.advance(out.len() as u64)?;
        generation::random_u32(&state, 0, out)?;
        Ok(state)
    }

    /// Like [`Tracker::random_u32`], as floats in [0, 1).
    pub fn uniform_f32(&mut self, out: &mut [f32]) -> Result<PhiloxState, Error> {
        let state = self.advance(out.len() as u64)?;
        generation::uniform_f32(&state, 0, out)?;
        Ok(state)
    }

    /// The checkpoint bytes (`docs/checkpoint-format.md`).
    pub fn save(&self) -> Result<Vec<u8>, Error> {
        let mut len = 0usize;
        // SAFETY: a size query: NULL buffer with capacity 0.
        check(unsafe { sys::rngtrk_tracker_save(self.raw(), ptr::null_mut(), 0, &mut len) })?;
        let mut bytes = vec![0u8; len];
        // SAFETY: `bytes` has room for `len` bytes.
        check(unsafe { sys::rngtrk_tracker_save(self.raw(), bytes.as_mut_ptr(), len, &mut len) })?;
        bytes.truncate(len);
        Ok(bytes)
    }

    /// Saves the checkpoint to `path` crash-safely (temporary file, fsync,
    /// rename, fsync of the folder): after a crash the file is the old
    /// checkpoint or the new one.  Errors: `Io`, `InvalidArgument`.
    pub fn save_file(&self, path: &std::path::Path) -> Result<(), Error> {
        let c = path_to_c(path)?;
        // SAFETY: valid handle and NUL-terminated path.
        check(unsafe { sys::rngtrk_tracker_save_file(self.raw(), c.as_ptr()) })
    }

    /// Runs a `const rngtrk_tracker *` getter with an out-state.
    fn read(
        &self,
        call: impl FnOnce(*const sys::rngtrk_tracker, *mut sys::rngtrk_philox_state) -> sys::rngtrk_status,
    ) -> Result<PhiloxState, Error> {
        let mut out = sys::rngtrk_philox_state { seed: 0, offset: 0 };
        check(call(self.raw(), &mut out))?;
        Ok(PhiloxState::from_c(out))
    }
}

impl Drop for Tracker {
    fn drop(&mut self) {
        // SAFETY: the handle came from rngtrk_tracker_new and is freed once.
        unsafe { sys::rngtrk_tracker_free(self.handle.as_ptr()) }
    }
}

impl fmt::Debug for Tracker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tracker")
            .field("default", &self.default_state())
            .field("states", &self.states().unwrap_or_default())
            .field("fork_depth", &self.fork_depth())
            .finish()
    }
}

/// An open fork: the named state is active while this guard lives.
///
/// Dropping the guard restores (also while a panic unwinds);
/// [`ForkGuard::restore`] restores and reports an error.  The guard holds
/// the tracker's only mutable borrow, so the tracker can be used only
/// through it: reads through `Deref`, and the calls allowed inside a fork
/// (`advance`, draws, `set_state`, `manual_seed`, a nested `fork`) as its
/// own methods.  A nested guard borrows this one, so forks close innermost
/// first by construction.
pub struct ForkGuard<'t> {
    pub(crate) tracker: &'t mut Tracker,
    name: &'t str,
    open: bool,
}

impl<'t> ForkGuard<'t> {
    pub(crate) fn open(tracker: &'t mut Tracker, name: &'t str) -> Result<ForkGuard<'t>, Error> {
        let t = tracker.raw_mut();
        // SAFETY: valid handle and name.
        check(with_c_name(name, |c| unsafe { sys::rngtrk_tracker_fork(t, c) })?)?;
        Ok(ForkGuard { tracker, name, open: true })
    }

    fn close(&mut self) -> Result<(), Error> {
        self.open = false;
        let t = self.tracker.raw_mut();
        // SAFETY: valid handle and name.
        check(with_c_name(self.name, |c| unsafe { sys::rngtrk_tracker_restore(t, c) })?)
    }

    /// The forked state's name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// Closes the fork now and reports whether the library accepted it
    /// (it refuses only if a nested guard was leaked with `mem::forget`).
    pub fn restore(mut self) -> Result<(), Error> {
        self.close()
    }
}

impl Drop for ForkGuard<'_> {
    fn drop(&mut self) {
        if self.open {
            // Drop cannot report: use restore() to see an error.  The only
            // failure is a leaked inner guard, whose fork is still open.
            let _ = self.close();
        }
    }
}

impl fmt::Debug for ForkGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ForkGuard").field("name", &self.name()).field("tracker", &*self.tracker).finish()
    }
}
