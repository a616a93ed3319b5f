// SPDX-License-Identifier: Apache-2.0
//! The names of C enum values, which only the library keeps.  Every name
//! this crate prints or parses — layouts, distributions, dtypes, seeding
//! policies, seeding flags — comes from an `rngtrk_*_name` function or goes
//! through an `rngtrk_*_from_name` one, so a name means the same in C,
//! Python and Rust, and an unknown one is refused with the library's own
//! message (which lists the names).  No list of names lives here.
use std::borrow::Cow;
use std::ffi::CStr;
use std::os::raw::{c_char, c_uint};

use crate::c_name::with_c_name;
use crate::error::{check, Error};
use crate::sys;

/// `rngtrk_layout_name` and its kin: the static name of a value, or NULL.
pub(crate) type NameFn = unsafe extern "C" fn(c_uint) -> *const c_char;

/// `rngtrk_layout_from_name` and its kin: the value called `name`, or
/// `RNGTRK_E_INVALID_ARGUMENT` with a message listing the names.
pub(crate) type FromNameFn = unsafe extern "C" fn(*const c_char, *mut c_uint) -> sys::rngtrk_status;

/// The library's name of `value`, or `None` for a value it does not know.
pub(crate) fn name_of(value: c_uint, name: NameFn) -> Option<&'static str> {
    // SAFETY: the name functions take any value and return NULL or a
    // static, NUL-terminated ASCII string.
    let p = unsafe { name(value) };
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL, static and NUL-terminated (above).
    unsafe { CStr::from_ptr(p) }.to_str().ok()
}

/// Every value the library names, in value order: rngtrk.h numbers them
/// from 0 without gaps, so the first value without a name ends the list.
pub(crate) fn values(name: NameFn) -> impl Iterator<Item = c_uint> {
    (0..).take_while(move |&v| name_of(v, name).is_some())
}

/// The value the library calls `name`; an unknown name is the library's
/// `InvalidArgument`, message and all.
///
/// C cannot see past a NUL byte, so a name holding one is looked up with
/// each NUL spelled `\0`: the library then refuses it in its own words,
/// showing the name as Rust's `{:?}` would.
pub(crate) fn value_named(name: &str, from_name: FromNameFn) -> Result<c_uint, Error> {
    crate::check_library_version()?;
    let spelled: Cow<'_, str> = if name.contains('\0') { name.replace('\0', "\\0").into() } else { name.into() };
    let mut out: c_uint = 0;
    // SAFETY: a NUL-terminated name and a valid out-pointer for the call.
    check(with_c_name(&spelled, |c| unsafe { from_name(c, &mut out) })?)?;
    if let Cow::Owned(_) = spelled {
        // Only if the library ever names a value with a backslash-zero.
        return Err(Error::invalid(format!("{:?} contains a NUL byte", name)));
    }
    Ok(out)
}

/// The methods of a Rust enum that mirrors a C enum without data, all from
/// one table of (variant, C constant): the value conversions, and the
/// names, which are the library's (`name`, `Display`, `from_name`,
/// `FromStr`, `all`).
macro_rules! library_named_enum {
    ($ty:ident, $what:literal, $name_fn:path, $from_name_fn:path, { $($variant:ident => $c:path),* $(,)? }) => {
        impl $ty {
            pub(crate) fn to_c(self) -> std::os::raw::c_uint {
                match self {
                    $($ty::$variant => $c,)*
                }
            }

            fn from_c(value: std::os::raw::c_uint) -> Option<$ty> {
                $(if value == $c {
                    return Some($ty::$variant);
                })*
                None
            }

            #[doc = concat!("The library's name of this ", $what, " (`rngtrk_", $what, "_name`), the one")]
            /// spelling every rngtrk tool and binding uses; `"?"` only if the
            /// loaded library is older than this crate and lacks the value.
            pub fn name(self) -> &'static str {
                crate::names::name_of(self.to_c(), $name_fn).unwrap_or("?")
            }

            #[doc = concat!("The ", $what, " the library calls `name` (`rngtrk_", $what, "_from_name`).")]
            /// Errors: the library's `InvalidArgument` for a name it does not
            /// know, whose message lists the names.
            pub fn from_name(name: &str) -> Result<$ty, crate::Error> {
                let value = crate::names::value_named(name, $from_name_fn)?;
                $ty::from_c(value).ok_or_else(|| {
                    crate::Error::invalid(format!(
                        concat!("the library's ", $what, " {:?} (value {}) is newer than this crate"),
                        name, value
                    ))
                })
            }

            #[doc = concat!("Every ", $what, " the library names, in value order.")]
            pub fn all() -> Vec<$ty> {
                crate::names::values($name_fn).filter_map($ty::from_c).collect()
            }
        }

        /// The library's name.
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        /// [`from_name`](Self::from_name): the library's name, or its error.
        impl std::str::FromStr for $ty {
            type Err = crate::Error;
            fn from_str(name: &str) -> Result<$ty, crate::Error> {
                $ty::from_name(name)
            }
        }
    };
}
