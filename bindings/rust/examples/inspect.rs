//! `cargo run --example inspect -- FILE`: prints a checkpoint as one line of
//! canonical JSON, byte for byte what `rngtrk inspect FILE` (C) and
//! `python3 -m rngtrk inspect FILE` print, with the same one-line errors and
//! exit codes.
use std::ffi::CStr;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::raw::{c_char, c_int};
use std::process::ExitCode;

const MAGIC: &[u8; 8] = b"RNGTRKCK";
const HEADER_PREFIX_BYTES: usize = 20; // magic 8, format_version u32 LE, total_length u64 LE

extern "C" {
    fn strerror(errnum: c_int) -> *const c_char;
}

/// The C library's wording for an I/O error, as the C tool prints it.
fn describe(error: &io::Error) -> String {
    match error.raw_os_error() {
        // SAFETY: strerror returns a valid NUL-terminated string for any code.
        Some(code) => unsafe { CStr::from_ptr(strerror(code)) }.to_string_lossy().into_owned(),
        None => error.to_string(),
    }
}

/// The file's bytes.  The header is read first, so a foreign file, or one
/// whose size disagrees with its declared length, is refused without
/// reading the rest.
fn read_checkpoint(path: &str) -> Result<Vec<u8>, String> {
    let mut file = File::open(path).map_err(|e| describe(&e))?;
    if file.metadata().map(|m| m.is_dir()).unwrap_or(false) {
        return Err(describe(&io::Error::from_raw_os_error(21))); // EISDIR, as C and Python say
    }
    let mut head = Vec::with_capacity(HEADER_PREFIX_BYTES);
    (&mut file).take(HEADER_PREFIX_BYTES as u64).read_to_end(&mut head).map_err(|e| describe(&e))?;
    if head.len() < MAGIC.len() || &head[..MAGIC.len()] != MAGIC {
        return Err("not an rngtrk checkpoint (bad magic)".into());
    }
    if head.len() < HEADER_PREFIX_BYTES {
        return Err("truncated checkpoint header".into());
    }
    let version = u32::from_le_bytes([head[8], head[9], head[10], head[11]]);
    if version != 1 && version != 2 {
        return Err("unsupported checkpoint format version".into());
    }
    let declared = u64::from_le_bytes(head[12..20].try_into().expect("8 bytes"));
    let size = file.seek(SeekFrom::End(0)).map_err(|_| "cannot seek (not a regular file?)".to_string())?;
    if size != declared {
        return Err(if size < declared { "truncated checkpoint" } else { "trailing bytes after the checkpoint" }.into());
    }
    file.seek(SeekFrom::Start(0)).map_err(|e| describe(&e))?;
    let mut bytes = Vec::with_capacity(size as usize);
    file.read_to_end(&mut bytes).map_err(|_| "read error".to_string())?;
    Ok(bytes)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 1 {
        eprintln!("rngtrk inspect: needs one FILE (usage: inspect FILE)");
        return ExitCode::from(2);
    }
    let path = &args[0];
    let result = read_checkpoint(path).and_then(|bytes| rngtrk::checkpoint_to_json(&bytes).map_err(|e| e.to_string()));
    match result {
        Ok(line) => {
            let mut out = io::stdout().lock();
            if writeln!(out, "{}", line).and_then(|_| out.flush()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("rngtrk inspect: {}: {}", path, message);
            ExitCode::from(1)
        }
    }
}
