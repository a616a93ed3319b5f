// SPDX-License-Identifier: Apache-2.0
//! The generic sampling API against the shared vectors (written by an
//! independent Python implementation of docs/streams.md), and its rules:
//! slices equal cuts of the whole, tracker draws advance by the layout's
//! increment, lengths are checked before the call, and a refused call
//! changes nothing.
mod common;

use rngtrk::{BF16Bits, Distribution, Dtype, Element, ErrorKind, F16Bits, Layout, PhiloxState, SampleSpec, Tracker};

/// The spec of a vector line: its names are parsed by the library.
fn spec_of(fields: &[String]) -> SampleSpec {
    let layout: Layout = fields[0].parse().unwrap();
    let (a, b): (f64, f64) = (fields[7].parse().unwrap(), fields[8].parse().unwrap());
    let distribution = match fields[1].parse().unwrap() {
        Distribution::Uniform { .. } => Distribution::Uniform { low: a, high: b },
        Distribution::Normal { .. } => Distribution::Normal { mean: a, std: b },
        Distribution::Bernoulli { .. } => Distribution::Bernoulli { p: a },
        other => other,
    };
    SampleSpec::new(distribution)
        .layout(layout)
        .sm_count(fields[9].parse().unwrap())
        .max_threads_per_sm(fields[10].parse().unwrap())
        .numel(fields[11].parse().unwrap())
}

/// Hex bit patterns of every element, as the vector file writes them.
trait Bits: Element {
    fn hex(&self) -> String;
}
impl Bits for u8 {
    fn hex(&self) -> String {
        format!("{:02x}", self)
    }
}
impl Bits for u32 {
    fn hex(&self) -> String {
        format!("{:08x}", self)
    }
}
impl Bits for u64 {
    fn hex(&self) -> String {
        format!("{:016x}", self)
    }
}
impl Bits for F16Bits {
    fn hex(&self) -> String {
        format!("{:04x}", self.0)
    }
}
impl Bits for BF16Bits {
    fn hex(&self) -> String {
        format!("{:04x}", self.0)
    }
}
impl Bits for f32 {
    fn hex(&self) -> String {
        format!("{:08x}", self.to_bits())
    }
}
impl Bits for f64 {
    fn hex(&self) -> String {
        format!("{:016x}", self.to_bits())
    }
}

fn drawn<T: Bits>(spec: &SampleSpec, state: PhiloxState, first: u64, count: usize) -> Vec<String> {
    let mut out = vec![T::default(); count];
    rngtrk::sample(&state, spec, first, &mut out).unwrap();
    out.iter().map(|v| v.hex()).collect()
}

fn sample_lines() -> Vec<Vec<String>> {
    String::from_utf8(common::read_vector("sample_vectors.txt"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| l.split(' ').map(String::from).collect())
        .collect()
}

#[test]
fn every_sample_vector_matches_with_the_element_type_as_dtype() {
    let mut checked = 0;
    for line in sample_lines().iter().filter(|l| l[0] == "sample") {
        let f = &line[1..];
        let spec = spec_of(f);
        let state = PhiloxState::new(f[3].parse().unwrap(), f[4].parse().unwrap());
        let (first, count): (u64, usize) = (f[5].parse().unwrap(), f[6].parse().unwrap());
        let got = match f[2].as_str() {
            "u8" => drawn::<u8>(&spec, state, first, count),
            "u32" => drawn::<u32>(&spec, state, first, count),
            "u64" => drawn::<u64>(&spec, state, first, count),
            "f16" => drawn::<F16Bits>(&spec, state, first, count),
            "bf16" => drawn::<BF16Bits>(&spec, state, first, count),
            "f32" => drawn::<f32>(&spec, state, first, count),
            "f64" => drawn::<f64>(&spec, state, first, count),
            other => panic!("dtype {}", other),
        };
        assert_eq!(got, f[12..].to_vec(), "{}", line.join(" "));
        checked += 1;
    }
    assert!(checked >= 150, "only {} sample vectors", checked);
}

#[test]
fn every_increment_vector_matches() {
    let mut checked = 0;
    for line in sample_lines().iter().filter(|l| l[0] == "increment") {
        let mut fields: Vec<String> = line[1..4].to_vec();
        fields.extend(["0", "0", "0", "0", "0", "1", "132", "2048", "0"].iter().map(|s| s.to_string()));
        let spec = spec_of(&fields);
        let dtype: Dtype = line[3].parse().unwrap();
        let numel: u64 = line[4].parse().unwrap();
        assert_eq!(spec.offset_increment(dtype, numel).unwrap(), line[5].parse::<u64>().unwrap(), "{}", line.join(" "));
        checked += 1;
    }
    assert!(checked > 10, "only {} increment vectors", checked);
}

#[test]
fn half_types_decode_their_bits() {
    assert_eq!(F16Bits(0x3C00).to_f32(), 1.0);
    assert_eq!(F16Bits(0xC000).to_f32(), -2.0);
    assert_eq!(F16Bits(0x0001).to_f32(), f32::powi(2.0, -24));
    assert_eq!(F16Bits(0x7BFF).to_f32(), 65504.0);
    assert!(F16Bits(0x7C00).to_f32().is_infinite() && F16Bits(0x7E00).to_f32().is_nan());
    assert_eq!(BF16Bits(0x3F80).to_f32(), 1.0);
    assert_eq!(BF16Bits(0xC0A0).to_f32(), -5.0);
}

/// The size of each element type is the library's size of its dtype.
fn width_is_the_librarys<T: Element>() -> Dtype {
    assert_eq!(std::mem::size_of::<T>(), T::DTYPE.size(), "{}", T::DTYPE);
    T::DTYPE
}

#[test]
fn every_element_type_has_the_librarys_width_and_every_dtype_an_element_type() {
    let dtypes = [
        width_is_the_librarys::<u8>(),
        width_is_the_librarys::<u32>(),
        width_is_the_librarys::<u64>(),
        width_is_the_librarys::<F16Bits>(),
        width_is_the_librarys::<BF16Bits>(),
        width_is_the_librarys::<f32>(),
        width_is_the_librarys::<f64>(),
    ];
    assert_eq!(Dtype::all(), dtypes.to_vec());
    assert_eq!(Dtype::F16.size(), 2);
}

#[test]
fn names_are_the_librarys_both_ways() {
    // Every value the library lists, named and parsed back.
    let layouts = Layout::all();
    assert_eq!(layouts, vec![Layout::Stateless, Layout::Nvfuser, Layout::TorchEagerCuda, Layout::Triton]);
    for layout in layouts {
        assert_eq!(layout.name().parse::<Layout>().unwrap(), layout);
        assert_eq!(layout.to_string(), layout.name());
    }
    assert_eq!(Layout::TorchEagerCuda.name(), "torch-eager-cuda");
    for dtype in Dtype::all() {
        assert_eq!(Dtype::from_name(dtype.name()).unwrap(), dtype);
    }
    assert_eq!(Dtype::BF16.to_string(), "bf16");
    // A distribution parses with the library's default parameters.
    assert_eq!("bits".parse::<Distribution>().unwrap(), Distribution::Bits);
    assert_eq!("uniform".parse::<Distribution>().unwrap(), Distribution::Uniform { low: 0.0, high: 1.0 });
    assert_eq!("normal".parse::<Distribution>().unwrap(), Distribution::Normal { mean: 0.0, std: 1.0 });
    assert_eq!(Distribution::from_name("bernoulli").unwrap(), Distribution::Bernoulli { p: 0.5 });
    assert_eq!(Distribution::Normal { mean: 3.0, std: 2.0 }.name(), "normal");

    // An unknown name is the library's error, which lists the names.
    let e = "torch_eager_cuda".parse::<Layout>().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("stateless, nvfuser, torch-eager-cuda or triton"), "{}", e);
    let e = Dtype::from_name("f17").unwrap_err();
    assert!(e.message().contains("u8, u32, u64, f16, bf16, f32 or f64"), "{}", e);
    let e = "gauss".parse::<Distribution>().unwrap_err();
    assert!(e.message().contains("bits, uniform, normal or bernoulli"), "{}", e);
    // C cannot see past a NUL: such a name still gets the library's answer.
    let e = "f32\0".parse::<Dtype>().unwrap_err();
    assert!(e.message().contains(r#""f32\0""#) && e.message().contains("f32 or f64"), "{}", e);
    for bad in ["", "F32", " f32", "f32\0x"] {
        assert_eq!(bad.parse::<Dtype>().unwrap_err().kind(), ErrorKind::InvalidArgument, "{:?}", bad);
    }
}

#[test]
fn a_slice_equals_the_same_box_of_the_whole_tensor_for_every_layout() {
    let state = PhiloxState::new(77, 12);
    for layout in [Layout::Stateless, Layout::Nvfuser, Layout::TorchEagerCuda] {
        let spec = SampleSpec::normal(0.5, 2.0).layout(layout).sm_count(2).max_threads_per_sm(256);
        let mut whole = vec![0f64; 6 * 10];
        rngtrk::sample(&state, &spec.numel(60), 0, &mut whole).unwrap();
        let mut tile = vec![0f64; 3 * 4];
        rngtrk::sample_slice(&state, &spec, &[6, 10], &[2, 5], &[3, 4], &mut tile).unwrap();
        for r in 0..3 {
            for c in 0..4 {
                assert_eq!(tile[r * 4 + c].to_bits(), whole[(2 + r) * 10 + 5 + c].to_bits(), "{:?}", layout);
            }
        }
    }
}

#[test]
fn a_range_equals_the_same_range_of_a_longer_call() {
    let state = PhiloxState::new(5, 0);
    let spec = SampleSpec::uniform(-1.0, 1.0).threads(2);
    let mut long = vec![0f32; 1000];
    rngtrk::sample(&state, &spec, 0, &mut long).unwrap();
    let mut part = vec![0f32; 333];
    rngtrk::sample(&state, &spec, 101, &mut part).unwrap();
    assert_eq!(part, long[101..434].to_vec());
}

#[test]
fn tracker_draws_come_from_the_active_state_and_advance_by_the_increment() {
    let mut t = Tracker::new().unwrap();
    t.add("model-parallel-rng", 3952).unwrap();
    let spec = SampleSpec::uniform(0.0, 1.0).layout(Layout::TorchEagerCuda).sm_count(4);
    let mut x = vec![0f32; 5000];
    let before;
    {
        let mut fork = t.fork("model-parallel-rng").unwrap();
        before = fork.sample(&spec, &mut x).unwrap();
    }
    assert_eq!(before, PhiloxState::new(3952, 0));
    let step = spec.offset_increment(Dtype::F32, 5000).unwrap();
    assert_eq!(t.state("model-parallel-rng").unwrap(), PhiloxState::new(3952, step));
    let mut expected = vec![0f32; 5000];
    rngtrk::sample(&before, &spec, 0, &mut expected).unwrap();
    assert_eq!(x, expected);
    assert_eq!(t.default_state(), PhiloxState::new(0, 0), "the default state did not move");

    // A slice draw moves the state by the whole tensor's increment.
    let mut tile = vec![0u32; 4];
    let s = t.sample_slice(&SampleSpec::bits(), &[4, 4], &[1, 0], &[1, 4], &mut tile).unwrap();
    assert_eq!(s, PhiloxState::new(0, 0));
    assert_eq!(t.default_state(), PhiloxState::new(0, 16), "4 * ceil(16 / 4)");
}

#[test]
fn dropout_scales_kept_elements_and_zeroes_the_rest() {
    let state = PhiloxState::new(9, 4);
    let spec = SampleSpec::bernoulli(0.8);
    let input: Vec<f32> = (0..999).map(|i| i as f32 * 0.5 + 1.0).collect();
    let mut out = vec![0f32; 999];
    rngtrk::dropout(&state, &spec, 3, &input, &mut out).unwrap();
    let mut mask = vec![0u8; 999];
    rngtrk::sample(&state, &spec, 3, &mut mask).unwrap();
    let scale = 1.0f32 / 0.8f32;
    for i in 0..999 {
        let want = if mask[i] == 1 { input[i] * scale } else { 0.0 };
        assert_eq!(out[i].to_bits(), want.to_bits(), "element {}", i);
    }
    let mut data = input.clone();
    rngtrk::dropout_in_place(&state, &spec, 3, &mut data).unwrap();
    assert_eq!(data, out);

    let mut t = Tracker::new().unwrap();
    t.manual_seed(9).unwrap();
    t.set_default_state(PhiloxState::new(9, 4)).unwrap();
    let mut via_tracker = input.clone();
    assert_eq!(t.dropout_in_place(&spec, &mut via_tracker[3..]).unwrap(), state);
    let mut direct = input[3..].to_vec();
    rngtrk::dropout_in_place(&state, &spec, 0, &mut direct).unwrap();
    assert_eq!(via_tracker[3..].to_vec(), direct);
}

#[test]
fn lengths_that_disagree_are_refused_before_the_call_and_nothing_moves() {
    let mut t = Tracker::new().unwrap();
    t.add("a", 1).unwrap();
    let before = common::snapshot(&t);
    let mut small = vec![0f32; 5];
    let e = t.sample_slice(&SampleSpec::uniform(0.0, 1.0), &[4, 4], &[0, 0], &[2, 3], &mut small).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("box holds 6 elements but the output holds 5"), "{}", e);
    let e = t.sample_slice(&SampleSpec::uniform(0.0, 1.0), &[4, 4], &[0], &[2, 3], &mut small).unwrap_err();
    assert!(e.message().contains("same number of dimensions"), "{}", e);
    let e = t.sample_slice(&SampleSpec::bits(), &[1, 1], &[0, 0], &[u64::MAX, 2], &mut [0u32; 1]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
    let e = t.dropout(&SampleSpec::bernoulli(0.5), &[1.0; 4], &mut [0.0; 3]).unwrap_err();
    assert!(e.message().contains("input holds 4 elements but its output 3"), "{}", e);
    // The library's rule, refused by it: dropout's mask is a bernoulli one.
    let e = t.dropout(&SampleSpec::uniform(0.0, 1.0), &[1.0; 3], &mut [0.0; 3]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("bernoulli"), "{}", e);
    assert_eq!(common::snapshot(&t), before);
}

#[test]
fn bad_parameters_and_dtypes_are_the_librarys_errors_and_nothing_moves() {
    let mut t = Tracker::new().unwrap();
    let before = common::snapshot(&t);
    let cases: Vec<(SampleSpec, &str)> = vec![
        (SampleSpec::uniform(2.0, 1.0), "low"),
        (SampleSpec::normal(0.0, -1.0), "std"),
        (SampleSpec::uniform(0.0, f64::NAN), "finite"),
        (SampleSpec::uniform(0.0, 1.0).threads(65), "threads"),
    ];
    for (spec, word) in cases {
        let e = t.sample(&spec, &mut [0f32; 4]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{}", e);
        assert!(e.message().contains(word), "{:?}: {}", spec, e);
    }
    let e = t.sample(&SampleSpec::bernoulli(1.5), &mut [0u8; 4]).unwrap_err();
    assert!(e.message().contains('p'), "{}", e);
    // The element type is the dtype: bits cannot be f32.
    let e = t.sample(&SampleSpec::bits(), &mut [0f32; 4]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(common::snapshot(&t), before);
    // An offset that is not a multiple of 4 in a free call.
    let e = rngtrk::sample(&PhiloxState::new(1, 2), &SampleSpec::bits(), 0, &mut [0u32; 1]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = rngtrk::sample(&PhiloxState::new(1, 0), &SampleSpec::bits(), u64::MAX, &mut [0u32; 2]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Overflow);
}

#[test]
fn cpu_path_names_a_known_engine() {
    assert!(["scalar", "avx2", "avx512"].contains(&rngtrk::cpu_path()), "{}", rngtrk::cpu_path());
}
