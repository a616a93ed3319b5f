//! The Rust part of `make demo`: resume the C demo's training run.
//!
//! tools/demo_training_loop.c saved its tracker before step K and kept the
//! numbers its first run drew in steps K..N-1 (FOLDER/draws.f32, the step
//! layout in FOLDER/run.txt).  Here a Rust tracker loads that checkpoint and
//! runs the same steps — a "model-parallel-rng" fork, a "data-parallel-rng"
//! fork, the default state — and every number must equal C's.
//!
//!     cargo run --example demo_resume -- FOLDER
use std::collections::HashMap;
use std::fs;
use std::process::ExitCode;

use rngtrk::{Error, Tracker};

fn fnv1a(bytes: &[u8]) -> u32 {
    bytes.iter().fold(2166136261u32, |h, &b| (h ^ u32::from(b)).wrapping_mul(16777619))
}

fn as_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// One training step's random numbers, as the C demo draws them.
fn step(tracker: &mut Tracker, layout: &HashMap<String, usize>) -> Result<Vec<f32>, Error> {
    let mut drawn = Vec::new();
    for (name, key) in [("model-parallel-rng", "model_parallel_draws"), ("data-parallel-rng", "data_parallel_draws")] {
        let mut part = vec![0f32; layout[key]];
        tracker.fork(name)?.uniform_f32(&mut part)?;
        drawn.extend(part);
    }
    let mut part = vec![0f32; layout["default_draws"]];
    tracker.uniform_f32(&mut part)?;
    drawn.extend(part);
    Ok(drawn)
}

fn run(folder: &str) -> Result<bool, Box<dyn std::error::Error>> {
    let layout: HashMap<String, usize> = fs::read_to_string(format!("{}/run.txt", folder))?
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(k, v)| Ok((k.to_string(), v.trim().parse()?)))
        .collect::<Result<_, std::num::ParseIntError>>()?;
    let checkpoint = fs::read(format!("{}/checkpoint.rtck", folder))?;
    let c_draws = fs::read(format!("{}/draws.f32", folder))?;
    let per_step = layout["model_parallel_draws"] + layout["data_parallel_draws"] + layout["default_draws"];
    let (first, last) = (layout["resume_at"], layout["steps"] - 1);
    println!(
        "rngtrk {} Rust demo: load C's checkpoint ({} bytes) from step {}, run steps {}..{}",
        rngtrk::version_string(),
        checkpoint.len(),
        first,
        first,
        last
    );
    let mut tracker = Tracker::new()?;
    tracker.load(&checkpoint)?;
    println!("  step  C run      Rust       (FNV-1a of {} floats)", per_step);
    let mut all_same = true;
    for k in first..=last {
        let ours = as_bytes(&step(&mut tracker, &layout)?);
        let at = (k - first) * per_step * 4;
        let theirs = c_draws.get(at..at + per_step * 4).ok_or("draws.f32 is too short")?;
        let same = ours == theirs;
        all_same &= same;
        println!(
            "  {:4}  {:08x}   {:08x}   {}",
            k,
            fnv1a(theirs),
            fnv1a(&ours),
            if same { "identical" } else { "DIFFERENT" }
        );
    }
    println!(
        "{}: Rust continued C's streams and drew {} numbers for steps {}..{}",
        if all_same { "OK" } else { "FAILED" },
        if all_same { "the same" } else { "different" },
        first,
        last
    );
    Ok(all_same)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 1 {
        eprintln!("usage: demo_resume FOLDER");
        return ExitCode::from(2);
    }
    match run(&args[0]) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(error) => {
            eprintln!("demo_resume: {}", error);
            ExitCode::from(1)
        }
    }
}
