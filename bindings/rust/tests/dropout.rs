// SPDX-License-Identifier: Apache-2.0
//! The generic dropout wrappers (`f32`, `F16Bits`, `BF16Bits` data) in every
//! layout: against the formula (`x * 2` where the bernoulli mask keeps, at
//! p = 0.5, else `x * 0`: -0 for a negative) on values whose products are
//! exact, against the C functions called directly on any bit pattern,
//! slices against the box of the whole tensor's dropout, in place, and the
//! refusals.
use std::fmt::Debug;

use rngtrk::{sys, BF16Bits, DropoutElement, Dtype, ErrorKind, F16Bits, Layout, PhiloxState, SampleSpec};

const LAYOUTS: [Layout; 4] = [Layout::Stateless, Layout::Nvfuser, Layout::TorchEagerCuda, Layout::Triton];

/// A data type of the tests: exact values in, bits out.
trait Data: DropoutElement + PartialEq + Debug {
    /// `v`, which the tests pick exactly representable (multiples of 0.5 up to 64).
    fn exact(v: f32) -> Self;
    /// Any bit pattern (the low bits of `bits`).
    fn from_bits(bits: u32) -> Self;
    fn bits(self) -> u32;
}

impl Data for f32 {
    fn exact(v: f32) -> Self {
        v
    }
    fn from_bits(bits: u32) -> Self {
        f32::from_bits(bits)
    }
    fn bits(self) -> u32 {
        self.to_bits()
    }
}

impl Data for F16Bits {
    fn exact(v: f32) -> Self {
        let b = v.to_bits();
        let sign = ((b >> 16) & 0x8000) as u16;
        if v == 0.0 {
            return F16Bits(sign);
        }
        let exponent = ((b >> 23) & 0xFF) as i32 - 127 + 15;
        assert!((1..31).contains(&exponent) && b & 0x1FFF == 0, "{} is not a normal half", v);
        F16Bits(sign | (exponent as u16) << 10 | ((b >> 13) & 0x3FF) as u16)
    }
    fn from_bits(bits: u32) -> Self {
        F16Bits(bits as u16)
    }
    fn bits(self) -> u32 {
        self.0 as u32
    }
}

impl Data for BF16Bits {
    fn exact(v: f32) -> Self {
        assert_eq!(v.to_bits() & 0xFFFF, 0, "{} is not a bfloat16", v);
        BF16Bits((v.to_bits() >> 16) as u16)
    }
    fn from_bits(bits: u32) -> Self {
        BF16Bits(bits as u16)
    }
    fn bits(self) -> u32 {
        self.0 as u32
    }
}

/// The C values of a layout and a data dtype.
fn c_layout(layout: Layout) -> sys::rngtrk_layout {
    match layout {
        Layout::Stateless => sys::rngtrk_layout_RNGTRK_LAYOUT_STATELESS,
        Layout::Nvfuser => sys::rngtrk_layout_RNGTRK_LAYOUT_NVFUSER,
        Layout::TorchEagerCuda => sys::rngtrk_layout_RNGTRK_LAYOUT_TORCH_EAGER_CUDA,
        Layout::Triton => sys::rngtrk_layout_RNGTRK_LAYOUT_TRITON,
        _ => unreachable!("a layout this test does not know"),
    }
}
fn c_dtype(dtype: Dtype) -> sys::rngtrk_dtype {
    match dtype {
        Dtype::F32 => sys::rngtrk_dtype_RNGTRK_DTYPE_F32,
        Dtype::F16 => sys::rngtrk_dtype_RNGTRK_DTYPE_F16,
        Dtype::BF16 => sys::rngtrk_dtype_RNGTRK_DTYPE_BF16,
        _ => unreachable!("not a dropout dtype"),
    }
}

fn spec(layout: Layout, p: f64) -> SampleSpec {
    SampleSpec::bernoulli(p).layout(layout).sm_count(3).max_threads_per_sm(512)
}

fn formula<T: Data>() {
    let state = PhiloxState::new(0x5EED, 36);
    let values: Vec<f32> = (0..1001).map(|i| ((i * 37) % 129) as f32 * 0.5 - 32.0).collect();
    let input: Vec<T> = values.iter().map(|&v| T::exact(v)).collect();
    for layout in LAYOUTS {
        let spec = spec(layout, 0.5).numel(2000);
        let mut mask = vec![0u8; input.len()];
        rngtrk::sample(&state, &spec, 5, &mut mask).unwrap();
        let mut out = vec![T::exact(0.0); input.len()];
        rngtrk::dropout(&state, &spec, 5, &input, &mut out).unwrap();
        let (mut kept, mut negative_dropped) = (0, 0);
        for i in 0..input.len() {
            let want = if mask[i] == 1 { values[i] * 2.0 } else { values[i] * 0.0 };
            assert_eq!(out[i].bits(), T::exact(want).bits(), "{:?} element {} of {}", layout, i, values[i]);
            kept += mask[i] as usize;
            negative_dropped += (mask[i] == 0 && values[i] < 0.0) as usize;
        }
        assert!(kept > 400 && kept < 600, "{:?}: {} kept", layout, kept);
        assert!(negative_dropped > 100, "-0 is checked");
        let mut data = input.clone();
        rngtrk::dropout_in_place(&state, &spec, 5, &mut data).unwrap();
        assert_eq!(data, out, "{:?} in place", layout);
    }
}

#[test]
fn dropout_is_x_times_the_scale_where_kept_and_x_times_zero_where_dropped() {
    formula::<f32>();
    formula::<F16Bits>();
    formula::<BF16Bits>();
}

/// Any bit patterns (NaN, infinities, subnormals), p = 0.3: the wrapper's
/// bits are the C function's.
fn same_as_c<T: Data>() {
    let state = PhiloxState::new(u64::MAX, (1u64 << 34) - 8); // stateless counters cross 2^32
    let input: Vec<T> = (0..777u32).map(|i| T::from_bits(i.wrapping_mul(0x9E37_79B9))).collect();
    for layout in LAYOUTS {
        let spec = spec(layout, 0.3);
        let mut out = vec![T::exact(0.0); input.len()];
        rngtrk::dropout(&state, &spec, 3, &input, &mut out).unwrap();
        let mut want = vec![T::exact(0.0); input.len()];
        // SAFETY: an all-zero struct of plain numbers is valid; the init
        // function fills exactly its size.
        let mut c = unsafe { std::mem::zeroed::<sys::rngtrk_sample_spec>() };
        let status = unsafe {
            sys::rngtrk_sample_spec_init(
                &mut c,
                std::mem::size_of_val(&c),
                c_layout(layout),
                sys::rngtrk_distribution_RNGTRK_DIST_BERNOULLI,
                sys::rngtrk_dtype_RNGTRK_DTYPE_U8,
            )
        };
        assert_eq!(status, sys::rngtrk_status::RNGTRK_OK);
        c.dtype = c_dtype(T::DTYPE);
        c.param_a = 0.3;
        c.sm_count = 3;
        c.max_threads_per_sm = 512;
        let s = sys::rngtrk_philox_state { seed: state.seed, offset: state.offset };
        // SAFETY: both buffers hold input.len() elements of T.
        let status = unsafe {
            sys::rngtrk_dropout(
                &s,
                &c,
                3,
                input.len() as u64,
                input.as_ptr().cast(),
                want.as_mut_ptr().cast(),
                std::mem::size_of_val(&want[..]),
            )
        };
        assert_eq!(status, sys::rngtrk_status::RNGTRK_OK);
        let (a, b): (Vec<u32>, Vec<u32>) =
            (out.iter().map(|v| v.bits()).collect(), want.iter().map(|v| v.bits()).collect());
        assert_eq!(a, b, "{:?} {:?}", layout, T::DTYPE);
    }
}

#[test]
fn the_wrappers_give_the_c_functions_bits_for_every_pattern() {
    same_as_c::<f32>();
    same_as_c::<F16Bits>();
    same_as_c::<BF16Bits>();
}

fn slices<T: Data>() {
    let state = PhiloxState::new(91, 20);
    let (global, start, local) = ([6u64, 7, 9], [1u64, 2, 3], [4u64, 3, 5]);
    let whole_input: Vec<T> = (0..6 * 7 * 9u32).map(|i| T::from_bits(i.wrapping_mul(2_654_435_761))).collect();
    for layout in LAYOUTS {
        let spec = spec(layout, 0.7);
        let mut whole = vec![T::exact(0.0); whole_input.len()];
        rngtrk::dropout(&state, &spec.numel(6 * 7 * 9), 0, &whole_input, &mut whole).unwrap();
        let (mut input, mut want) = (Vec::new(), Vec::new());
        for a in 0..4 {
            for b in 0..3 {
                for c in 0..5 {
                    let g = ((1 + a) * 7 + 2 + b) * 9 + 3 + c;
                    input.push(whole_input[g]);
                    want.push(whole[g].bits());
                }
            }
        }
        let mut out = vec![T::exact(0.0); input.len()];
        rngtrk::dropout_slice(&state, &spec, &global, &start, &local, &input, &mut out).unwrap();
        assert_eq!(out.iter().map(|v| v.bits()).collect::<Vec<_>>(), want, "{:?} {:?}", layout, T::DTYPE);
        let mut data = input.clone();
        rngtrk::dropout_slice_in_place(&state, &spec, &global, &start, &local, &mut data).unwrap();
        assert_eq!(data.iter().map(|v| v.bits()).collect::<Vec<_>>(), want, "{:?} in place", layout);
    }
}

#[test]
fn a_slice_equals_the_same_box_of_the_whole_tensors_dropout() {
    slices::<f32>();
    slices::<F16Bits>();
    slices::<BF16Bits>();
}

#[test]
fn refusals_name_the_problem() {
    let state = PhiloxState::new(1, 0);
    let e = rngtrk::dropout(&state, &SampleSpec::bernoulli(0.5), 0, &[1f32; 4], &mut [0f32; 3]).unwrap_err();
    assert!(e.message().contains("input holds 4 elements but its output 3"), "{}", e);
    let e =
        rngtrk::dropout(&state, &SampleSpec::bernoulli(1.5), 0, &[F16Bits(0); 4], &mut [F16Bits(0); 4]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = rngtrk::dropout(&state, &SampleSpec::uniform(0.0, 1.0), 0, &[1f32; 4], &mut [0f32; 4]).unwrap_err();
    assert!(e.message().contains("bernoulli"), "{}", e);
    let e = rngtrk::dropout(&PhiloxState::new(1, 2), &SampleSpec::bernoulli(0.5), 0, &[1f32; 4], &mut [0f32; 4])
        .unwrap_err();
    assert!(e.message().contains("multiple of 4"), "{}", e);
    let e = rngtrk::dropout_slice(
        &state,
        &SampleSpec::bernoulli(0.5),
        &[4, 4],
        &[0, 0],
        &[2, 3],
        &[0f32; 6],
        &mut [0f32; 5],
    )
    .unwrap_err();
    assert!(e.message().contains("6 elements but its output 5"), "{}", e);
    let e = rngtrk::dropout_slice(
        &state,
        &SampleSpec::bernoulli(0.5),
        &[4, 4],
        &[3, 0],
        &[2, 3],
        &[0f32; 6],
        &mut [0f32; 6],
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("outside"), "{}", e);
    let mut data = [BF16Bits(0); 5];
    let e = rngtrk::dropout_slice_in_place(&state, &SampleSpec::bernoulli(0.5), &[4, 4], &[0, 0], &[2, 3], &mut data)
        .unwrap_err();
    assert!(e.message().contains("box holds 6 elements but the output holds 5"), "{}", e);
    if rngtrk::cuda::available().is_err() {
        let (x, mut y) = ([1f32; 4], [0f32; 4]);
        // SAFETY: never launched: the library has no device and says so first.
        let e = unsafe {
            rngtrk::cuda::dropout(
                &state,
                &SampleSpec::bernoulli(0.5),
                0,
                4,
                x.as_ptr(),
                y.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        // SAFETY: as above.
        let e = unsafe {
            rngtrk::cuda::dropout_slice(
                &state,
                &SampleSpec::bernoulli(0.5),
                &[2, 2],
                &[0, 0],
                &[2, 2],
                x.as_ptr(),
                y.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        }
        .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unavailable);
    }
}
