// SPDX-License-Identifier: Apache-2.0
//! The distributed calls: fold_in against the Philox bijection, the seeding
//! policies' seeds, origins in checkpoints, digests, DTensor offsets and
//! boxes (against their formulas), and the CUDA calls without a device.
mod common;

use rngtrk::{
    dtensor_local_box, dtensor_offsets, ErrorKind, LoadOptions, MeshPlacement, OffsetRule, Origin, ParallelRank,
    PhiloxState, Placement, SampleSpec, SeedFlags, SeedPolicy, Tracker,
};

#[test]
fn fold_in_is_philox_of_the_key_at_counter_offset_over_4_plus_d() {
    for &(seed, offset, d) in &[(0u64, 0u64, 0u64), (1234, 8, 3), (u64::MAX, 1 << 40, u64::MAX - 5)] {
        let b = (offset / 4).wrapping_add(d);
        let w = rngtrk::philox4x32_10([b as u32, (b >> 32) as u32, 0, 0], [seed as u32, (seed >> 32) as u32]);
        let want = PhiloxState::new(w[0] as u64 | (w[1] as u64) << 32, w[2] as u64 | (w[3] as u64) << 32);
        assert_eq!(PhiloxState::new(seed, offset).fold_in(d), want);
    }
}

#[test]
fn megatron_policy_gives_megatrons_seeds_and_records_the_origin() {
    let mut t = Tracker::new().unwrap();
    assert_eq!(t.origin().unwrap(), None);
    let rank = ParallelRank { tp: 1, pp: 1, ..Default::default() };
    t.seed_rank(SeedPolicy::Megatron, 1234, &rank, SeedFlags::NONE).unwrap();
    // seed + 100 pp; + 2718 + tp; + 1024 + 100 ep + etp (rngtrk seeds prints the same).
    assert_eq!(t.default_state(), PhiloxState::new(1334, 0));
    assert_eq!(t.state("data-parallel-rng").unwrap().seed, 1334);
    assert_eq!(t.state("model-parallel-rng").unwrap().seed, 1334 + 2718 + 1);
    assert_eq!(t.state("expert-parallel-rng").unwrap().seed, 1334 + 1024);
    let origin = t.origin().unwrap().unwrap();
    assert_eq!(origin, Origin { policy: SeedPolicy::Megatron, seed: 1234, flags: SeedFlags::NONE, rank });

    // The checkpoint carries the origin: another rank's is refused unless told.
    let checkpoint = t.save().unwrap();
    let mut other = Tracker::new().unwrap();
    other.seed_rank(SeedPolicy::Megatron, 1234, &ParallelRank::default(), SeedFlags::NONE).unwrap();
    let before = common::snapshot(&other);
    assert_eq!(other.load(&checkpoint, &LoadOptions::new()).unwrap_err().kind(), ErrorKind::WrongRank);
    assert_eq!(common::snapshot(&other), before);
    other.load(&checkpoint, &LoadOptions::new().any_rank(true)).unwrap();
    assert_eq!(other.states().unwrap(), t.states().unwrap());
    assert_eq!(other.origin().unwrap(), Some(origin));

    let dir = std::env::temp_dir().join(format!("rngtrk-rust-origin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("rank.rtck");
    t.save_file(&path).unwrap();
    let mut third = Tracker::new().unwrap();
    third.seed_rank(SeedPolicy::Derived, 1234, &ParallelRank::default(), SeedFlags::NONE).unwrap();
    assert_eq!(third.load(&path, &LoadOptions::new()).unwrap_err().kind(), ErrorKind::WrongRank);
    third.load(&path, &LoadOptions::new().any_rank(true)).unwrap();
    assert_eq!(third.digest().unwrap(), t.digest().unwrap());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn flags_and_policies_reach_the_library() {
    let mut t = Tracker::new().unwrap();
    let rank = ParallelRank { tp: 1, dp: 3, ..Default::default() };
    t.seed_rank(SeedPolicy::Slapo, 2013, &rank, SeedFlags::ALWAYS_ENABLE_TP_SEED).unwrap();
    let origin = t.origin().unwrap().unwrap();
    assert_eq!((origin.policy, origin.flags), (SeedPolicy::Slapo, SeedFlags::ALWAYS_ENABLE_TP_SEED));
    assert_eq!(t.names().unwrap(), vec!["model-parallel-rng".to_string()]);
    let mut d = Tracker::new().unwrap();
    d.seed_rank(SeedPolicy::Megatron, 7, &rank, SeedFlags::DATA_PARALLEL_RANDOM_INIT | SeedFlags::NONE).unwrap();
    assert_eq!(d.default_state().seed, 7 + 10 * 3, "data_parallel_random_init: + 10 dp");
    let before = common::snapshot(&d);
    let e = d.seed_rank(SeedPolicy::Other(99), 7, &rank, SeedFlags::NONE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = d.seed_rank(SeedPolicy::Megatron, 7, &rank, SeedFlags(64)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(common::snapshot(&d), before);
}

#[test]
fn policy_and_flag_names_are_the_librarys() {
    assert_eq!(SeedPolicy::all(), vec![SeedPolicy::Megatron, SeedPolicy::Slapo, SeedPolicy::Derived]);
    for (policy, name) in
        [(SeedPolicy::Megatron, "megatron"), (SeedPolicy::Slapo, "slapo"), (SeedPolicy::Derived, "derived")]
    {
        assert_eq!(policy.name(), Some(name));
        assert_eq!(policy.to_string(), name);
        assert_eq!(SeedPolicy::from_name(name).unwrap(), policy);
        assert_eq!(name.parse::<SeedPolicy>().unwrap(), policy);
    }
    assert_eq!(SeedPolicy::Other(7).name(), None);
    assert_eq!(SeedPolicy::Other(7).to_string(), "policy 7");
    for bad in ["Megatron", "", "megatron\0", "jax"] {
        let e = SeedPolicy::from_name(bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("megatron, slapo or derived"), "{}", e.message());
    }
    // The library's own message, also for a name C could not see whole.
    let e = "megatron\0".parse::<SeedPolicy>().unwrap_err();
    assert!(e.message().starts_with(r#"unknown seeding policy "megatron\0""#), "{}", e.message());
    assert_eq!(SeedFlags::DATA_PARALLEL_RANDOM_INIT.name(), Some("dp-random-init"));
    assert_eq!(SeedFlags::ALWAYS_ENABLE_TP_SEED.name(), Some("always-enable-tp-seed"));
    let both = SeedFlags::DATA_PARALLEL_RANDOM_INIT | SeedFlags::ALWAYS_ENABLE_TP_SEED;
    assert_eq!(both.name(), None);
    assert_eq!(both.names(), vec!["dp-random-init", "always-enable-tp-seed"]);
    assert_eq!((both | SeedFlags(0x40)).to_string(), "dp-random-init|always-enable-tp-seed|0x40");
    assert_eq!(SeedFlags::NONE.to_string(), "none");
    assert_eq!(SeedFlags::from_name("always-enable-tp-seed"), Some(SeedFlags::ALWAYS_ENABLE_TP_SEED));
    assert_eq!(SeedFlags::from_name("context-parallel"), None);
}

#[test]
fn a_flag_the_policy_does_not_read_is_refused_by_name() {
    let mut t = Tracker::new().unwrap();
    let rank = ParallelRank { tp: 2, ..Default::default() };
    t.seed_rank(SeedPolicy::Megatron, 5, &rank, SeedFlags::NONE).unwrap();
    let before = (common::snapshot(&t), t.origin().unwrap());
    for (policy, flags) in [
        (SeedPolicy::Megatron, SeedFlags::ALWAYS_ENABLE_TP_SEED),
        (SeedPolicy::Derived, SeedFlags::ALWAYS_ENABLE_TP_SEED),
        (SeedPolicy::Slapo, SeedFlags::DATA_PARALLEL_RANDOM_INIT),
    ] {
        let e = t.seed_rank(policy, 5, &rank, flags).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let message = e.message();
        assert!(message.contains(policy.name().unwrap()) && message.contains(flags.name().unwrap()), "{}", message);
        assert_eq!((common::snapshot(&t), t.origin().unwrap()), before);
    }
}

#[test]
fn digests_are_equal_exactly_when_the_states_are() {
    let (mut a, mut b) = (Tracker::new().unwrap(), Tracker::new().unwrap());
    a.add("x", 1).unwrap();
    b.add("x", 1).unwrap();
    assert_eq!(a.digest().unwrap(), b.digest().unwrap());
    b.sample(&SampleSpec::bits(), &mut [0u32; 4]).unwrap();
    assert_ne!(a.digest().unwrap(), b.digest().unwrap());
}

#[test]
fn dtensor_offsets_follow_torchs_formula() {
    // 2x2 mesh at (1, 1), Shard(0) and Shard(1) of an 8x6 tensor from offset 8:
    // shard index 3, first shard 4x3 = 12 elements: pre = 8 + 36, post = 8 + 48.
    let mesh =
        MeshPlacement { mesh_shape: &[2, 2], coord: &[1, 1], placements: &[Placement::Shard(0), Placement::Shard(1)] };
    assert_eq!(dtensor_offsets(&mesh, &[8, 6], 8, OffsetRule::Torch).unwrap(), (44, 56));
    let (start, local) = dtensor_local_box(&mesh, &[8, 6]).unwrap();
    assert_eq!((start, local), (vec![4, 3], vec![4, 3]));
    let replicated = MeshPlacement { mesh_shape: &[4], coord: &[3], placements: &[Placement::Replicate] };
    assert_eq!(dtensor_offsets(&replicated, &[10], 0, OffsetRule::Exact).unwrap(), (0, 12));
    assert_eq!(dtensor_local_box(&replicated, &[10]).unwrap(), (vec![0], vec![10]));
    let partial = MeshPlacement { mesh_shape: &[2], coord: &[1], placements: &[Placement::Partial] };
    assert_eq!(dtensor_local_box(&partial, &[5]).unwrap(), (vec![0], vec![5]));
}

#[test]
fn dtensor_boxes_tile_the_tensor_and_sampled_boxes_equal_the_whole() {
    let shape = [7u64, 5];
    let spec = SampleSpec::uniform(0.0, 1.0);
    let state = PhiloxState::new(3, 0);
    let mut whole = vec![0f32; 35];
    rngtrk::sample(&state, &spec, 0, &mut whole).unwrap();
    let mut seen = vec![0u32; 35];
    for coord in 0..3u64 {
        let mesh = MeshPlacement { mesh_shape: &[3], coord: &[coord], placements: &[Placement::Shard(0)] };
        let (start, local) = dtensor_local_box(&mesh, &shape).unwrap();
        let mut tile = vec![0f32; (local[0] * local[1]) as usize];
        rngtrk::sample_slice(&state, &spec, &shape, &start, &local, &mut tile).unwrap();
        for r in 0..local[0] as usize {
            for c in 0..local[1] as usize {
                let g = (start[0] as usize + r) * 5 + start[1] as usize + c;
                assert_eq!(tile[r * local[1] as usize + c], whole[g]);
                seen[g] += 1;
            }
        }
    }
    assert!(seen.iter().all(|&n| n == 1), "every element in exactly one box: {:?}", seen);
}

#[test]
fn dtensor_bad_input_is_an_error() {
    let bad_len = MeshPlacement { mesh_shape: &[2, 2], coord: &[1], placements: &[Placement::Replicate] };
    let e = dtensor_offsets(&bad_len, &[4], 0, OffsetRule::Torch).unwrap_err();
    assert!(e.message().contains("one entry per mesh dimension"), "{}", e);
    let outside = MeshPlacement { mesh_shape: &[2], coord: &[2], placements: &[Placement::Replicate] };
    assert_eq!(dtensor_offsets(&outside, &[4], 0, OffsetRule::Torch).unwrap_err().kind(), ErrorKind::InvalidArgument);
    let no_dim = MeshPlacement { mesh_shape: &[2], coord: &[0], placements: &[Placement::Shard(3)] };
    assert_eq!(dtensor_local_box(&no_dim, &[4]).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn cuda_calls_answer_unavailable_or_run_never_crash() {
    match rngtrk::cuda::available() {
        Ok(()) => eprintln!("a CUDA device is here: the GPU tests (make test-gpu) cover the launches"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Unavailable, "{}", e);
            assert!(!e.message().is_empty());
            let state = PhiloxState::new(1, 0);
            let spec = SampleSpec::uniform(0.0, 1.0);
            // SAFETY: without a device the library returns before touching memory.
            unsafe {
                let e = rngtrk::cuda::sample(&state, &spec, 0, 4, std::ptr::null_mut::<f32>(), std::ptr::null_mut())
                    .unwrap_err();
                assert!(matches!(e.kind(), ErrorKind::Unavailable | ErrorKind::InvalidArgument), "{}", e);
                let e = rngtrk::cuda::advance_graphsafe(std::ptr::null_mut(), 4, std::ptr::null_mut()).unwrap_err();
                assert!(matches!(e.kind(), ErrorKind::Unavailable | ErrorKind::InvalidArgument), "{}", e);
            }
        }
    }
}

#[test]
fn megatron_remat_states_are_megatron_lm_mains_in_its_order() {
    let mut t = Tracker::new().unwrap();
    let rank = ParallelRank {
        tp: 3,
        pp: 1,
        ep: 2,
        etp: 1,
        gtp_remat: 2,
        gtp_remat_size: 4,
        egtp_remat: 1,
        egtp_remat_size: 2,
        ..Default::default()
    };
    t.seed_rank(SeedPolicy::Megatron, 1000, &rank, SeedFlags::NONE).unwrap();
    let s = 1000 + 100;
    let (model, expert) = (s + 2718 + 3, s + 1024 + 200 + 1);
    let want = vec![
        ("data-parallel-rng".to_string(), s),
        ("model-parallel-rng".to_string(), model),
        ("expert-parallel-rng".to_string(), expert),
        ("gtp-remat-rng".to_string(), model + 65536 * 3),
        ("egtp-remat-rng".to_string(), expert + 32768 + 65536 * 2),
    ];
    let got: Vec<(String, u64)> =
        t.names().unwrap().into_iter().map(|n| (n.clone(), t.state(&n).unwrap().seed)).collect();
    assert_eq!(got, want);
    assert_eq!(t.origin().unwrap().unwrap().rank, rank);
    // Sizes 0 and 1 are off: no remat state, recorded as 0.
    let off = ParallelRank { tp: 3, gtp_remat_size: 1, ..Default::default() };
    t.seed_rank(SeedPolicy::Megatron, 1000, &off, SeedFlags::NONE).unwrap();
    assert_eq!(t.names().unwrap().len(), 3);
    assert_eq!(t.origin().unwrap().unwrap().rank, ParallelRank { tp: 3, ..Default::default() });
    // A rank outside its group is refused by value; nothing changes.
    let before = common::snapshot(&t);
    let outside = ParallelRank { egtp_remat: 2, egtp_remat_size: 2, ..Default::default() };
    let e = t.seed_rank(SeedPolicy::Derived, 1000, &outside, SeedFlags::NONE).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("egtp_remat 2 is outside its group of egtp_remat_size 2"), "{}", e.message());
    assert_eq!(common::snapshot(&t), before);
}

#[test]
fn version_3_checkpoints_round_trip_and_a_remat_coordinate_alone_is_another_rank() {
    let writer = ParallelRank { tp: 1, gtp_remat: 1, gtp_remat_size: 4, ..Default::default() };
    let mut t = Tracker::new().unwrap();
    t.seed_rank(SeedPolicy::Derived, 1234, &writer, SeedFlags::NONE).unwrap();
    t.fork("gtp-remat-rng").unwrap().advance(12).unwrap();
    let bytes = t.save().unwrap();
    assert_eq!(bytes[8], 3);
    let mut fresh = Tracker::new().unwrap();
    fresh.load(&bytes, &LoadOptions::new()).unwrap();
    assert_eq!(fresh.save().unwrap(), bytes);
    assert_eq!(fresh.origin().unwrap(), t.origin().unwrap());
    for (reader, difference) in [
        (ParallelRank { tp: 1, gtp_remat: 2, gtp_remat_size: 4, ..Default::default() }, "gtp_remat 1 vs 2"),
        (ParallelRank { tp: 1, ..Default::default() }, "gtp_remat on (1 of 4) vs off"),
    ] {
        let mut other = Tracker::new().unwrap();
        other.seed_rank(SeedPolicy::Derived, 1234, &reader, SeedFlags::NONE).unwrap();
        let before = common::snapshot(&other);
        let e = other.load(&bytes, &LoadOptions::new()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::WrongRank);
        assert!(e.message().contains(difference), "{}", e.message());
        assert_eq!(common::snapshot(&other), before);
        other.load(&bytes, &LoadOptions::new().any_rank(true)).unwrap();
        assert_eq!(other.save().unwrap(), bytes);
    }
}
