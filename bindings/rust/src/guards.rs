// SPDX-License-Identifier: Apache-2.0
//! The calls a guard allows on the tracker it holds.
//!
//! A [`ForkGuard`] and a [`ReplayGuard`] each hold the tracker's only
//! mutable borrow and lend no `&mut Tracker` (see the crate documentation):
//! they give reads through `Deref<Target = Tracker>` and, as their own
//! methods, one set of calls, defined once here for both — a nested `fork`,
//! `advance`, the draws, `set_state` and `manual_seed`.  So `reset`, `load`,
//! `add`, `set_states`, `mark` and `set_ledger` do not compile inside either
//! scope, and the tracker cannot be swapped or replaced under a guard.
use crate::error::Error;
use crate::ledger::ReplayGuard;
use crate::sampling::{Element, SampleSpec};
use crate::state::PhiloxState;
use crate::tracker::{ForkGuard, Tracker};

macro_rules! guard_calls {
    ($guard:ident, $inside:literal) => {
        impl $guard<'_> {
            #[doc = concat!("Forks another named state ", $inside, ".  The inner guard borrows this")]
            /// one, so it must end first (restoring out of order does not
            /// compile).  Errors: `UnknownName`.
            pub fn fork<'g>(&'g mut self, name: &'g str) -> Result<ForkGuard<'g>, Error> {
                ForkGuard::open(self.tracker, name)
            }

            #[doc = concat!("[`Tracker::advance`] on the active state, ", $inside, ".")]
            pub fn advance(&mut self, increment: u64) -> Result<PhiloxState, Error> {
                self.tracker.advance(increment)
            }

            #[doc = concat!("[`Tracker::random_u32`] from the active state, ", $inside, ".")]
            pub fn random_u32(&mut self, out: &mut [u32]) -> Result<PhiloxState, Error> {
                self.tracker.random_u32(out)
            }

            #[doc = concat!("[`Tracker::uniform_f32`] from the active state, ", $inside, ".")]
            pub fn uniform_f32(&mut self, out: &mut [f32]) -> Result<PhiloxState, Error> {
                self.tracker.uniform_f32(out)
            }

            #[doc = concat!("[`Tracker::sample`] from the active state, ", $inside, ".")]
            pub fn sample<T: Element>(&mut self, spec: &SampleSpec, out: &mut [T]) -> Result<PhiloxState, Error> {
                self.tracker.sample(spec, out)
            }

            #[doc = concat!("[`Tracker::sample_slice`] from the active state, ", $inside, ".")]
            pub fn sample_slice<T: Element>(
                &mut self,
                spec: &SampleSpec,
                global_shape: &[u64],
                start: &[u64],
                local_shape: &[u64],
                out: &mut [T],
            ) -> Result<PhiloxState, Error> {
                self.tracker.sample_slice(spec, global_shape, start, local_shape, out)
            }

            #[doc = concat!("[`Tracker::dropout`] from the active state, ", $inside, ".")]
            pub fn dropout(&mut self, spec: &SampleSpec, input: &[f32], out: &mut [f32]) -> Result<PhiloxState, Error> {
                self.tracker.dropout(spec, input, out)
            }

            #[doc = concat!("[`Tracker::dropout_in_place`] from the active state, ", $inside, ".")]
            pub fn dropout_in_place(&mut self, spec: &SampleSpec, data: &mut [f32]) -> Result<PhiloxState, Error> {
                self.tracker.dropout_in_place(spec, data)
            }

            /// [`Tracker::set_state`]: allowed on any named state, a forked
            /// one too.
            pub fn set_state(&mut self, name: &str, state: PhiloxState) -> Result<(), Error> {
                self.tracker.set_state(name, state)
            }

            /// [`Tracker::manual_seed`]: sets the default state, which is
            /// active again once every fork is closed.
            pub fn manual_seed(&mut self, seed: u64) -> Result<(), Error> {
                self.tracker.manual_seed(seed)
            }
        }

        impl std::ops::Deref for $guard<'_> {
            type Target = Tracker;

            fn deref(&self) -> &Tracker {
                self.tracker
            }
        }
    };
}

guard_calls!(ForkGuard, "inside the fork");
guard_calls!(ReplayGuard, "inside the replay");
