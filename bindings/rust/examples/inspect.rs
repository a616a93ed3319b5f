// SPDX-License-Identifier: Apache-2.0
//! `cargo run --example inspect -- FILE`: prints a checkpoint as one line of
//! canonical JSON, byte for byte what `rngtrk inspect FILE` (C) and
//! `python3 -m rngtrk inspect FILE` print, with the same one-line errors and
//! exit codes: the library reads the file and writes the JSON.
use std::io::{self, Write};
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 1 {
        eprintln!("rngtrk inspect: needs one FILE (usage: inspect FILE)");
        return ExitCode::from(2);
    }
    match rngtrk::checkpoint_file_to_json(&args[0]) {
        Ok(line) => {
            let mut out = io::stdout().lock();
            if writeln!(out, "{}", line).and_then(|_| out.flush()).is_err() {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        // The library's message names the file and what is wrong with it.
        Err(error) => {
            eprintln!("rngtrk inspect: {}", error.message());
            ExitCode::from(1)
        }
    }
}
