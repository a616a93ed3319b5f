//! Checkpoint bytes as canonical JSON, the one format every tool prints.
use std::fmt::Write;

use crate::error::Error;
use crate::tracker::Tracker;

/// Writes `s` as a JSON string the way Python's
/// `json.dumps(..., ensure_ascii=False)` does.
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The canonical JSON line (without newline) of checkpoint bytes:
/// `{"format_version": N, "default": {"seed": S, "offset": O}, "states":
/// [{"name": "...", "seed": S, "offset": O}, ...]}`, keys in that order,
/// states in stored order: byte for byte what `rngtrk inspect` (C) and
/// `python3 -m rngtrk inspect` print.  Decoding goes through the library,
/// so damaged bytes give its usual error.
pub fn checkpoint_to_json(bytes: &[u8]) -> Result<String, Error> {
    let mut tracker = Tracker::new()?;
    tracker.load(bytes)?;
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]); // validated by load
    let default = tracker.default_state();
    let mut out = String::new();
    let _ = write!(
        out,
        "{{\"format_version\": {}, \"default\": {{\"seed\": {}, \"offset\": {}}}, \"states\": [",
        version, default.seed, default.offset
    );
    for (i, (name, state)) in tracker.states()?.iter().enumerate() {
        out.push_str(if i == 0 { "{\"name\": " } else { ", {\"name\": " });
        push_json_string(&mut out, name);
        let _ = write!(out, ", \"seed\": {}, \"offset\": {}}}", state.seed, state.offset);
    }
    out.push_str("]}");
    Ok(out)
}
