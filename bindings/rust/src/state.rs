// SPDX-License-Identifier: Apache-2.0
//! `PhiloxState` and its 16-byte form.
use crate::sys;

/// A Philox4x32-10 state: the key (`seed`) and the stream position
/// (`offset`, in 32-bit outputs, as PyTorch counts it; the tracker and the
/// stream functions require a multiple of 4).
///
/// The 16-byte form is seed (u64 little-endian) then offset (u64 LE): the
/// layout of `torch.cuda.get_rng_state()`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PhiloxState {
    /// The key: Philox's two key words are its low and high 32 bits.
    pub seed: u64,
    /// The position in the stream, in 32-bit outputs.
    pub offset: u64,
}

impl PhiloxState {
    /// A state from its two fields.
    pub const fn new(seed: u64, offset: u64) -> PhiloxState {
        PhiloxState { seed, offset }
    }

    /// The 16-byte form, through the library's codec (one definition for
    /// every language).
    pub fn to_bytes(&self) -> [u8; 16] {
        let mut out = [0u8; 16];
        let c = self.to_c();
        // SAFETY: both pointers are valid for the call; with valid pointers
        // the function cannot fail.
        let status = unsafe { sys::rngtrk_state_to_bytes(&c, out.as_mut_ptr()) };
        debug_assert_eq!(status, sys::rngtrk_status::RNGTRK_OK);
        out
    }

    /// Reads the 16-byte form (any 16 bytes decode; the offset is checked
    /// where a state is used).
    pub fn from_bytes(bytes: &[u8; 16]) -> PhiloxState {
        let mut out = sys::rngtrk_philox_state { seed: 0, offset: 0 };
        // SAFETY: both pointers are valid; the function cannot fail with them.
        let status = unsafe { sys::rngtrk_state_from_bytes(bytes.as_ptr(), &mut out) };
        debug_assert_eq!(status, sys::rngtrk_status::RNGTRK_OK);
        PhiloxState::from_c(out)
    }

    /// This state moved past `increment` 32-bit outputs, rounded up to a
    /// whole block of 4: what a draw of that many outputs does to it
    /// (`rngtrk_state_advance`).  An offset that is not a multiple of 4 is
    /// `InvalidArgument`; one that would pass 2^64 - 1 is `Overflow`.
    pub fn advanced(&self, increment: u64) -> Result<PhiloxState, crate::Error> {
        let c = self.to_c();
        let mut out = sys::rngtrk_philox_state { seed: 0, offset: 0 };
        // SAFETY: both pointers are valid for the call.
        crate::error::check(unsafe { sys::rngtrk_state_advance(&c, increment, &mut out) })?;
        Ok(PhiloxState::from_c(out))
    }

    pub(crate) fn to_c(self) -> sys::rngtrk_philox_state {
        sys::rngtrk_philox_state { seed: self.seed, offset: self.offset }
    }

    pub(crate) fn from_c(c: sys::rngtrk_philox_state) -> PhiloxState {
        PhiloxState { seed: c.seed, offset: c.offset }
    }
}
