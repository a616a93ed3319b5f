// SPDX-License-Identifier: Apache-2.0
//! Draws from a tracker's active state: the generic sampling calls, which
//! advance the state by exactly what the layout consumes (a fork or replay
//! guard offers the same, `src/guards.rs`).
use crate::error::{check, Error};
use crate::sampling::{check_same_len, out_parts, Dtype, Element, SampleSpec, SliceBox};
use crate::state::PhiloxState;
use crate::sys;
use crate::tracker::Tracker;

fn before() -> sys::rngtrk_philox_state {
    sys::rngtrk_philox_state { seed: 0, offset: 0 }
}

impl Tracker {
    /// Fills `out` (a 1-D tensor of `out.len()` elements of its type) from
    /// the active state, advances the state by what the layout consumes
    /// ([`SampleSpec::offset_increment`]) and returns the state drawn from.
    /// On any error nothing moves.
    pub fn sample<T: Element>(&mut self, spec: &SampleSpec, out: &mut [T]) -> Result<PhiloxState, Error> {
        let c = spec.c_spec(T::DTYPE)?;
        let count = out.len() as u64;
        let (ptr, capacity) = out_parts(out);
        let mut drawn_from = before();
        // SAFETY: valid handle, spec, output (`capacity` bytes) and out-state.
        check(unsafe { sys::rngtrk_tracker_sample(self.raw_mut(), &c, count, ptr, capacity, &mut drawn_from) })?;
        Ok(PhiloxState::from_c(drawn_from))
    }

    /// This rank's box of a tensor of `global_shape` (see
    /// [`crate::sample_slice`]); the state advances by what the whole tensor
    /// consumes, the same on every rank.  `out.len()` must equal the box's
    /// element count.
    pub fn sample_slice<T: Element>(
        &mut self,
        spec: &SampleSpec,
        global_shape: &[u64],
        start: &[u64],
        local_shape: &[u64],
        out: &mut [T],
    ) -> Result<PhiloxState, Error> {
        let shape = SliceBox::new(global_shape, start, local_shape)?.filling(out.len())?;
        let c = spec.c_spec(T::DTYPE)?;
        let (t, (ptr, capacity)) = (self.raw_mut(), out_parts(out));
        let mut drawn_from = before();
        // SAFETY: the shapes hold ndim values each; `ptr` holds the box.
        check(shape.call(|ndim, global, start, local| unsafe {
            sys::rngtrk_tracker_sample_slice(t, &c, ndim, global, start, local, ptr, capacity, &mut drawn_from)
        }))?;
        Ok(PhiloxState::from_c(drawn_from))
    }

    /// Dropout of the `f32` values `input` from the active state, advancing
    /// it as [`Tracker::sample`] would; returns the state drawn from
    /// (`rngtrk_tracker_dropout_f32`).  Its rule is that C function's, not
    /// quite [`crate::dropout`]'s: a kept element is `input * (1.0f32 /
    /// p as f32)`, a dropped one `+0`; for a `p` that is an `f32` value
    /// they differ only where `crate::dropout` writes `input * 0` (-0 for a
    /// negative, NaN for NaN or infinity).
    pub fn dropout(&mut self, spec: &SampleSpec, input: &[f32], out: &mut [f32]) -> Result<PhiloxState, Error> {
        check_same_len(input.len(), out.len())?;
        let c = spec.c_dropout_spec(Dtype::F32)?;
        let mut drawn_from = before();
        // SAFETY: both slices hold out.len() floats.
        check(unsafe {
            sys::rngtrk_tracker_dropout_f32(
                self.raw_mut(),
                &c,
                out.len() as u64,
                input.as_ptr(),
                out.as_mut_ptr(),
                &mut drawn_from,
            )
        })?;
        Ok(PhiloxState::from_c(drawn_from))
    }

    /// [`Tracker::dropout`] in place.
    pub fn dropout_in_place(&mut self, spec: &SampleSpec, data: &mut [f32]) -> Result<PhiloxState, Error> {
        let c = spec.c_dropout_spec(Dtype::F32)?;
        let p = data.as_mut_ptr();
        let mut drawn_from = before();
        // SAFETY: the library allows in == out; `p` holds data.len() floats.
        check(unsafe {
            sys::rngtrk_tracker_dropout_f32(self.raw_mut(), &c, data.len() as u64, p, p, &mut drawn_from)
        })?;
        Ok(PhiloxState::from_c(drawn_from))
    }
}
