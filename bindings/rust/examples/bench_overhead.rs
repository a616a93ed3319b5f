// SPDX-License-Identifier: Apache-2.0
//! `make bench-rust`: what the safe crate costs per call, next to the same
//! calls made raw through `rngtrk::sys` in the same run.
//!
//! The measured step is a dropout site's bookkeeping: fork
//! "model-parallel-rng", advance by 4096, restore.  Safe: a `ForkGuard`
//! (the name becomes a `CString` per fork) and `advance`; raw: the three C
//! calls with a name made once.  Each figure is the best of 7 repeats of
//! 1,000,000 steps, in ns per step; the ratio is what to compare across
//! machines.  Not a test: nothing here asserts.  Build with `--release`.
use std::ffi::CString;
use std::time::Instant;

use rngtrk::{sys, Tracker};

const STEPS: u32 = 1_000_000;

fn best_ns(mut step: impl FnMut() -> u64) -> (f64, u64) {
    let mut best = f64::INFINITY;
    let mut checksum = 0u64;
    for _ in 0..7 {
        let start = Instant::now();
        for _ in 0..STEPS {
            checksum = checksum.wrapping_add(step());
        }
        best = best.min(start.elapsed().as_nanos() as f64 / STEPS as f64);
    }
    (best, checksum) // the checksum is printed, so no step can be optimised away
}

fn main() -> Result<(), rngtrk::Error> {
    let mut safe = Tracker::new()?;
    safe.add("model-parallel-rng", 3955)?;
    let (safe_ns, safe_sum) = best_ns(|| {
        let mut fork = safe.fork("model-parallel-rng").expect("fork");
        let before = fork.advance(4096).expect("advance");
        fork.restore().expect("restore");
        before.offset
    });

    let mut raw: *mut sys::rngtrk_tracker = std::ptr::null_mut();
    let name = CString::new("model-parallel-rng").expect("no NUL");
    // SAFETY: valid out-pointer, handle and name for every call below; the
    // handle is freed once at the end.
    unsafe {
        assert_eq!(sys::rngtrk_tracker_new(&mut raw), sys::rngtrk_status::RNGTRK_OK);
        assert_eq!(sys::rngtrk_tracker_add(raw, name.as_ptr(), 3955), sys::rngtrk_status::RNGTRK_OK);
    }
    let (raw_ns, raw_sum) = best_ns(|| {
        let mut before = sys::rngtrk_philox_state { seed: 0, offset: 0 };
        // SAFETY: as above.
        unsafe {
            let ok = sys::rngtrk_status::RNGTRK_OK;
            assert_eq!(sys::rngtrk_tracker_fork(raw, name.as_ptr()), ok);
            assert_eq!(sys::rngtrk_tracker_advance(raw, 4096, &mut before), ok);
            assert_eq!(sys::rngtrk_tracker_restore(raw, name.as_ptr()), ok);
        }
        before.offset
    });
    // SAFETY: the handle came from rngtrk_tracker_new and is freed once.
    unsafe { sys::rngtrk_tracker_free(raw) };

    assert_eq!(safe_sum, raw_sum, "both trackers drew the same offsets");
    println!(
        "bench rust fork+advance+restore: safe API {:.1} ns, raw C calls {:.1} ns, ratio {:.2} (overhead {:.1} ns)",
        safe_ns,
        raw_ns,
        safe_ns / raw_ns,
        safe_ns - raw_ns
    );
    Ok(())
}
