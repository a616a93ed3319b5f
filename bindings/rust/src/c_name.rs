// SPDX-License-Identifier: Apache-2.0
//! State names as the C layer takes them (NUL-terminated), made on the
//! stack for every name the library can accept: a fork, a restore or a
//! get_state is a hot call in a training step, and should not allocate.
use std::ffi::CString;
use std::mem::MaybeUninit;
use std::os::raw::c_char;

use crate::error::Error;
use crate::sys;

const INLINE: usize = sys::RNGTRK_MAX_NAME_BYTES as usize + 1;

/// Runs `call` with `name` NUL-terminated.  The library checks length,
/// emptiness and UTF-8 (a `&str` is UTF-8 already); an interior NUL is the
/// one thing C could not see, refused here.  A name past the library's
/// 255-byte limit goes through the heap, so that the library refuses it
/// with its own message.
#[inline]
pub(crate) fn with_c_name<R>(name: &str, call: impl FnOnce(*const c_char) -> R) -> Result<R, Error> {
    if name.as_bytes().contains(&0) {
        return Err(Error::invalid(format!("state name {:?} contains a NUL byte", name)));
    }
    if name.len() >= INLINE {
        let heap = CString::new(name).expect("checked for NUL above");
        return Ok(call(heap.as_ptr()));
    }
    let mut buffer = MaybeUninit::<[u8; INLINE]>::uninit();
    let p = buffer.as_mut_ptr().cast::<u8>();
    // SAFETY: name.len() + 1 <= INLINE bytes are written, then read by C
    // only up to the NUL; the buffer outlives the call.
    unsafe {
        std::ptr::copy_nonoverlapping(name.as_ptr(), p, name.len());
        *p.add(name.len()) = 0;
    }
    Ok(call(p.cast::<c_char>()))
}
