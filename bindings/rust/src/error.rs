// SPDX-License-Identifier: Apache-2.0
//! Errors: the library's status code, its kind, and its message.
use std::ffi::CStr;
use std::fmt;

use crate::sys;

/// What went wrong, one variant per `rngtrk_status` error code.
///
/// `#[non_exhaustive]`: a later library may add codes; a code this crate does
/// not know is [`ErrorKind::Other`] (never undefined behaviour: the raw status
/// is an integer newtype, not a Rust enum).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// `RNGTRK_E_INVALID_ARGUMENT`: bad name, offset not a multiple of 4, ...
    InvalidArgument,
    /// `RNGTRK_E_DUPLICATE_NAME`: a named state with that name exists.
    DuplicateName,
    /// `RNGTRK_E_DUPLICATE_SEED`: another named state already uses that seed.
    DuplicateSeed,
    /// `RNGTRK_E_UNKNOWN_NAME`: no named state has that name.
    UnknownName,
    /// `RNGTRK_E_FORK_ORDER`: a restore of a fork that is not the innermost
    /// open one, or add/reset/set_states/load while a fork is open.
    ForkOrder,
    /// `RNGTRK_E_BUFFER_TOO_SMALL`: an output buffer cannot hold the result.
    BufferTooSmall,
    /// `RNGTRK_E_CORRUPT`: checkpoint bytes are damaged or malformed.
    Corrupt,
    /// `RNGTRK_E_UNSUPPORTED_VERSION`: a checkpoint format version this
    /// library does not read.
    UnsupportedVersion,
    /// `RNGTRK_E_OVERFLOW`: an offset, index or size would pass its range.
    Overflow,
    /// `RNGTRK_E_OUT_OF_MEMORY`: an allocation failed.
    OutOfMemory,
    /// `RNGTRK_E_UNAVAILABLE`: the feature is not available here.
    Unavailable,
    /// `RNGTRK_E_INTERNAL`: a bug in rngtrk.
    Internal,
    /// `RNGTRK_E_WRONG_RANK`: a checkpoint of a rank whose streams differ.
    WrongRank,
    /// `RNGTRK_E_IO`: a checkpoint file could not be read or written.
    Io,
    /// `RNGTRK_E_STREAM_REUSE`: the ledger refused numbers handed out already.
    StreamReuse,
    /// `RNGTRK_E_REPLAY_MISMATCH`: a replay drew differently from the forward.
    ReplayMismatch,
    /// A status code this crate does not know (from a newer library).
    Other,
}

impl ErrorKind {
    fn from_code(code: i32) -> ErrorKind {
        match sys::rngtrk_status(code) {
            sys::rngtrk_status::RNGTRK_E_INVALID_ARGUMENT => ErrorKind::InvalidArgument,
            sys::rngtrk_status::RNGTRK_E_DUPLICATE_NAME => ErrorKind::DuplicateName,
            sys::rngtrk_status::RNGTRK_E_DUPLICATE_SEED => ErrorKind::DuplicateSeed,
            sys::rngtrk_status::RNGTRK_E_UNKNOWN_NAME => ErrorKind::UnknownName,
            sys::rngtrk_status::RNGTRK_E_FORK_ORDER => ErrorKind::ForkOrder,
            sys::rngtrk_status::RNGTRK_E_BUFFER_TOO_SMALL => ErrorKind::BufferTooSmall,
            sys::rngtrk_status::RNGTRK_E_CORRUPT => ErrorKind::Corrupt,
            sys::rngtrk_status::RNGTRK_E_UNSUPPORTED_VERSION => ErrorKind::UnsupportedVersion,
            sys::rngtrk_status::RNGTRK_E_OVERFLOW => ErrorKind::Overflow,
            sys::rngtrk_status::RNGTRK_E_OUT_OF_MEMORY => ErrorKind::OutOfMemory,
            sys::rngtrk_status::RNGTRK_E_UNAVAILABLE => ErrorKind::Unavailable,
            sys::rngtrk_status::RNGTRK_E_INTERNAL => ErrorKind::Internal,
            sys::rngtrk_status::RNGTRK_E_WRONG_RANK => ErrorKind::WrongRank,
            sys::rngtrk_status::RNGTRK_E_IO => ErrorKind::Io,
            sys::rngtrk_status::RNGTRK_E_STREAM_REUSE => ErrorKind::StreamReuse,
            sys::rngtrk_status::RNGTRK_E_REPLAY_MISMATCH => ErrorKind::ReplayMismatch,
            _ => ErrorKind::Other,
        }
    }
}

/// An error from librngtrk (or refused by this crate before calling it):
/// the status code and the message, copied from `rngtrk_last_error()` at
/// once.  `Display` writes `"<status description>: <message>"`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    code: i32,
    message: String,
}

impl Error {
    /// The kind of error.
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::from_code(self.code)
    }

    /// The raw `rngtrk_status` value (negative).
    pub fn code(&self) -> i32 {
        self.code
    }

    /// The detail message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The error for a failed call: copies this thread's message right away.
    fn from_status(status: sys::rngtrk_status) -> Error {
        // SAFETY: rngtrk_last_error never returns NULL; the string is valid
        // until the next rngtrk call on this thread, and is copied here.
        let message = unsafe { CStr::from_ptr(sys::rngtrk_last_error()) };
        Error { code: status.0, message: message.to_string_lossy().into_owned() }
    }

    /// An `Overflow` error raised by this crate itself.
    pub(crate) fn overflow(message: String) -> Error {
        Error { code: sys::rngtrk_status::RNGTRK_E_OVERFLOW.0, message }
    }

    /// An `Unavailable` error raised by this crate itself (a loaded library
    /// of a version this crate does not serve).
    pub(crate) fn unavailable(message: String) -> Error {
        Error { code: sys::rngtrk_status::RNGTRK_E_UNAVAILABLE.0, message }
    }

    /// An `InvalidArgument` error raised by this crate itself.
    pub(crate) fn invalid(message: String) -> Error {
        Error { code: sys::rngtrk_status::RNGTRK_E_INVALID_ARGUMENT.0, message }
    }
}

impl fmt::Display for Error {
    /// `"<status description>: <message>"`, the status named once: some
    /// messages already start with it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = status_string(self.code);
        if self.message.starts_with(what) {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", what, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// The library's fixed description of a status code ("unknown status code"
/// for one it does not know).
pub fn status_string(code: i32) -> &'static str {
    // SAFETY: the library returns a static, NUL-terminated ASCII string for
    // every value, never NULL.
    unsafe { CStr::from_ptr(sys::rngtrk_status_string(sys::rngtrk_status(code))) }
        .to_str()
        .unwrap_or("unknown status code")
}

/// `Ok(())` for `RNGTRK_OK`, else the error with this thread's message.
#[inline]
pub(crate) fn check(status: sys::rngtrk_status) -> Result<(), Error> {
    if status == sys::rngtrk_status::RNGTRK_OK {
        Ok(())
    } else {
        Err(Error::from_status(status))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_status_code_has_its_kind_and_unknown_codes_are_other() {
        let kinds = [
            ErrorKind::InvalidArgument,
            ErrorKind::DuplicateName,
            ErrorKind::DuplicateSeed,
            ErrorKind::UnknownName,
            ErrorKind::ForkOrder,
            ErrorKind::BufferTooSmall,
            ErrorKind::Corrupt,
            ErrorKind::UnsupportedVersion,
            ErrorKind::Overflow,
            ErrorKind::OutOfMemory,
            ErrorKind::Unavailable,
            ErrorKind::Internal,
            ErrorKind::WrongRank,
            ErrorKind::Io,
            ErrorKind::StreamReuse,
            ErrorKind::ReplayMismatch,
        ];
        for (i, kind) in kinds.iter().enumerate() {
            let code = -(i as i32) - 1;
            let error = Error { code, message: "m".into() };
            assert_eq!(error.kind(), *kind, "code {}", code);
            assert_ne!(status_string(code), "unknown status code");
            assert_eq!(error.to_string(), format!("{}: m", status_string(code)));
        }
        assert_eq!(Error { code: -17, message: String::new() }.kind(), ErrorKind::Other);
        assert_eq!(Error { code: 1, message: String::new() }.kind(), ErrorKind::Other);
        assert_eq!(Error::invalid("x".into()).kind(), ErrorKind::InvalidArgument);
    }
}
