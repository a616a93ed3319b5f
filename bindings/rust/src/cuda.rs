// SPDX-License-Identifier: Apache-2.0
//! CUDA: the same bits as the CPU calls, written into device memory on the
//! caller's stream (`docs/cuda.md`).  Launches are asynchronous, with no
//! hidden synchronisation and no allocation.  Without a usable device, or
//! with a library built without CUDA, every call returns
//! [`ErrorKind::Unavailable`](crate::ErrorKind::Unavailable) and the
//! message says why.
//!
//! # Safety contract (every `unsafe fn` here)
//!
//! This crate cannot see device memory, so the caller promises:
//!
//! * each device pointer is a CUDA device (or managed) allocation of the
//!   current device, aligned to its element type, holding at least the
//!   elements the call reads or writes;
//! * `stream` is null (the default stream) or a live `cudaStream_t` of the
//!   current device, cast to a pointer;
//! * nothing else reads or writes the output, or writes the input, until
//!   the work queued on `stream` is done (synchronise the stream, or order
//!   later work after it), and the memory outlives that work.
//!
//! What the library can check, it does before any launch: null or
//! misaligned pointers and every argument error give an `Error`, never a
//! launch.
use std::os::raw::c_void;

use crate::error::{check, Error};
use crate::sampling::{DropoutElement, Element, SampleSpec, SliceBox};
use crate::state::PhiloxState;
use crate::sys;

/// A `cudaStream_t`, as a pointer; null is the default stream.
pub type Stream = *mut c_void;

/// `Ok(())` if the CUDA calls can run here; else `Unavailable` with the
/// reason (no device, no driver, a library built without CUDA).
pub fn available() -> Result<(), Error> {
    crate::check_library_version()?;
    // SAFETY: no arguments.
    check(unsafe { sys::rngtrk_cuda_available() })
}

fn capacity<T>(count: u64) -> usize {
    (count as usize).saturating_mul(std::mem::size_of::<T>())
}

/// [`crate::sample`] of `count` elements into device memory at `device_out`.
///
/// # Safety
/// The module's contract: `device_out` holds `count` elements of `T`.
pub unsafe fn sample<T: Element>(
    state: &PhiloxState,
    spec: &SampleSpec,
    first: u64,
    count: u64,
    device_out: *mut T,
    stream: Stream,
) -> Result<(), Error> {
    crate::check_library_version()?;
    let c = spec.c_spec(T::DTYPE)?;
    check(sys::rngtrk_cuda_sample(&state.to_c(), &c, first, count, device_out.cast(), capacity::<T>(count), stream))
}

/// [`crate::sample_slice`] into device memory at `device_out`.
///
/// # Safety
/// The module's contract: `device_out` holds the box's elements of `T`.
pub unsafe fn sample_slice<T: Element>(
    state: &PhiloxState,
    spec: &SampleSpec,
    global_shape: &[u64],
    start: &[u64],
    local_shape: &[u64],
    device_out: *mut T,
    stream: Stream,
) -> Result<(), Error> {
    crate::check_library_version()?;
    let shape = SliceBox::new(global_shape, start, local_shape)?;
    let c = spec.c_spec(T::DTYPE)?;
    let (out, capacity) = (device_out.cast(), capacity::<T>(shape.count));
    check(shape.call(|ndim, global, start, local| {
        sys::rngtrk_cuda_sample_slice(&state.to_c(), &c, ndim, global, start, local, out, capacity, stream)
    }))
}

/// [`crate::dropout`] of `count` elements of `T` (`f32`, [`F16Bits`](crate::F16Bits),
/// [`BF16Bits`](crate::BF16Bits)) from `device_in` to `device_out` (the same
/// pointer works in place), in one kernel (`rngtrk_cuda_dropout`).
///
/// # Safety
/// The module's contract: both pointers hold `count` elements of `T`.
pub unsafe fn dropout<T: DropoutElement>(
    state: &PhiloxState,
    spec: &SampleSpec,
    first: u64,
    count: u64,
    device_in: *const T,
    device_out: *mut T,
    stream: Stream,
) -> Result<(), Error> {
    crate::check_library_version()?;
    let c = spec.c_dropout_spec(T::DTYPE)?;
    check(sys::rngtrk_cuda_dropout(
        &state.to_c(),
        &c,
        first,
        count,
        device_in.cast(),
        device_out.cast(),
        capacity::<T>(count),
        stream,
    ))
}

/// [`crate::dropout_slice`] from `device_in` to `device_out` (the box's
/// elements each; the same pointer works in place), in one kernel.
///
/// # Safety
/// The module's contract: both pointers hold the box's elements of `T`.
pub unsafe fn dropout_slice<T: DropoutElement>(
    state: &PhiloxState,
    spec: &SampleSpec,
    global_shape: &[u64],
    start: &[u64],
    local_shape: &[u64],
    device_in: *const T,
    device_out: *mut T,
    stream: Stream,
) -> Result<(), Error> {
    crate::check_library_version()?;
    let shape = SliceBox::new(global_shape, start, local_shape)?;
    let c = spec.c_dropout_spec(T::DTYPE)?;
    let (source, out, capacity) = (device_in.cast(), device_out.cast(), capacity::<T>(shape.count));
    check(shape.call(|ndim, global, start, local| {
        sys::rngtrk_cuda_dropout_slice(&state.to_c(), &c, ndim, global, start, local, source, out, capacity, stream)
    }))
}

/// Graph-safe sampling: the kernel reads the state from `device_state`
/// (two `u64` in device memory: seed, offset) when it runs, not when it is
/// launched, so a captured CUDA graph draws from the current state on every
/// replay.  Pair it with [`advance_graphsafe`] in the same capture.
///
/// # Safety
/// The module's contract: `device_state` holds 2 `u64`, `device_out`
/// `count` elements of `T`.
pub unsafe fn sample_graphsafe<T: Element>(
    device_state: *const u64,
    spec: &SampleSpec,
    first: u64,
    count: u64,
    device_out: *mut T,
    stream: Stream,
) -> Result<(), Error> {
    crate::check_library_version()?;
    let c = spec.c_spec(T::DTYPE)?;
    check(sys::rngtrk_cuda_sample_graphsafe(
        device_state,
        &c,
        first,
        count,
        device_out.cast(),
        capacity::<T>(count),
        stream,
    ))
}

/// Adds `increment` rounded up to a multiple of 4 to `device_state[1]` on
/// the device, in stream order.
///
/// # Safety
/// The module's contract: `device_state` holds 2 `u64`.
pub unsafe fn advance_graphsafe(device_state: *mut u64, increment: u64, stream: Stream) -> Result<(), Error> {
    crate::check_library_version()?;
    check(sys::rngtrk_cuda_advance_graphsafe(device_state, increment, stream))
}
