// SPDX-License-Identifier: Apache-2.0
//! Checkpoint bytes as canonical JSON, the one format every tool prints.
use std::os::raw::c_char;

use crate::error::{check, Error};
use crate::sys;

/// Runs `call(dst, capacity, out_len)` as a size query, then for the text.
fn text(call: impl Fn(*mut c_char, usize, *mut usize) -> sys::rngtrk_status) -> Result<String, Error> {
    let mut len = 0usize;
    check(call(std::ptr::null_mut(), 0, &mut len))?;
    let mut buf = vec![0u8; len + 1];
    check(call(buf.as_mut_ptr().cast(), buf.len(), &mut len))?;
    buf.truncate(len);
    // The library writes UTF-8 (names are validated UTF-8, the rest ASCII).
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The canonical JSON line (without newline) of checkpoint bytes:
/// `{"format_version": N, "default": {"seed": S, "offset": O}, "states":
/// [{"name": "...", "seed": S, "offset": O}, ...]}`, keys in that order,
/// states in stored order, and for a version-2 or -3 checkpoint, last,
/// `"origin": {"policy": "megatron", "seed": S, "flags": [...], "rank":
/// {"tp": T, "pp": P, "dp": D, "ep": E, "etp": F}}` (version 3 adds
/// `"gtp_remat"`, `"gtp_remat_size"`, `"egtp_remat"` and `"egtp_remat_size"`
/// to `"rank"`).  The library writes it
/// (`rngtrk_checkpoint_json`), so it is byte for byte what `rngtrk inspect`
/// (C) and `python3 -m rngtrk inspect` print; damaged bytes give the
/// library's usual error.
pub fn checkpoint_to_json(bytes: &[u8]) -> Result<String, Error> {
    crate::check_library_version()?;
    // SAFETY: `bytes` is valid for its length; the library writes at most
    // `capacity` bytes to `dst` and one usize to `out_len`.
    text(|dst, capacity, out_len| unsafe {
        sys::rngtrk_checkpoint_json(bytes.as_ptr(), bytes.len(), dst, capacity, out_len)
    })
}

/// The canonical JSON line of the checkpoint file at `path`, read header
/// first (a foreign file is refused before the rest is read).  The error's
/// message names the file and what is wrong with it.
pub fn checkpoint_file_to_json(path: &str) -> Result<String, Error> {
    crate::check_library_version()?;
    let path = std::ffi::CString::new(path).map_err(|_| Error::invalid("the path contains a NUL byte".to_string()))?;
    // SAFETY: a NUL-terminated path; the library writes at most `capacity`
    // bytes to `dst` and one usize to `out_len`.
    text(|dst, capacity, out_len| unsafe { sys::rngtrk_checkpoint_file_json(path.as_ptr(), dst, capacity, out_len) })
}
