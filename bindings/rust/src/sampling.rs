// SPDX-License-Identifier: Apache-2.0
//! Sampling: distributions, element types and stream layouts
//! (`docs/streams.md`).  Every element is a pure function of (seed, offset,
//! element index), so a range equals the same range of a longer call and a
//! slice equals the same box of the whole tensor — on the CPU here and on a
//! GPU through [`crate::cuda`].
use std::os::raw::c_uint;

use crate::error::{check, Error};
use crate::names;
use crate::state::PhiloxState;
use crate::sys;

/// How element indices map to Philox counters (formulas: `docs/streams.md`).
/// The names (`"stateless"`, `"torch-eager-cuda"`, ...) are the library's:
/// [`Layout::name`], `Display`, [`Layout::from_name`] and `FromStr`.
///
/// `#[non_exhaustive]`, as every enum here that mirrors a C enum: the
/// library may add layouts, and a later crate with them must not break your
/// `match` (give it a `_` arm).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Layout {
    /// PyTorch's stateless Philox; cuRAND's subsequence 0.
    #[default]
    Stateless,
    /// nvFuser's `uniform_philox` / `rand_like` (Lightning Thunder).
    Nvfuser,
    /// `torch.rand` / `Tensor.uniform_` on a CUDA device (set the GPU's
    /// geometry with [`SampleSpec::sm_count`] and
    /// [`SampleSpec::max_threads_per_sm`]).
    TorchEagerCuda,
    /// Triton's `tl.randint` / `tl.rand`: element g uses the counter
    /// offset + g (the offset itself), one Philox block per element.
    Triton,
}

library_named_enum!(Layout, "layout", sys::rngtrk_layout_name, sys::rngtrk_layout_from_name, {
    Stateless => sys::rngtrk_layout_RNGTRK_LAYOUT_STATELESS,
    Nvfuser => sys::rngtrk_layout_RNGTRK_LAYOUT_NVFUSER,
    TorchEagerCuda => sys::rngtrk_layout_RNGTRK_LAYOUT_TORCH_EAGER_CUDA,
    Triton => sys::rngtrk_layout_RNGTRK_LAYOUT_TRITON,
});

/// What each element is, with the distribution's parameters.  The names
/// (`"bits"`, `"uniform"`, `"normal"`, `"bernoulli"`) are the library's:
/// [`Distribution::name`], [`Distribution::from_name`] and `FromStr`.
///
/// `#[non_exhaustive]`: it mirrors the C enum `rngtrk_distribution`, which
/// the library may extend (see [`Layout`]).
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum Distribution {
    /// Raw stream words (`u32` or `u64` outputs).
    Bits,
    /// From `low` up to `high` (`f32`, `f64`, [`F16Bits`], [`BF16Bits`]).
    Uniform {
        /// The lower end (included).
        low: f64,
        /// The upper end.
        high: f64,
    },
    /// Box-Muller normal (`f32`, `f64`, [`F16Bits`], [`BF16Bits`]: the `f32`
    /// value rounded to nearest even).
    Normal {
        /// The mean.
        mean: f64,
        /// The standard deviation (at least 0).
        std: f64,
    },
    /// A keep mask (`u8`, 1 = keep), or dropout's mask.
    Bernoulli {
        /// The keep probability, 0..=1.
        p: f64,
    },
}

impl Distribution {
    /// The C value and the parameters this variant sets (`param_a`,
    /// `param_b`); a parameter it does not have keeps the library's default.
    fn to_c(self) -> (c_uint, Option<f64>, Option<f64>) {
        match self {
            Distribution::Bits => (sys::rngtrk_distribution_RNGTRK_DIST_BITS, None, None),
            Distribution::Uniform { low, high } => {
                (sys::rngtrk_distribution_RNGTRK_DIST_UNIFORM, Some(low), Some(high))
            }
            Distribution::Normal { mean, std } => (sys::rngtrk_distribution_RNGTRK_DIST_NORMAL, Some(mean), Some(std)),
            Distribution::Bernoulli { p } => (sys::rngtrk_distribution_RNGTRK_DIST_BERNOULLI, Some(p), None),
        }
    }

    /// The variant of C value `value` with the parameters of a C spec.
    fn from_c(value: c_uint, spec: &sys::rngtrk_sample_spec) -> Option<Distribution> {
        let (a, b) = (spec.param_a, spec.param_b);
        match value {
            sys::rngtrk_distribution_RNGTRK_DIST_BITS => Some(Distribution::Bits),
            sys::rngtrk_distribution_RNGTRK_DIST_UNIFORM => Some(Distribution::Uniform { low: a, high: b }),
            sys::rngtrk_distribution_RNGTRK_DIST_NORMAL => Some(Distribution::Normal { mean: a, std: b }),
            sys::rngtrk_distribution_RNGTRK_DIST_BERNOULLI => Some(Distribution::Bernoulli { p: a }),
            _ => None,
        }
    }

    /// The library's name of the distribution (`rngtrk_distribution_name`);
    /// `"?"` only if the loaded library is older than this crate.
    pub fn name(&self) -> &'static str {
        names::name_of(self.to_c().0, sys::rngtrk_distribution_name).unwrap_or("?")
    }

    /// The distribution the library calls `name`
    /// (`rngtrk_distribution_from_name`), with the library's default
    /// parameters (those `rngtrk_sample_spec_init` fills in: uniform from 0
    /// up to 1, normal with mean 0 and std 1, bernoulli with p = 0.5).
    /// Errors: the library's `InvalidArgument` for a name it does not know,
    /// whose message lists the names.
    pub fn from_name(name: &str) -> Result<Distribution, Error> {
        let value = names::value_named(name, sys::rngtrk_distribution_from_name)?;
        // The defaults come with a spec, which needs a dtype the library
        // makes this distribution in: the first one it accepts.
        let spec = Dtype::all().into_iter().find_map(|dtype| init_spec(Layout::default(), value, dtype).ok());
        spec.and_then(|spec| Distribution::from_c(value, &spec)).ok_or_else(|| {
            Error::invalid(format!("the library's distribution {:?} (value {}) is newer than this crate", name, value))
        })
    }
}

/// [`Distribution::from_name`]: the library's name, or its error.
impl std::str::FromStr for Distribution {
    type Err = Error;
    fn from_str(name: &str) -> Result<Distribution, Error> {
        Distribution::from_name(name)
    }
}

/// The element type of an output; an [`Element`] type names its own.  The
/// names (`"u8"`, ..., `"f64"`) and the sizes are the library's:
/// [`Dtype::name`], `Display`, [`Dtype::from_name`], `FromStr` and
/// [`Dtype::size`].
///
/// `#[non_exhaustive]`: it mirrors the C enum `rngtrk_dtype`, which the
/// library may extend (see [`Layout`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Dtype {
    /// `u8` (bernoulli masks).
    U8,
    /// `u32`.
    U32,
    /// `u64`.
    U64,
    /// IEEE binary16, as its bits ([`F16Bits`]).
    F16,
    /// bfloat16, as its bits ([`BF16Bits`]).
    BF16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
}

library_named_enum!(Dtype, "dtype", sys::rngtrk_dtype_name, sys::rngtrk_dtype_from_name, {
    U8 => sys::rngtrk_dtype_RNGTRK_DTYPE_U8,
    U32 => sys::rngtrk_dtype_RNGTRK_DTYPE_U32,
    U64 => sys::rngtrk_dtype_RNGTRK_DTYPE_U64,
    F16 => sys::rngtrk_dtype_RNGTRK_DTYPE_F16,
    BF16 => sys::rngtrk_dtype_RNGTRK_DTYPE_BF16,
    F32 => sys::rngtrk_dtype_RNGTRK_DTYPE_F32,
    F64 => sys::rngtrk_dtype_RNGTRK_DTYPE_F64,
});

impl Dtype {
    /// Bytes of one element, as the library counts them (`rngtrk_dtype_size`).
    pub fn size(self) -> usize {
        // SAFETY: takes any value, reads nothing else.
        unsafe { sys::rngtrk_dtype_size(self.to_c()) }
    }
}

/// The bits of an IEEE binary16 value (crates.io's `half` is not a
/// dependency: this crate builds offline).  Same layout as `u16`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct F16Bits(pub u16);

impl F16Bits {
    /// The value these bits denote (exact: every binary16 is an f32).
    pub fn to_f32(self) -> f32 {
        let (sign, exponent, mantissa) =
            ((self.0 >> 15) as u32, ((self.0 >> 10) & 0x1F) as i32, (self.0 & 0x3FF) as u32);
        let magnitude = match exponent {
            0 => mantissa as f32 * f32::powi(2.0, -24),
            31 if mantissa == 0 => f32::INFINITY,
            31 => f32::NAN,
            _ => (mantissa | 0x400) as f32 * f32::powi(2.0, exponent - 25),
        };
        if sign == 1 {
            -magnitude
        } else {
            magnitude
        }
    }
}

/// The bits of a bfloat16 value: the high half of an f32.  Same layout as `u16`.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BF16Bits(pub u16);

impl BF16Bits {
    /// The value these bits denote (exact).
    pub fn to_f32(self) -> f32 {
        f32::from_bits((self.0 as u32) << 16)
    }
}

mod sealed {
    pub trait Sealed {}
}

/// An output element type: its Rust type fixes the dtype of a call.
/// Implemented (only) for `u8`, `u32`, `u64`, [`F16Bits`], [`BF16Bits`],
/// `f32` and `f64`, whose size and alignment equal the dtype's.
pub trait Element: Copy + Default + sealed::Sealed {
    /// The dtype of this type.
    const DTYPE: Dtype;
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: Dtype = Dtype::$d;
        }
    )*};
}
element!(u8 => U8, u32 => U32, u64 => U64, F16Bits => F16, BF16Bits => BF16, f32 => F32, f64 => F64);

/// A data element type dropout takes: `f32`, [`F16Bits`] and [`BF16Bits`]
/// (their dtypes F32, F16 and BF16).
pub trait DropoutElement: Element {}
impl DropoutElement for f32 {}
impl DropoutElement for F16Bits {}
impl DropoutElement for BF16Bits {}

/// What to sample: a distribution with its parameters, a layout, and for
/// the torch-eager-cuda layout the GPU geometry.  A builder:
///
/// ```
/// use rngtrk::{Layout, PhiloxState, SampleSpec};
/// // torch.rand(8, device="cuda") after torch.manual_seed(0), on an H100:
/// let spec = SampleSpec::uniform(0.0, 1.0).layout(Layout::TorchEagerCuda).sm_count(132);
/// let mut x = [0f32; 8];
/// rngtrk::sample(&PhiloxState::new(0, 0), &spec, 0, &mut x)?;
/// assert!(x.iter().all(|v| (0.0..1.0).contains(v)));
/// # Ok::<(), rngtrk::Error>(())
/// ```
///
/// The element type of the output picks the dtype; a distribution that does
/// not make it (bits as `f32`, say) is refused by the library with
/// `InvalidArgument`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleSpec {
    distribution: Distribution,
    layout: Layout,
    sm_count: Option<u32>,
    max_threads_per_sm: Option<u32>,
    numel: u64,
    threads: u32,
}

impl SampleSpec {
    /// `distribution` in the stateless layout, one thread, the default GPU
    /// geometry (132 multiprocessors of 2048 threads: an H100).
    pub fn new(distribution: Distribution) -> SampleSpec {
        SampleSpec {
            distribution,
            layout: Layout::Stateless,
            sm_count: None,
            max_threads_per_sm: None,
            numel: 0,
            threads: 1,
        }
    }

    /// Raw stream words.
    pub fn bits() -> SampleSpec {
        SampleSpec::new(Distribution::Bits)
    }

    /// Uniform from `low` up to `high`.
    pub fn uniform(low: f64, high: f64) -> SampleSpec {
        SampleSpec::new(Distribution::Uniform { low, high })
    }

    /// Normal with `mean` and `std`.
    pub fn normal(mean: f64, std: f64) -> SampleSpec {
        SampleSpec::new(Distribution::Normal { mean, std })
    }

    /// Bernoulli keep mask with keep probability `p` (also dropout's spec).
    pub fn bernoulli(p: f64) -> SampleSpec {
        SampleSpec::new(Distribution::Bernoulli { p })
    }

    /// The stream layout.
    pub fn layout(mut self, layout: Layout) -> SampleSpec {
        self.layout = layout;
        self
    }

    /// torch-eager-cuda: the GPU's multiprocessor count.
    pub fn sm_count(mut self, sm_count: u32) -> SampleSpec {
        self.sm_count = Some(sm_count);
        self
    }

    /// torch-eager-cuda: threads per multiprocessor.
    pub fn max_threads_per_sm(mut self, threads: u32) -> SampleSpec {
        self.max_threads_per_sm = Some(threads);
        self
    }

    /// torch-eager-cuda range calls: the whole tensor's element count, which
    /// sets the launch (0, the default: first + count).
    pub fn numel(mut self, numel: u64) -> SampleSpec {
        self.numel = numel;
        self
    }

    /// CPU threads one call may use (default 1); the bits do not change.
    pub fn threads(mut self, threads: u32) -> SampleSpec {
        self.threads = threads;
        self
    }

    /// The distribution.
    pub fn distribution(&self) -> Distribution {
        self.distribution
    }

    /// The offset a tracker moves by when it draws `numel` elements of
    /// `dtype` with this spec (`rngtrk_sample_offset_increment`).
    pub fn offset_increment(&self, dtype: Dtype, numel: u64) -> Result<u64, Error> {
        let c = self.c_spec(dtype)?;
        let mut out = 0u64;
        // SAFETY: valid spec and out-pointer.
        check(unsafe { sys::rngtrk_sample_offset_increment(&c, numel, &mut out) })?;
        Ok(out)
    }

    /// The C spec for outputs of `dtype`, filled by the library's init.
    pub(crate) fn c_spec(&self, dtype: Dtype) -> Result<sys::rngtrk_sample_spec, Error> {
        let mut c = init_spec(self.layout, self.distribution.to_c().0, dtype)?;
        self.fill(&mut c);
        Ok(c)
    }

    /// The C spec of a dropout: data of `dtype`, masked by this spec's
    /// distribution, which the library refuses unless it is bernoulli.  The
    /// init fills the spec of a bernoulli u8 mask, the one it makes.
    pub(crate) fn c_dropout_spec(&self, dtype: Dtype) -> Result<sys::rngtrk_sample_spec, Error> {
        let mut c = init_spec(self.layout, sys::rngtrk_distribution_RNGTRK_DIST_BERNOULLI, Dtype::U8)?;
        c.distribution = self.distribution.to_c().0;
        c.dtype = dtype.to_c();
        self.fill(&mut c);
        Ok(c)
    }

    /// Writes what this builder sets over the library's defaults.
    fn fill(&self, c: &mut sys::rngtrk_sample_spec) {
        let (_, a, b) = self.distribution.to_c();
        if let Some(a) = a {
            c.param_a = a;
        }
        if let Some(b) = b {
            c.param_b = b;
        }
        if let Some(n) = self.sm_count {
            c.sm_count = n;
        }
        if let Some(n) = self.max_threads_per_sm {
            c.max_threads_per_sm = n;
        }
        c.numel = self.numel;
        c.threads = self.threads;
    }
}

/// A C spec with the library's defaults for `distribution` (a C value) in
/// `layout` with outputs of `dtype`; refused when the library does not make
/// that distribution in that dtype.
fn init_spec(layout: Layout, distribution: c_uint, dtype: Dtype) -> Result<sys::rngtrk_sample_spec, Error> {
    // SAFETY: an all-zero struct of plain integers and floats is valid;
    // the init function then fills exactly size_of bytes of it.
    let mut c: sys::rngtrk_sample_spec = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer of the size given.
    check(unsafe {
        sys::rngtrk_sample_spec_init(&mut c, std::mem::size_of_val(&c), layout.to_c(), distribution, dtype.to_c())
    })?;
    Ok(c)
}

/// A box of a row-major tensor as the C calls take it: `ndim`, then the
/// global shape, the start and the local shape, `ndim` values each.  Made
/// only when the three have the same number of dimensions (C could not see
/// that) and the box's element count fits in 64 bits.
pub(crate) struct SliceBox<'a> {
    global_shape: &'a [u64],
    start: &'a [u64],
    local_shape: &'a [u64],
    /// The box's element count.
    pub(crate) count: u64,
}

impl<'a> SliceBox<'a> {
    pub(crate) fn new(global_shape: &'a [u64], start: &'a [u64], local_shape: &'a [u64]) -> Result<Self, Error> {
        if global_shape.len() != start.len() || start.len() != local_shape.len() {
            return Err(Error::invalid(format!(
                "global_shape, start and local_shape need the same number of dimensions (got {}, {} and {})",
                global_shape.len(),
                start.len(),
                local_shape.len()
            )));
        }
        let count = local_shape
            .iter()
            .try_fold(1u64, |n, &d| n.checked_mul(d))
            .ok_or_else(|| Error::overflow("the box's element count passes 2^64".into()))?;
        Ok(SliceBox { global_shape, start, local_shape, count })
    }

    /// The box, which must also fill an output of `out_len` elements:
    /// nothing reaches the library with a buffer of the wrong size.
    pub(crate) fn filling(self, out_len: usize) -> Result<Self, Error> {
        if self.count != out_len as u64 {
            let plural = if self.count == 1 { "" } else { "s" };
            return Err(Error::invalid(format!(
                "the box holds {} element{} but the output holds {}",
                self.count, plural, out_len
            )));
        }
        Ok(self)
    }

    /// Runs `call(ndim, global_shape, start, local_shape)` with the C
    /// arguments, which stay valid for the call.
    pub(crate) fn call<R>(&self, call: impl FnOnce(usize, *const u64, *const u64, *const u64) -> R) -> R {
        call(self.global_shape.len(), self.global_shape.as_ptr(), self.start.as_ptr(), self.local_shape.as_ptr())
    }
}

/// Dropout's input and output must be the same length.
pub(crate) fn check_same_len(input: usize, out: usize) -> Result<(), Error> {
    if input == out {
        Ok(())
    } else {
        Err(Error::invalid(format!("dropout's input holds {} elements but its output {}", input, out)))
    }
}

/// A mutable slice as the C layer's (pointer, capacity in bytes).
pub(crate) fn out_parts<T: Element>(out: &mut [T]) -> (*mut std::os::raw::c_void, usize) {
    (out.as_mut_ptr().cast(), std::mem::size_of_val(out))
}

/// Writes elements `first .. first + out.len()` of `spec`'s tensor for
/// `state` into `out`, whose element type is the dtype.
///
/// Errors: `InvalidArgument` (bad parameters: low > high, std < 0, p outside
/// 0..=1, non-finite; a dtype the distribution does not make; an offset
/// that is not a multiple of 4; `numel` below first + count), `Overflow`.
pub fn sample<T: Element>(state: &PhiloxState, spec: &SampleSpec, first: u64, out: &mut [T]) -> Result<(), Error> {
    crate::check_library_version()?;
    let c = spec.c_spec(T::DTYPE)?;
    let count = out.len() as u64;
    let (ptr, capacity) = out_parts(out);
    // SAFETY: `ptr` is valid and aligned for `count` elements (`capacity` bytes).
    check(unsafe { sys::rngtrk_sample(&state.to_c(), &c, first, count, ptr, capacity) })
}

/// Writes the box from `start` of extent `local_shape` of a row-major
/// tensor of `global_shape` into `out` (row-major in the box): the same bits
/// as cutting the box out of the whole tensor.  `out.len()` must equal the
/// box's element count (checked before the call).
pub fn sample_slice<T: Element>(
    state: &PhiloxState,
    spec: &SampleSpec,
    global_shape: &[u64],
    start: &[u64],
    local_shape: &[u64],
    out: &mut [T],
) -> Result<(), Error> {
    crate::check_library_version()?;
    let shape = SliceBox::new(global_shape, start, local_shape)?.filling(out.len())?;
    let c = spec.c_spec(T::DTYPE)?;
    let (ptr, capacity) = out_parts(out);
    // SAFETY: the shapes hold ndim values each; `ptr` holds the box.
    check(shape.call(|ndim, global, start, local| unsafe {
        sys::rngtrk_sample_slice(&state.to_c(), &c, ndim, global, start, local, ptr, capacity)
    }))
}

/// Dropout of elements `first ..` in one pass, as torch's `x * mask *
/// scale` computes it, over `f32`, [`F16Bits`] or [`BF16Bits`] data (the
/// element type is the dtype): `out[i] = input[i] * scale` where element
/// first + i is kept by `spec`'s bernoulli mask (p = keep probability; the
/// scale is 1/p rounded to float, then to the dtype), else `input[i] * 0`
/// (-0 for a negative, NaN for NaN), computed in `f32` and rounded once to
/// the dtype (`rngtrk_dropout`).  `input` and `out` must have the same
/// length.
///
/// Errors: `InvalidArgument` (not bernoulli; p outside 0..=1 or not
/// finite; the torch-eager-cuda geometry; `numel` below first + count),
/// `Overflow`.
pub fn dropout<T: DropoutElement>(
    state: &PhiloxState,
    spec: &SampleSpec,
    first: u64,
    input: &[T],
    out: &mut [T],
) -> Result<(), Error> {
    crate::check_library_version()?;
    check_same_len(input.len(), out.len())?;
    let c = spec.c_dropout_spec(T::DTYPE)?;
    let (ptr, capacity) = out_parts(out);
    // SAFETY: both slices hold out.len() elements; distinct by Rust's borrows.
    check(unsafe {
        sys::rngtrk_dropout(&state.to_c(), &c, first, input.len() as u64, input.as_ptr().cast(), ptr, capacity)
    })
}

/// [`dropout`] in place.
pub fn dropout_in_place<T: DropoutElement>(
    state: &PhiloxState,
    spec: &SampleSpec,
    first: u64,
    data: &mut [T],
) -> Result<(), Error> {
    crate::check_library_version()?;
    let c = spec.c_dropout_spec(T::DTYPE)?;
    let count = data.len() as u64;
    let (ptr, capacity) = out_parts(data);
    // SAFETY: the library allows in == out; `ptr` holds data.len() elements.
    check(unsafe { sys::rngtrk_dropout(&state.to_c(), &c, first, count, ptr, ptr, capacity) })
}

/// [`dropout`] of the box from `start` of extent `local_shape` of a
/// row-major tensor of `global_shape`: `input` and `out` hold the box
/// (row-major), and the result equals the same box of the whole tensor's
/// dropout (`rngtrk_dropout_slice`).  Both lengths must equal the box's
/// element count (checked before the call).
pub fn dropout_slice<T: DropoutElement>(
    state: &PhiloxState,
    spec: &SampleSpec,
    global_shape: &[u64],
    start: &[u64],
    local_shape: &[u64],
    input: &[T],
    out: &mut [T],
) -> Result<(), Error> {
    crate::check_library_version()?;
    check_same_len(input.len(), out.len())?;
    let shape = SliceBox::new(global_shape, start, local_shape)?.filling(out.len())?;
    let c = spec.c_dropout_spec(T::DTYPE)?;
    let (ptr, capacity) = out_parts(out);
    let source = input.as_ptr().cast();
    // SAFETY: the shapes hold ndim values each; both slices hold the box.
    check(shape.call(|ndim, global, start, local| unsafe {
        sys::rngtrk_dropout_slice(&state.to_c(), &c, ndim, global, start, local, source, ptr, capacity)
    }))
}

/// [`dropout_slice`] in place.
pub fn dropout_slice_in_place<T: DropoutElement>(
    state: &PhiloxState,
    spec: &SampleSpec,
    global_shape: &[u64],
    start: &[u64],
    local_shape: &[u64],
    data: &mut [T],
) -> Result<(), Error> {
    crate::check_library_version()?;
    let shape = SliceBox::new(global_shape, start, local_shape)?.filling(data.len())?;
    let c = spec.c_dropout_spec(T::DTYPE)?;
    let (ptr, capacity) = out_parts(data);
    // SAFETY: the library allows in == out; `ptr` holds the box.
    check(shape.call(|ndim, global, start, local| unsafe {
        sys::rngtrk_dropout_slice(&state.to_c(), &c, ndim, global, start, local, ptr, ptr, capacity)
    }))
}

/// The CPU code path generation uses here: `"scalar"`, `"avx2"` or
/// `"avx512"` (chosen at load time; `RNGTRK_CPU` forces one).  Every path
/// gives the same bits.
pub fn cpu_path() -> &'static str {
    // SAFETY: a static NUL-terminated ASCII string, never NULL.
    unsafe { std::ffi::CStr::from_ptr(sys::rngtrk_cpu_path()) }.to_str().unwrap_or("?")
}
