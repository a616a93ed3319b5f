// SPDX-License-Identifier: Apache-2.0
//! Generation into slices: a pure function of (seed, offset, element index).
use crate::error::{check, Error};
use crate::state::PhiloxState;
use crate::sys;

/// Writes elements `first .. first + out.len()` of the stream of `state`
/// into `out`.  Element g is word g % 4 of Philox4x32-10(key = (lo32(seed),
/// hi32(seed)), counter = (lo32(b), hi32(b), 0, 0)), b = offset/4 + g/4:
/// any slice equals the same slice of the whole stream.
///
/// Errors: `InvalidArgument` (offset not a multiple of 4), `Overflow`
/// (first + len > 2^64).
pub fn random_u32(state: &PhiloxState, first: u64, out: &mut [u32]) -> Result<(), Error> {
    crate::check_library_version()?;
    let c = state.to_c();
    // SAFETY: `out` is valid for out.len() writes; `c` outlives the call.
    check(unsafe { sys::rngtrk_random_u32(&c, first, out.len() as u64, out.as_mut_ptr()) })
}

/// Like [`random_u32`], as floats in [0, 1): `(w & 0xFFFFFF) * 2^-24` for
/// each stream word `w`, exact on every platform.
pub fn uniform_f32(state: &PhiloxState, first: u64, out: &mut [f32]) -> Result<(), Error> {
    crate::check_library_version()?;
    let c = state.to_c();
    // SAFETY: as in random_u32.
    check(unsafe { sys::rngtrk_uniform_f32(&c, first, out.len() as u64, out.as_mut_ptr()) })
}

/// The Philox4x32-10 bijection (Random123): four output words for a
/// 128-bit counter and a 64-bit key.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut out = [0u32; 4];
    // SAFETY: the three arrays have the sizes the function reads and writes.
    unsafe { sys::rngtrk_philox4x32_10(counter.as_ptr(), key.as_ptr(), out.as_mut_ptr()) };
    out
}
