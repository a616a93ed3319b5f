// SPDX-License-Identifier: Apache-2.0
//! The Rust driver of the cross-language draw test
//! (`tests/cross_language/run.py`): draws each case of a case file (the
//! format: `tests/cross_language/cases.py`) through the safe crate's
//! sampling and tracker-draw API and prints one result line per case, as
//! the C and Python drivers do.
//!
//! `cargo run --offline --example draw_cases -- CASE_FILE`
//!
//! Lines: `ok <hex>` (the output's bytes as they lie in memory, `-` for
//! none), `error <status>`, each followed by ` offset=<n>` for tracker cases
//! (the named state's offset afterwards), or `unsupported <why>` for a case
//! this driver cannot express.
use std::io::Write;

use rngtrk::{BF16Bits, DropoutElement, Element, Error, F16Bits, ForkGuard, Layout, PhiloxState, SampleSpec, Tracker};

/// The tracker cases' named state (as `cases.py`'s STATE_NAME).
const STATE_NAME: &str = "xlang-rng";

/// One case: its `key=value` tokens.
struct Case<'a> {
    tokens: Vec<(&'a str, &'a str)>,
}

impl<'a> Case<'a> {
    fn parse(line: &'a str) -> Result<Case<'a>, String> {
        let mut tokens = Vec::new();
        for token in line.split_whitespace() {
            match token.find('=') {
                Some(at) => tokens.push((&token[..at], &token[at + 1..])),
                None => return Err(format!("token {:?} has no '='", token)),
            }
        }
        Ok(Case { tokens })
    }

    fn get(&self, key: &str) -> Option<&'a str> {
        self.tokens.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    fn need(&self, key: &str) -> Result<&'a str, String> {
        self.get(key).ok_or_else(|| format!("no {}", key))
    }

    fn u64(&self, key: &str) -> Result<u64, String> {
        let text = self.need(key)?;
        text.parse().map_err(|_| format!("{}={}", key, text))
    }

    fn u32_opt(&self, key: &str) -> Result<Option<u32>, String> {
        match self.get(key) {
            None => Ok(None),
            Some(text) => text.parse().map(Some).map_err(|_| format!("{}={}", key, text)),
        }
    }

    fn real(&self, key: &str) -> Result<f64, String> {
        let text = self.need(key)?;
        text.parse().map_err(|_| format!("{}={}", key, text))
    }

    fn dims(&self, key: &str) -> Result<Vec<u64>, String> {
        let text = self.need(key)?;
        if text.is_empty() {
            return Ok(Vec::new());
        }
        text.split(',').map(|v| v.parse().map_err(|_| format!("{}={}", key, text))).collect()
    }
}

/// What a case made: the output bytes, or the library's error.
type Drawn = Result<Vec<u8>, Error>;

/// An element's bytes as they lie in memory (the C and Python drivers
/// print memory too).
trait NativeBytes {
    fn put(&self, out: &mut Vec<u8>);
}

macro_rules! native_bytes {
    ($($t:ty),*) => {$(
        impl NativeBytes for $t {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
        }
    )*};
}
native_bytes!(u8, u32, u64, f32, f64);

impl NativeBytes for F16Bits {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_ne_bytes());
    }
}

impl NativeBytes for BF16Bits {
    fn put(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.0.to_ne_bytes());
    }
}

fn bytes_of<T: NativeBytes>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(std::mem::size_of_val(values));
    for v in values {
        v.put(&mut out);
    }
    out
}

fn layout_of(name: &str) -> Result<Layout, String> {
    match name {
        "stateless" => Ok(Layout::Stateless),
        "nvfuser" => Ok(Layout::Nvfuser),
        "torch-eager-cuda" => Ok(Layout::TorchEagerCuda),
        "triton" => Ok(Layout::Triton),
        _ => Err(format!("layout {}", name)),
    }
}

/// The case's spec: `dist` with its parameters (bernoulli for dropout), the
/// layout and the optional fields.
fn spec_of(case: &Case, dist: &str) -> Result<SampleSpec, String> {
    let mut spec = match dist {
        "bits" => SampleSpec::bits(),
        "uniform" => SampleSpec::uniform(case.real("low")?, case.real("high")?),
        "normal" => SampleSpec::normal(case.real("mean")?, case.real("std")?),
        "bernoulli" => SampleSpec::bernoulli(case.real("p")?),
        _ => return Err(format!("dist {}", dist)),
    }
    .layout(layout_of(case.need("layout")?)?);
    if let Some(n) = case.u32_opt("sm_count")? {
        spec = spec.sm_count(n);
    }
    if let Some(n) = case.u32_opt("max_threads_per_sm")? {
        spec = spec.max_threads_per_sm(n);
    }
    if case.get("numel").is_some() {
        spec = spec.numel(case.u64("numel")?);
    }
    if let Some(n) = case.u32_opt("threads")? {
        spec = spec.threads(n);
    }
    Ok(spec)
}

/// in[i] = float((i * 7) % 23) - 11.
fn dropout_input(count: usize) -> Vec<f32> {
    (0..count as u64).map(|i| ((i * 7) % 23) as f32 - 11.0).collect()
}

/// A dropout data type: dropout's input of it (the small integers above are
/// exact in f16 and bf16 too).
trait DropoutData: DropoutElement + NativeBytes {
    fn from_small_integer(v: f32) -> Self;
}
impl DropoutData for f32 {
    fn from_small_integer(v: f32) -> Self {
        v
    }
}
impl DropoutData for BF16Bits {
    fn from_small_integer(v: f32) -> Self {
        BF16Bits((v.to_bits() >> 16) as u16)
    }
}
impl DropoutData for F16Bits {
    fn from_small_integer(v: f32) -> Self {
        // Rebias the exponent; the 13 low mantissa bits are zero here.
        let b = v.to_bits();
        let sign = ((b >> 16) & 0x8000) as u16;
        if b & 0x7FFF_FFFF == 0 {
            return F16Bits(sign);
        }
        F16Bits(sign | ((((b >> 23) & 0xFF) - 112) << 10) as u16 | ((b >> 13) & 0x3FF) as u16)
    }
}

/// A dropout or dslice case (rngtrk::dropout, rngtrk::dropout_slice) over data of type `T`.
fn dropout_typed<T: DropoutData>(
    case: &Case,
    op: &str,
    spec: &SampleSpec,
    state: PhiloxState,
) -> Result<Drawn, String> {
    if op == "dslice" {
        let (global, start, local) = (case.dims("shape")?, case.dims("start")?, case.dims("box")?);
        let input: Vec<T> = dropout_input(box_len(&local)?).into_iter().map(T::from_small_integer).collect();
        let mut out = vec![T::default(); input.len()];
        let status = rngtrk::dropout_slice(&state, spec, &global, &start, &local, &input, &mut out);
        return Ok(status.map(|()| bytes_of(&out)));
    }
    let input: Vec<T> = dropout_input(count_of(case)?).into_iter().map(T::from_small_integer).collect();
    let mut out = vec![T::default(); input.len()];
    let status = rngtrk::dropout(&state, spec, case.u64("first")?, &input, &mut out);
    Ok(status.map(|()| bytes_of(&out)))
}

fn count_of(case: &Case) -> Result<usize, String> {
    let count = case.u64("count")?;
    usize::try_from(count).map_err(|_| format!("count={}", count))
}

/// The box's element count (the cases' boxes are small).
fn box_len(local: &[u64]) -> Result<usize, String> {
    let n = local.iter().try_fold(1u64, |n, &d| n.checked_mul(d)).ok_or("box too large")?;
    usize::try_from(n).map_err(|_| "box too large".to_string())
}

/// Where a draw comes from: a state, or the tracker's active state.
enum Source<'t> {
    State(PhiloxState),
    Tracker(&'t mut Tracker),
}

/// `draw` inside a fork of the named state, restored afterwards (a failed
/// restore is reported when the draw itself succeeded).
fn in_fork(
    tracker: &mut Tracker,
    draw: impl FnOnce(&mut ForkGuard) -> Result<PhiloxState, Error>,
) -> Result<(), Error> {
    let mut guard = tracker.fork(STATE_NAME)?;
    let drawn = draw(&mut guard).map(|_| ());
    drawn.and(guard.restore())
}

/// A sample or slice case with outputs of type `T`.
fn draw_typed<T: Element + NativeBytes>(
    case: &Case,
    op: &str,
    spec: &SampleSpec,
    source: Source,
) -> Result<Drawn, String> {
    if op == "slice" {
        let (global, start, local) = (case.dims("shape")?, case.dims("start")?, case.dims("box")?);
        let mut out = vec![T::default(); box_len(&local)?];
        let status = match source {
            Source::State(state) => rngtrk::sample_slice(&state, spec, &global, &start, &local, &mut out),
            Source::Tracker(tracker) => in_fork(tracker, |g| g.sample_slice(spec, &global, &start, &local, &mut out)),
        };
        return Ok(status.map(|()| bytes_of(&out)));
    }
    let mut out = vec![T::default(); count_of(case)?];
    let status = match source {
        Source::State(state) => rngtrk::sample(&state, spec, case.u64("first")?, &mut out),
        Source::Tracker(tracker) => in_fork(tracker, |g| g.sample(spec, &mut out)),
    };
    Ok(status.map(|()| bytes_of(&out)))
}

/// The draw of a case, from `source`; Err for a case this driver cannot express.
fn draw(case: &Case, op: &str, source: Source) -> Result<Drawn, String> {
    if op == "dropout" || op == "dslice" {
        let spec = spec_of(case, "bernoulli")?;
        return match source {
            // The data's dtype is the element type.
            Source::State(state) => match case.need("dtype")? {
                "f32" => dropout_typed::<f32>(case, op, &spec, state),
                "f16" => dropout_typed::<F16Bits>(case, op, &spec, state),
                "bf16" => dropout_typed::<BF16Bits>(case, op, &spec, state),
                other => Err(format!("dropout dtype {}", other)),
            },
            // tdropout: rngtrk_tracker_dropout_f32 over f32 data.
            Source::Tracker(tracker) if op == "dropout" => {
                let input = dropout_input(count_of(case)?);
                let mut out = vec![0f32; input.len()];
                let status = in_fork(tracker, |g| g.dropout(&spec, &input, &mut out));
                Ok(status.map(|()| bytes_of(&out)))
            }
            Source::Tracker(_) => Err(format!("op t{}", op)),
        };
    }
    if op != "sample" && op != "slice" {
        return Err(format!("op {}", op));
    }
    let spec = spec_of(case, case.need("dist")?)?;
    // The output's element type is the dtype.
    match case.need("dtype")? {
        "u8" => draw_typed::<u8>(case, op, &spec, source),
        "u32" => draw_typed::<u32>(case, op, &spec, source),
        "u64" => draw_typed::<u64>(case, op, &spec, source),
        "f16" => draw_typed::<F16Bits>(case, op, &spec, source),
        "bf16" => draw_typed::<BF16Bits>(case, op, &spec, source),
        "f32" => draw_typed::<f32>(case, op, &spec, source),
        "f64" => draw_typed::<f64>(case, op, &spec, source),
        other => Err(format!("dtype {}", other)),
    }
}

fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".to_string();
    }
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(2 * bytes.len());
    for b in bytes {
        text.push(DIGITS[(b >> 4) as usize] as char);
        text.push(DIGITS[(b & 15) as usize] as char);
    }
    text
}

fn outcome(drawn: &Drawn) -> String {
    match drawn {
        Ok(bytes) => format!("ok {}", hex(bytes)),
        Err(error) => format!("error {}", error.code()),
    }
}

/// The result line of one case line.
fn result(line: &str) -> Result<String, String> {
    let case = Case::parse(line)?;
    let op = case.need("op")?;
    let state = PhiloxState::new(case.u64("seed")?, case.u64("offset")?);
    if !op.starts_with('t') {
        return Ok(outcome(&draw(&case, op, Source::State(state))?));
    }
    // A tracker case: the named state added with the seed and set to (seed,
    // offset); the draw inside its fork; the state's offset afterwards.
    let mut tracker = Tracker::new().map_err(|e| e.to_string())?;
    tracker.add(STATE_NAME, state.seed).map_err(|e| e.to_string())?;
    let drawn = match tracker.set_state(STATE_NAME, state) {
        Ok(()) => draw(&case, &op[1..], Source::Tracker(&mut tracker))?,
        Err(error) => Err(error),
    };
    let after = tracker.state(STATE_NAME).map_err(|e| e.to_string())?;
    Ok(format!("{} offset={}", outcome(&drawn), after.offset))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: draw_cases CASE_FILE");
        std::process::exit(2);
    }
    let text = match std::fs::read_to_string(&args[1]) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("{}: {}", args[1], error);
            std::process::exit(2);
        }
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for line in text.lines() {
        let shown = result(line).unwrap_or_else(|why| format!("unsupported {}", why));
        if writeln!(out, "{}", shown).is_err() {
            std::process::exit(2);
        }
    }
    if out.flush().is_err() {
        std::process::exit(2);
    }
}
