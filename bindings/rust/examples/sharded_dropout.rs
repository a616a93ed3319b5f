// SPDX-License-Identifier: Apache-2.0
//! Sharded dropout: four tensor-parallel ranks each hold a column block of
//! an (8, 16) activation (DTensor's `Shard(1)` on a 4-rank mesh).  Each
//! draws only its own block of the dropout mask, and the blocks put side by
//! side are exactly the mask of the unsharded tensor; every rank's tracker
//! ends at the same offset, as if it had drawn the whole tensor.
//!
//! `cargo run --offline --example sharded_dropout`
use rngtrk::{dtensor_local_box, MeshPlacement, Placement, SampleSpec, Tracker};

const SHAPE: [u64; 2] = [8, 16];
const RANKS: u64 = 4;
const SEED: u64 = 1234;

/// A rank's box (start, shape), its dropped-out values, and its tracker's digest after.
type RankResult = (Vec<u64>, Vec<u64>, Vec<f32>, u64);

/// One rank's step: its box of the activation, dropped out; and its tracker's digest after.
fn rank_step(rank: u64, spec: &SampleSpec) -> Result<RankResult, rngtrk::Error> {
    let mut tracker = Tracker::new()?;
    tracker.add("sharded-dropout-rng", SEED)?; // the same stream on every rank
    let mesh = MeshPlacement { mesh_shape: &[RANKS], coord: &[rank], placements: &[Placement::Shard(1)] };
    let (start, local) = dtensor_local_box(&mesh, &SHAPE)?;
    let count = (local[0] * local[1]) as usize;
    // This rank's activations: element (r, c) of the whole tensor is r * 16 + c + 1.
    let mut x: Vec<f32> = (0..count)
        .map(|i| ((start[0] + i as u64 / local[1]) * SHAPE[1] + start[1] + i as u64 % local[1] + 1) as f32)
        .collect();
    let mut keep = vec![0u8; count];
    tracker.fork("sharded-dropout-rng")?.sample_slice(spec, &SHAPE, &start, &local, &mut keep)?;
    let scale = 1.0 / 0.9f32;
    for (v, k) in x.iter_mut().zip(&keep) {
        *v = if *k == 1 { *v * scale } else { 0.0 };
    }
    Ok((start, local, x, tracker.digest()?))
}

fn main() -> Result<(), rngtrk::Error> {
    let spec = SampleSpec::bernoulli(0.9); // keep probability 0.9: dropout p = 0.1

    // The unsharded reference: one tracker draws the whole tensor's dropout.
    let mut whole_tracker = Tracker::new()?;
    whole_tracker.add("sharded-dropout-rng", SEED)?;
    let mut whole: Vec<f32> = (1..=SHAPE[0] * SHAPE[1]).map(|v| v as f32).collect();
    let input = whole.clone();
    whole_tracker.fork("sharded-dropout-rng")?.dropout(&spec, &input, &mut whole)?;

    let mut assembled = vec![f32::NAN; whole.len()];
    for rank in 0..RANKS {
        let (start, local, block, digest) = rank_step(rank, &spec)?;
        assert_eq!(digest, whole_tracker.digest()?, "rank {} ends where the unsharded draw ends", rank);
        for r in 0..local[0] {
            for c in 0..local[1] {
                let g = ((start[0] + r) * SHAPE[1] + start[1] + c) as usize;
                assembled[g] = block[(r * local[1] + c) as usize];
            }
        }
        println!(
            "rank {}: columns {}..{}, {} of {} kept",
            rank,
            start[1],
            start[1] + local[1],
            block.iter().filter(|v| **v != 0.0).count(),
            block.len()
        );
    }
    assert_eq!(assembled, whole, "the ranks' blocks are the unsharded dropout");
    println!(
        "4 ranks' blocks == the unsharded (8, 16) dropout, bit for bit; every tracker at {:?}",
        whole_tracker.state("sharded-dropout-rng")?
    );
    Ok(())
}
