// SPDX-License-Identifier: Apache-2.0
use rngtrk::{ErrorKind, LoadOptions, PhiloxState, Tracker};

fn main() -> Result<(), rngtrk::Error> {
    // Megatron-LM's seeds for tensor-parallel rank 0.
    let mut tracker = Tracker::new()?;
    tracker.manual_seed(1234)?;
    tracker.add("model-parallel-rng", 1234 + 2718)?;
    tracker.add("data-parallel-rng", 1234)?;

    // A dropout mask drawn inside the tensor-parallel fork.  The guard
    // restores when it goes out of scope, also if the block panics.
    let mut mask = vec![0f32; 4096];
    let drawn_from = {
        let mut fork = tracker.fork("model-parallel-rng")?;
        fork.uniform_f32(&mut mask)? // reserves 4096 numbers, returns the state they came from
    };

    // Any slice re-derives from the 16-byte state alone.
    let bytes: [u8; 16] = drawn_from.to_bytes(); // torch.cuda.get_rng_state() layout
    let mut slice = [0f32; 100];
    rngtrk::uniform_f32(&PhiloxState::from_bytes(&bytes), 100, &mut slice)?;
    assert_eq!(slice[..], mask[100..200]);

    // Errors are values with a kind and the library's message.
    let error = tracker.add("expert-parallel-rng", 1234 + 2718).unwrap_err();
    assert_eq!(error.kind(), ErrorKind::DuplicateSeed);
    println!("{}", error);

    // Checkpoint bytes that C and Python read too.
    let checkpoint = tracker.save()?;
    let mut resumed = Tracker::new()?;
    resumed.load(&checkpoint, &LoadOptions::new())?;
    assert_eq!(resumed.states()?, tracker.states()?);
    println!("{}", rngtrk::checkpoint_to_json(&checkpoint)?);
    Ok(())
}
