// SPDX-License-Identifier: Apache-2.0
//! The shared vectors of tests/vectors/rngtrk_vectors.txt.
mod common;

use common::records;
use rngtrk::{philox4x32_10, random_u32, uniform_f32, PhiloxState};

fn hex(s: &str) -> u32 {
    u32::from_str_radix(s, 16).unwrap()
}

#[test]
fn philox_known_answers() {
    let cases = records("philox");
    assert!(cases.len() >= 64);
    for f in cases {
        let w: Vec<u32> = f.iter().map(|s| hex(s)).collect();
        assert_eq!(philox4x32_10([w[0], w[1], w[2], w[3]], [w[4], w[5]]), [w[6], w[7], w[8], w[9]]);
    }
}

#[test]
fn state_bytes_both_ways() {
    let cases = records("state");
    assert!(cases.len() >= 8);
    for f in cases {
        let state = PhiloxState::new(f[0].parse().unwrap(), f[1].parse().unwrap());
        let bytes: Vec<u8> = (0..16).map(|i| u8::from_str_radix(&f[2][2 * i..2 * i + 2], 16).unwrap()).collect();
        assert_eq!(state.to_bytes().to_vec(), bytes);
        assert_eq!(PhiloxState::from_bytes(&state.to_bytes()), state);
    }
}

fn stream_case(f: &[String]) -> (PhiloxState, u64, Vec<u32>) {
    let state = PhiloxState::new(f[0].parse().unwrap(), f[1].parse().unwrap());
    let count: usize = f[3].parse().unwrap();
    let words: Vec<u32> = f[4..].iter().map(|s| hex(s)).collect();
    assert_eq!(words.len(), count);
    (state, f[2].parse().unwrap(), words)
}

#[test]
fn u32_stream_samples_whole_and_in_every_split() {
    let cases = records("u32");
    assert!(cases.len() >= 16);
    for f in cases {
        let (state, first, expected) = stream_case(&f);
        let mut out = vec![0u32; expected.len()];
        random_u32(&state, first, &mut out).unwrap();
        assert_eq!(out, expected);
        for cut in 0..=expected.len() {
            let (head, tail) = out.split_at_mut(cut);
            random_u32(&state, first, head).unwrap();
            random_u32(&state, first + cut as u64, tail).unwrap();
            assert_eq!(out, expected, "split at {}", cut);
        }
    }
}

#[test]
fn f32_stream_samples() {
    let cases = records("f32");
    assert!(cases.len() >= 16);
    for f in cases {
        let (state, first, expected_bits) = stream_case(&f);
        let mut out = vec![0f32; expected_bits.len()];
        uniform_f32(&state, first, &mut out).unwrap();
        assert_eq!(out.iter().map(|v| v.to_bits()).collect::<Vec<_>>(), expected_bits);
        assert!(out.iter().all(|v| (0.0..1.0).contains(v)));
    }
}
