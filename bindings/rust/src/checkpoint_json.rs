//! Checkpoint bytes as canonical JSON, the one format every tool prints.
use std::fmt::Write;

use crate::error::Error;
use crate::sys;
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
/// states in stored order, and for a version-2 checkpoint that records who
/// it belongs to, last, `"origin": {"policy": "megatron", "seed": S,
/// "flags": [...], "rank": {"tp": T, "pp": P, "dp": D, "ep": E, "etp": F}}`:
/// byte for byte what `rngtrk inspect` (C) and `python3 -m rngtrk inspect`
/// print.  Decoding goes through the library,
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
    out.push(']');
    let origin = tracker.origin_raw()?;
    if version >= 2 && origin.present != 0 {
        let policy = ["megatron", "slapo", "derived"].get(origin.policy as usize).copied().unwrap_or("?");
        let flags: Vec<&str> = [
            (sys::RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT, "\"dp-random-init\""),
            (sys::RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED, "\"always-enable-tp-seed\""),
        ]
        .iter()
        .filter(|(bit, _)| origin.flags & bit != 0)
        .map(|(_, name)| *name)
        .collect();
        let r = origin.rank;
        let _ = write!(
            out,
            ", \"origin\": {{\"policy\": \"{}\", \"seed\": {}, \"flags\": [{}], \"rank\": {{\"tp\": {}, \"pp\": {}, \"dp\": {}, \"ep\": {}, \"etp\": {}}}}}",
            policy,
            origin.seed,
            flags.join(", "),
            r.tp,
            r.pp,
            r.dp,
            r.ep,
            r.etp
        );
    }
    out.push('}');
    Ok(out)
}
