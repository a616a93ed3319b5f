// SPDX-License-Identifier: Apache-2.0
fn main() -> Result<(), rngtrk::Error> {
    let mut tracker = rngtrk::Tracker::new()?;
    tracker.add("model-parallel-rng", 1234 + 2718)?; // Megatron-LM's seed for tensor-parallel rank 0
    let mut mask = [0f32; 4];
    // The fork guard restores when it is dropped, here at the end of the statement.
    let drawn_from = tracker.fork("model-parallel-rng")?.uniform_f32(&mut mask)?;
    let checkpoint = tracker.save()?; // bytes that C and Python read too
    println!("{:?} from {:?}", mask, drawn_from);
    println!("{}", rngtrk::checkpoint_to_json(&checkpoint)?);
    Ok(())
}
