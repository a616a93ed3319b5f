//! `cargo run --example sample -- ARGS`: the C `rngtrk sample` in Rust, on
//! the safe API, with the same flags, the same output byte for byte, the
//! same one-line errors and the same exit codes (0, 1 a data error, 2 a
//! usage error).  Python's `python3 -m rngtrk sample` is the third;
//! tests/sample_commands_test.py holds the three to that.  The parsing
//! rules are tools/cli/options.c's (see bindings/python/rngtrk/sample_command.py
//! for them in prose).  Arguments are bytes, as C sees them.
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::OsStringExt;
use std::process::exit;

use rngtrk::{BF16Bits, Element, ErrorKind, F16Bits, Layout, PhiloxState, SampleSpec};

const USAGE: &str = include_str!("../../../tools/cli/sample_usage.txt");
const LAYOUTS: [&str; 4] = ["stateless", "nvfuser", "torch-eager-cuda", "triton"];
const DISTS: [&str; 4] = ["bits", "uniform", "normal", "bernoulli"];
const DTYPES: [&str; 7] = ["u8", "u32", "u64", "f16", "bf16", "f32", "f64"];
/// What each distribution makes (indexes into DTYPES), the default first.
const MAKES: [&[usize]; 4] = [&[1, 2], &[5, 6, 3, 4], &[5, 6], &[0]];
const PARAMS: [&[&str]; 4] = [&[], &["--low", "--high"], &["--mean", "--std"], &["--p"]];
const ALL_PARAMS: [&str; 5] = ["--low", "--high", "--mean", "--std", "--p"];
const CHUNK: u64 = 1 << 16;

#[derive(Clone, Copy)]
enum Kind {
    Choice(&'static [&'static str]),
    U64,
    U32Pos,
    Double,
    Flag,
}

/// The options in the C table's order (closest() breaks ties by it).
const OPTIONS: [(&str, Kind); 16] = [
    ("--layout", Kind::Choice(&LAYOUTS)),
    ("--dist", Kind::Choice(&DISTS)),
    ("--dtype", Kind::Choice(&DTYPES)),
    ("--seed", Kind::U64),
    ("--offset", Kind::U64),
    ("--first", Kind::U64),
    ("--count", Kind::U64),
    ("--low", Kind::Double),
    ("--high", Kind::Double),
    ("--mean", Kind::Double),
    ("--std", Kind::Double),
    ("--p", Kind::Double),
    ("--sm-count", Kind::U32Pos),
    ("--max-threads-per-sm", Kind::U32Pos),
    ("--numel", Kind::U64),
    ("--bits", Kind::Flag),
];

#[derive(Clone, Copy)]
enum Value {
    Index(usize),
    Int(u64),
    Real(f64),
    Set,
}

/// A one-line error and its exit status.
struct Exit(i32, Vec<u8>);

fn usage(message: Vec<u8>) -> Exit {
    Exit(2, message)
}

/// `format!` into bytes, where arguments may be any bytes.
fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn distance(a: &[u8], b: &[u8]) -> Option<usize> {
    if a.len() >= 64 || b.len() >= 64 {
        return None;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut diagonal = row[0];
        row[0] = i;
        for j in 1..=b.len() {
            let up = row[j];
            row[j] = (diagonal + (a[i - 1] != b[j - 1]) as usize).min(up + 1).min(row[j - 1] + 1);
            diagonal = up;
        }
    }
    Some(row[b.len()])
}

fn closest<'a>(word: &[u8], names: &[&'a str]) -> Option<&'a str> {
    let mut best: Option<(&str, usize)> = None;
    for name in names {
        if let Some(d) = distance(word, name.as_bytes()) {
            if best.map_or(true, |(_, bd)| d < bd) {
                best = Some((name, d));
            }
        }
    }
    let (name, d) = best?;
    let allowed = if name.len() / 3 > 2 { name.len() / 3 } else { 2 };
    if d <= allowed {
        Some(name)
    } else {
        None
    }
}

fn is_decimal(s: &[u8]) -> bool {
    let mut i = 0;
    let mut digits = 0;
    let digit = |i: usize| i < s.len() && s[i].is_ascii_digit();
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        i += 1;
    }
    while digit(i) {
        i += 1;
        digits += 1;
    }
    if i < s.len() && s[i] == b'.' {
        i += 1;
        while digit(i) {
            i += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return false;
    }
    if i < s.len() && (s[i] == b'e' || s[i] == b'E') {
        i += 1;
        if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
            i += 1;
        }
        if !digit(i) {
            return false;
        }
        while digit(i) {
            i += 1;
        }
    }
    i == s.len()
}

fn parse_u64(name: &str, text: &[u8]) -> Result<u64, Exit> {
    let n = name.as_bytes();
    if text.first() == Some(&b'-') {
        return Err(usage(cat(&[n, b" must not be negative: ", text])));
    }
    if text.is_empty() || !text.iter().all(u8::is_ascii_digit) {
        return Err(usage(cat(&[n, b" needs a whole number, not '", text, b"'"])));
    }
    let mut value: u64 = 0;
    for &c in text {
        value = match value.checked_mul(10).and_then(|v| v.checked_add((c - b'0') as u64)) {
            Some(v) => v,
            None => return Err(usage(cat(&[n, b" is too large: ", text, b" (at most 2^64 - 1)"]))),
        };
    }
    Ok(value)
}

fn parse_value(name: &str, kind: Kind, text: &[u8]) -> Result<Value, Exit> {
    let n = name.as_bytes();
    match kind {
        Kind::U64 => parse_u64(name, text).map(Value::Int),
        Kind::U32Pos => {
            let v = parse_u64(name, text)?;
            if v == 0 {
                return Err(usage(cat(&[n, b" must be at least 1"])));
            }
            if v > u32::MAX as u64 {
                return Err(usage(cat(&[n, b" is too large: ", text, b" (at most 4294967295)"])));
            }
            Ok(Value::Int(v))
        }
        Kind::Double => {
            let finite_message = cat(&[n, b" must be a finite number, not '", text, b"'"]);
            if !is_decimal(text) {
                let bare = match text.first() {
                    Some(b'+') | Some(b'-') => &text[1..],
                    _ => text,
                };
                let lower = bare.to_ascii_lowercase();
                if lower == b"inf" || lower == b"infinity" || lower == b"nan" {
                    return Err(usage(finite_message));
                }
                return Err(usage(cat(&[n, b" needs a number, not '", text, b"'"])));
            }
            // Rust's parser takes this grammar, correctly rounded, as strtod.
            let v: f64 = std::str::from_utf8(text).ok().and_then(|t| t.parse().ok()).unwrap_or(f64::NAN);
            if !v.is_finite() {
                return Err(usage(finite_message));
            }
            Ok(Value::Real(v))
        }
        Kind::Choice(choices) => {
            if let Some(i) = choices.iter().position(|c| c.as_bytes() == text) {
                return Ok(Value::Index(i));
            }
            let list = choices.join(", ");
            Err(usage(match closest(text, choices) {
                Some(g) => cat(&[
                    n,
                    b": unknown value '",
                    text,
                    b"' (did you mean '",
                    g.as_bytes(),
                    b"'?); one of ",
                    list.as_bytes(),
                ]),
                None => cat(&[n, b": unknown value '", text, b"'; one of ", list.as_bytes()]),
            }))
        }
        Kind::Flag => Ok(Value::Set),
    }
}

/// The given options, by their index in OPTIONS.
fn parse_options(args: &[Vec<u8>]) -> Result<[Option<Value>; 16], Exit> {
    let names: Vec<&str> = OPTIONS.iter().map(|o| o.0).collect();
    let mut given = [None; 16];
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i][..];
        let eq = if arg.starts_with(b"--") { arg.iter().position(|&c| c == b'=') } else { None };
        let len = eq.unwrap_or(arg.len());
        let name = &arg[..len.min(63)];
        let found = if len < 64 { OPTIONS.iter().position(|o| o.0.as_bytes() == name) } else { None };
        let index = match found {
            Some(index) => index,
            None => {
                let guess = closest(name, &names);
                if !arg.starts_with(b"-") {
                    return Err(usage(cat(&[b"unexpected argument '", arg, b"'"])));
                }
                return Err(usage(match guess {
                    Some(g) => cat(&[b"unknown option ", name, b" (did you mean ", g.as_bytes(), b"?)"]),
                    None => cat(&[b"unknown option ", name, b" (see rngtrk help sample)"]),
                }));
            }
        };
        let (option, kind) = OPTIONS[index];
        if given[index].is_some() {
            return Err(usage(cat(&[option.as_bytes(), b" is given twice"])));
        }
        if let Kind::Flag = kind {
            if eq.is_some() {
                return Err(usage(cat(&[option.as_bytes(), b" takes no value"])));
            }
            given[index] = Some(Value::Set);
            i += 1;
            continue;
        }
        let value = match eq {
            Some(at) => &arg[at + 1..],
            None if i + 1 < args.len() => {
                i += 1;
                &args[i][..]
            }
            None => return Err(usage(cat(&[option.as_bytes(), b" needs a value"]))),
        };
        given[index] = Some(parse_value(option, kind, value)?);
        i += 1;
    }
    Ok(given)
}

/// C's `%.{precision}g` of a finite value (printf's rules: the exponent of
/// the %e form picks %e or %f; trailing zeros and a bare point removed).
fn format_g(x: f64, precision: usize) -> String {
    if x.is_infinite() {
        return if x < 0.0 { "-inf".into() } else { "inf".into() };
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let e_form = format!("{:.*e}", precision - 1, x);
    let (mantissa, exponent) = e_form.split_once('e').expect("{:e} has an exponent");
    let exponent: i32 = exponent.parse().expect("a decimal exponent");
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if exponent < -4 || exponent >= precision as i32 {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{}{:02}", trim(mantissa), sign, exponent.abs())
    } else {
        trim(&format!("{:.*}", (precision as i32 - 1 - exponent) as usize, x))
    }
}

/// One element's output line.
trait Print: Element {
    fn line(&self, raw: bool) -> String;
}
macro_rules! print_int {
    ($($t:ty),*) => {$(
        impl Print for $t {
            fn line(&self, raw: bool) -> String {
                if raw { format!("{:0w$x}\n", self, w = 2 * std::mem::size_of::<$t>()) } else { format!("{}\n", self) }
            }
        }
    )*};
}
print_int!(u8, u32, u64);
impl Print for F16Bits {
    fn line(&self, raw: bool) -> String {
        if raw {
            format!("{:04x}\n", self.0)
        } else {
            format!("{}\n", format_g(self.to_f32() as f64, 9))
        }
    }
}
impl Print for BF16Bits {
    fn line(&self, raw: bool) -> String {
        if raw {
            format!("{:04x}\n", self.0)
        } else {
            format!("{}\n", format_g(self.to_f32() as f64, 9))
        }
    }
}
impl Print for f32 {
    fn line(&self, raw: bool) -> String {
        if raw {
            format!("{:08x}\n", self.to_bits())
        } else {
            format!("{}\n", format_g(*self as f64, 9))
        }
    }
}
impl Print for f64 {
    fn line(&self, raw: bool) -> String {
        if raw {
            format!("{:016x}\n", self.to_bits())
        } else {
            format!("{}\n", format_g(*self, 17))
        }
    }
}

fn library_failure(e: rngtrk::Error) -> Exit {
    let code = if matches!(e.kind(), ErrorKind::InvalidArgument | ErrorKind::Overflow) { 2 } else { 1 };
    Exit(code, e.to_string().into_bytes()) // "<status>: <message>", the status named once, as C prints it
}

/// Streams the request in chunks; the first call checks it before anything prints.
fn draw<T: Print>(state: &PhiloxState, spec: &SampleSpec, first: u64, count: u64, raw: bool) -> Result<(), Exit> {
    let mut buffer = vec![T::default(); count.min(CHUNK) as usize];
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut done = 0;
    loop {
        let part = (count - done).min(CHUNK) as usize;
        rngtrk::sample(state, spec, first + done, &mut buffer[..part]).map_err(library_failure)?;
        if part == 0 {
            break;
        }
        let text: String = buffer[..part].iter().map(|v| v.line(raw)).collect();
        out.write_all(text.as_bytes()).map_err(|_| Exit(1, b"cannot write the output".to_vec()))?;
        done += part as u64;
        if done == count {
            break;
        }
    }
    out.flush().map_err(|_| Exit(1, b"cannot write the output".to_vec()))
}

fn run(args: &[Vec<u8>]) -> Result<(), Exit> {
    let given = parse_options(args)?;
    let get = |name: &str| given[OPTIONS.iter().position(|o| o.0 == name).expect("a known option")];
    let int = |name: &str, default: u64| match get(name) {
        Some(Value::Int(v)) => v,
        _ => default,
    };
    let real = |name: &str, default: f64| match get(name) {
        Some(Value::Real(v)) => v,
        _ => default,
    };
    let index = |name: &str, default: usize| match get(name) {
        Some(Value::Index(v)) => v,
        _ => default,
    };
    if get("--seed").is_none() || get("--count").is_none() {
        return Err(usage(b"needs --seed and --count (see rngtrk help sample)".to_vec()));
    }
    let (layout, dist) = (index("--layout", 0), index("--dist", 1));
    let dtype = index("--dtype", MAKES[dist][0]);
    if !MAKES[dist].contains(&dtype) {
        let list: Vec<&str> = MAKES[dist].iter().map(|&d| DTYPES[d]).collect();
        let message = format!("--dist {} makes --dtype {}, not {}", DISTS[dist], list.join(", "), DTYPES[dtype]);
        return Err(usage(message.into_bytes()));
    }
    for name in ALL_PARAMS {
        if get(name).is_some() && !PARAMS[dist].contains(&name) {
            return Err(usage(format!("{} does not apply to --dist {}", name, DISTS[dist]).into_bytes()));
        }
    }
    let (seed, offset, first, count, numel) =
        (int("--seed", 0), int("--offset", 0), int("--first", 0), int("--count", 0), int("--numel", 0));
    if offset % 4 != 0 {
        return Err(usage(b"--offset must be a multiple of 4 (offsets count 32-bit outputs, 4 per block)".to_vec()));
    }
    if count > u64::MAX - first {
        return Err(usage(b"--first + --count must stay below 2^64".to_vec()));
    }
    if numel != 0 && numel < first + count {
        let message = format!("--numel {} is smaller than --first + --count ({})", numel, first + count);
        return Err(usage(message.into_bytes()));
    }
    let mut spec = match dist {
        0 => SampleSpec::bits(),
        1 => SampleSpec::uniform(real("--low", 0.0), real("--high", 1.0)),
        2 => SampleSpec::normal(real("--mean", 0.0), real("--std", 1.0)),
        _ => SampleSpec::bernoulli(real("--p", 0.5)),
    };
    spec = spec.layout([Layout::Stateless, Layout::Nvfuser, Layout::TorchEagerCuda, Layout::Triton][layout]);
    if let Some(Value::Int(n)) = get("--sm-count") {
        spec = spec.sm_count(n as u32);
    }
    if let Some(Value::Int(n)) = get("--max-threads-per-sm") {
        spec = spec.max_threads_per_sm(n as u32);
    }
    // The whole request is one tensor, drawn in chunks that each see its size.
    spec = spec.numel(if numel != 0 { numel } else { first + count });
    let state = PhiloxState::new(seed, offset);
    let raw = get("--bits").is_some();
    match dtype {
        0 => draw::<u8>(&state, &spec, first, count, raw),
        1 => draw::<u32>(&state, &spec, first, count, raw),
        2 => draw::<u64>(&state, &spec, first, count, raw),
        3 => draw::<F16Bits>(&state, &spec, first, count, raw),
        4 => draw::<BF16Bits>(&state, &spec, first, count, raw),
        5 => draw::<f32>(&state, &spec, first, count, raw),
        _ => draw::<f64>(&state, &spec, first, count, raw),
    }
}

fn main() {
    let args: Vec<Vec<u8>> = std::env::args_os().skip(1).map(OsString::into_vec).collect();
    if args.iter().any(|a| a == b"--help" || a == b"-h") {
        let _ = std::io::stdout().write_all(USAGE.as_bytes()); // as C's fputs: a closed stdout is not an error here
        return;
    }
    if let Err(Exit(code, message)) = run(&args) {
        let mut err = std::io::stderr();
        let _ = err.write_all(&cat(&[b"rngtrk sample: ", &message, b"\n"]));
        exit(code);
    }
}
