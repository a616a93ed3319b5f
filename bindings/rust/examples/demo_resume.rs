// SPDX-License-Identifier: Apache-2.0
//! The Rust part of `make demo`: resume the C demo's training run.
//!
//! tools/demo_training_loop.c saved its tracker after step K and kept the
//! numbers its first run drew in steps K+1..N (FOLDER/draws.f32, steps
//! counted from 1; the step layout in FOLDER/run.txt).  Here a Rust tracker loads that checkpoint and
//! runs the same steps — a "model-parallel-rng" fork, a "data-parallel-rng"
//! fork, the default state — and every number must equal C's.
//!
//!     cargo run --example demo_resume -- FOLDER
use std::collections::HashMap;
use std::fs;
use std::process::ExitCode;

use rngtrk::{Error, LoadOptions, Tracker};

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

fn first_values(v: &[f32], layout: &HashMap<String, usize>) -> String {
    let (mp, dp) = (layout["model_parallel_draws"], layout["data_parallel_draws"]);
    format!("{:.4} {:.4} {:.4} | {:.4} | {:.4}", v[0], v[1], v[2], v[mp], v[mp + dp])
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
    let (first, last) = (layout["checkpoint_after"] + 1, layout["steps"]);
    println!(
        "rngtrk {} Rust: load C's checkpoint taken after step {} ({} bytes) and run steps {}..{}",
        rngtrk::version_string(),
        first - 1,
        checkpoint.len(),
        first,
        last
    );
    let mut tracker = Tracker::new()?;
    tracker.load(&checkpoint, &LoadOptions::new())?;
    println!("  step  first values: model-parallel | data-parallel | default   C run      Rust");
    let mut all_same = true;
    for k in first..=last {
        let drawn = step(&mut tracker, &layout)?;
        let ours = as_bytes(&drawn);
        let at = (k - first) * per_step * 4;
        let theirs = c_draws.get(at..at + per_step * 4).ok_or("draws.f32 is too short")?;
        let same = ours == theirs;
        all_same &= same;
        println!(
            "  {:4}  {}   {:08x}   {:08x}  {}",
            k,
            first_values(&drawn, &layout),
            fnv1a(theirs),
            fnv1a(&ours),
            if same { "identical" } else { "DIFFERENT" }
        );
    }
    if all_same {
        println!(
            "OK: Rust continued C's checkpoint and drew, in each of steps {}..{}, the same {} numbers as C",
            first, last, per_step
        );
    } else {
        println!("FAILED: Rust drew different numbers from C in steps {}..{}", first, last);
    }
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
