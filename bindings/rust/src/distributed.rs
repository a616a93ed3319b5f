// SPDX-License-Identifier: Apache-2.0
//! Distributed training (`docs/distributed.md`): key derivation, seeding
//! policies, rank-aware checkpoints, desync detection, and PyTorch
//! DTensor's offsets and boxes.
use std::fmt;
use std::ops::BitOr;

use crate::error::{check, Error};
use crate::names;
use crate::state::PhiloxState;
use crate::sys;
use crate::tracker::Tracker;

impl PhiloxState {
    /// `fold_in(state, d)`: the state made of Philox4x32-10(key(seed),
    /// counter = offset / 4 + d), words (w0 | w1 << 32, w2 | w3 << 32): one
    /// step of PyTorch's stateless `fold_in` (its key (seed, offset / 4)
    /// gives the key of these two words as they are; docs/pytorch.md).  A
    /// new independent stream per `d` (a layer, a micro-batch, an expert).
    pub fn fold_in(&self, d: u64) -> PhiloxState {
        let mut out = sys::rngtrk_philox_state { seed: 0, offset: 0 };
        // SAFETY: valid pointers; with them the function cannot fail.
        let status = unsafe { sys::rngtrk_fold_in(&self.to_c(), d, &mut out) };
        debug_assert_eq!(status, sys::rngtrk_status::RNGTRK_OK);
        PhiloxState::from_c(out)
    }
}

/// A rank's coordinates in the parallel layout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ParallelRank {
    /// Tensor-parallel rank.
    pub tp: u32,
    /// Pipeline-parallel rank.
    pub pp: u32,
    /// Data-parallel rank.
    pub dp: u32,
    /// Expert-parallel rank.
    pub ep: u32,
    /// Expert-tensor-parallel rank.
    pub etp: u32,
    /// Rank in Megatron-LM's GTP_remat group (dense weights).
    pub gtp_remat: u32,
    /// Size of the GTP_remat group: 0 or 1 means the axis is off (no
    /// "gtp-remat-rng"; `gtp_remat` must be 0), 2 or more adds the state.
    pub gtp_remat_size: u32,
    /// Rank in the expert GTP_remat group.
    pub egtp_remat: u32,
    /// Size of the expert GTP_remat group ("egtp-remat-rng"), as `gtp_remat_size`.
    pub egtp_remat_size: u32,
}

impl ParallelRank {
    fn to_c(self) -> Result<sys::rngtrk_parallel_rank, Error> {
        // SAFETY: all-zero plain integers; the init function fills exactly size_of bytes.
        let mut c: sys::rngtrk_parallel_rank = unsafe { std::mem::zeroed() };
        check(unsafe { sys::rngtrk_parallel_rank_init(&mut c, std::mem::size_of_val(&c)) })?;
        c.tp = self.tp;
        c.pp = self.pp;
        c.dp = self.dp;
        c.ep = self.ep;
        c.etp = self.etp;
        c.gtp_remat = self.gtp_remat;
        c.gtp_remat_size = self.gtp_remat_size;
        c.egtp_remat = self.egtp_remat;
        c.egtp_remat_size = self.egtp_remat_size;
        Ok(c)
    }
}

/// How each rank's seeds are made (`docs/distributed.md`).  The names
/// (`"megatron"`, `"slapo"`, `"derived"`) are the library's:
/// [`SeedPolicy::name`], `Display`, [`SeedPolicy::from_name`] and `FromStr`.
///
/// `#[non_exhaustive]`: it mirrors the C enum `rngtrk_seed_policy`, which
/// the library may extend (see [`Layout`](crate::Layout)).  Until this crate
/// names a newer policy, its value reads as [`SeedPolicy::Other`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SeedPolicy {
    /// Megatron-LM's `model_parallel_cuda_manual_seed`.
    Megatron,
    /// slapo's `set_random_seed`.
    Slapo,
    /// rngtrk's own: `fold_in` per mesh axis (recommended: never collides).
    Derived,
    /// A policy value this crate does not know (from a newer library).
    Other(u32),
}

impl SeedPolicy {
    fn to_c(self) -> sys::rngtrk_seed_policy {
        match self {
            SeedPolicy::Megatron => sys::rngtrk_seed_policy_RNGTRK_POLICY_MEGATRON,
            SeedPolicy::Slapo => sys::rngtrk_seed_policy_RNGTRK_POLICY_SLAPO,
            SeedPolicy::Derived => sys::rngtrk_seed_policy_RNGTRK_POLICY_DERIVED,
            SeedPolicy::Other(v) => v,
        }
    }

    fn from_c(v: u32) -> SeedPolicy {
        match v {
            sys::rngtrk_seed_policy_RNGTRK_POLICY_MEGATRON => SeedPolicy::Megatron,
            sys::rngtrk_seed_policy_RNGTRK_POLICY_SLAPO => SeedPolicy::Slapo,
            sys::rngtrk_seed_policy_RNGTRK_POLICY_DERIVED => SeedPolicy::Derived,
            other => SeedPolicy::Other(other),
        }
    }

    /// The library's name of the policy (`rngtrk_seed_policy_name`), or
    /// `None` for a value the library does not know.
    pub fn name(self) -> Option<&'static str> {
        names::name_of(self.to_c(), sys::rngtrk_seed_policy_name)
    }

    /// The policy the library calls `name` (`rngtrk_seed_policy_from_name`).
    /// Errors: the library's `InvalidArgument` for another name, whose
    /// message lists the policies.
    pub fn from_name(name: &str) -> Result<SeedPolicy, Error> {
        names::value_named(name, sys::rngtrk_seed_policy_from_name).map(SeedPolicy::from_c)
    }

    /// Every policy the library knows, in value order.
    pub fn all() -> Vec<SeedPolicy> {
        names::values(sys::rngtrk_seed_policy_name).map(SeedPolicy::from_c).collect()
    }
}

/// The library's name, or `policy N` for a value it does not know.
impl fmt::Display for SeedPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "policy {}", self.to_c()),
        }
    }
}

/// [`SeedPolicy::from_name`]: the library's name, or its error.
impl std::str::FromStr for SeedPolicy {
    type Err = Error;
    fn from_str(name: &str) -> Result<SeedPolicy, Error> {
        SeedPolicy::from_name(name)
    }
}

/// Flags of [`Tracker::seed_rank`], combined with `|`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SeedFlags(pub u32);

impl SeedFlags {
    /// No flag.
    pub const NONE: SeedFlags = SeedFlags(0);
    /// megatron, derived: the default state differs per data-parallel rank.
    pub const DATA_PARALLEL_RANDOM_INIT: SeedFlags = SeedFlags(sys::RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT);
    /// slapo: the default state takes the tensor-parallel seed.
    pub const ALWAYS_ENABLE_TP_SEED: SeedFlags = SeedFlags(sys::RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED);
}

impl SeedFlags {
    /// The library's name of a single flag (`"dp-random-init"`,
    /// `"always-enable-tp-seed"`); `None` for no flag, several, or one the
    /// library does not know.
    pub fn name(self) -> Option<&'static str> {
        names::name_of(self.0, sys::rngtrk_seed_flag_name)
    }

    /// The flags set here, one per bit, each as the library knows it.
    pub fn split(self) -> Vec<SeedFlags> {
        (0..32).map(|i| SeedFlags(1u32 << i)).filter(|f| self.0 & f.0 != 0).collect()
    }

    /// The library's names of the flags set here; a bit it does not know
    /// is left out (Display shows it in hex).
    pub fn names(self) -> Vec<&'static str> {
        self.split().into_iter().filter_map(SeedFlags::name).collect()
    }

    /// The flag the library calls `name`, or `None`.
    pub fn from_name(name: &str) -> Option<SeedFlags> {
        SeedFlags(u32::MAX).split().into_iter().find(|f| f.name() == Some(name))
    }
}

/// The flags' names joined by `|` (`none` when there is none; an unknown
/// bit in hex).
impl fmt::Display for SeedFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 == 0 {
            return f.write_str("none");
        }
        for (i, flag) in self.split().into_iter().enumerate() {
            if i > 0 {
                f.write_str("|")?;
            }
            match flag.name() {
                Some(name) => f.write_str(name)?,
                None => write!(f, "{:#x}", flag.0)?,
            }
        }
        Ok(())
    }
}

impl BitOr for SeedFlags {
    type Output = SeedFlags;
    fn bitor(self, other: SeedFlags) -> SeedFlags {
        SeedFlags(self.0 | other.0)
    }
}

/// Who a tracker's states belong to: recorded by [`Tracker::seed_rank`],
/// written into checkpoints and checked when one is loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    /// The policy that seeded the tracker.
    pub policy: SeedPolicy,
    /// The base seed.
    pub seed: u64,
    /// The flags it was given.
    pub flags: SeedFlags,
    /// The rank's coordinates, every one a policy uses (checkpoints of
    /// format 3 carry the remat ones); a remat axis that is off reads 0 and
    /// 0, also when it was given a size of 1.
    pub rank: ParallelRank,
}

impl Tracker {
    /// Seeds the tracker as `policy` seeds this rank: the default state
    /// becomes (default seed, 0) and the named states are replaced by the
    /// policy's, in upstream's order (megatron, derived: "data-parallel-rng",
    /// "model-parallel-rng", "expert-parallel-rng", then "gtp-remat-rng" and
    /// "egtp-remat-rng" when their remat groups have 2 ranks or more; slapo:
    /// "model-parallel-rng").  The origin is recorded.  Errors:
    /// `InvalidArgument` (a flag the policy does not read, a remat rank
    /// outside its group, a remat axis with slapo: the message names it),
    /// `DuplicateSeed` (the policy collides on this rank), `ForkOrder`;
    /// nothing changes then.
    pub fn seed_rank(
        &mut self,
        policy: SeedPolicy,
        seed: u64,
        rank: &ParallelRank,
        flags: SeedFlags,
    ) -> Result<(), Error> {
        let c = rank.to_c()?;
        // SAFETY: valid handle and rank struct.
        check(unsafe { sys::rngtrk_tracker_seed_rank(self.raw_mut(), policy.to_c(), seed, &c, flags.0) })
    }

    /// The tracker's origin, or `None` if no policy seeded it.
    pub fn origin(&self) -> Result<Option<Origin>, Error> {
        // SAFETY: plain integers; the init function fills exactly size_of bytes.
        let mut c: sys::rngtrk_origin = unsafe { std::mem::zeroed() };
        check(unsafe { sys::rngtrk_origin_init(&mut c, std::mem::size_of_val(&c)) })?;
        // SAFETY: valid handle; `c.struct_size` was set by the init.
        check(unsafe { sys::rngtrk_tracker_get_origin(self.raw(), &mut c) })?;
        if c.present == 0 {
            return Ok(None);
        }
        Ok(Some(Origin {
            policy: SeedPolicy::from_c(c.policy),
            seed: c.seed,
            flags: SeedFlags(c.flags),
            rank: ParallelRank {
                tp: c.tp,
                pp: c.pp,
                dp: c.dp,
                ep: c.ep,
                etp: c.etp,
                gtp_remat: c.gtp_remat,
                gtp_remat_size: c.gtp_remat_size,
                egtp_remat: c.egtp_remat,
                egtp_remat_size: c.egtp_remat_size,
            },
        }))
    }

    /// A 64-bit fingerprint of the states a checkpoint records: equal
    /// trackers give equal digests, so ranks compare trackers with one
    /// all-gather of 8 bytes.
    pub fn digest(&self) -> Result<u64, Error> {
        let mut out = 0u64;
        // SAFETY: valid handle and out-pointer.
        check(unsafe { sys::rngtrk_tracker_digest(self.raw(), &mut out) })?;
        Ok(out)
    }
}

/// A DTensor placement on one mesh dimension.
///
/// `#[non_exhaustive]`: it mirrors the C enum `rngtrk_placement_kind`,
/// which the library may extend (see [`Layout`](crate::Layout)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Placement {
    /// `Replicate()`.
    Replicate,
    /// `Shard(dim)`.
    Shard(u32),
    /// `Partial()`: for random ops, like `Replicate`.
    Partial,
}

impl Placement {
    fn to_c(self) -> sys::rngtrk_placement {
        let (kind, dim) = match self {
            Placement::Replicate => (sys::rngtrk_placement_kind_RNGTRK_PLACEMENT_REPLICATE, 0),
            Placement::Shard(dim) => (sys::rngtrk_placement_kind_RNGTRK_PLACEMENT_SHARD, dim),
            Placement::Partial => (sys::rngtrk_placement_kind_RNGTRK_PLACEMENT_PARTIAL, 0),
        };
        sys::rngtrk_placement { kind, dim }
    }
}

/// Which first-shard size DTensor offsets use.
///
/// `#[non_exhaustive]`: it mirrors the C enum `rngtrk_offset_rule`, which
/// the library may extend (see [`Layout`](crate::Layout)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum OffsetRule {
    /// Upstream PyTorch's, byte for byte.
    #[default]
    Torch,
    /// Corrected: a dimension sharded twice is chunked twice.
    Exact,
}

/// A rank's place on a device mesh with a tensor's placements: the input of
/// [`dtensor_offsets`] and [`dtensor_local_box`].
#[derive(Clone, Copy, Debug)]
pub struct MeshPlacement<'a> {
    /// The mesh's shape (one entry per mesh dimension).
    pub mesh_shape: &'a [u64],
    /// This rank's coordinate on the mesh.
    pub coord: &'a [u64],
    /// One placement per mesh dimension.
    pub placements: &'a [Placement],
}

impl MeshPlacement<'_> {
    fn check(&self) -> Result<Vec<sys::rngtrk_placement>, Error> {
        if self.mesh_shape.len() != self.coord.len() || self.coord.len() != self.placements.len() {
            return Err(Error::invalid(format!(
                "mesh_shape, coord and placements need one entry per mesh dimension (got {}, {} and {})",
                self.mesh_shape.len(),
                self.coord.len(),
                self.placements.len()
            )));
        }
        Ok(self.placements.iter().map(|p| p.to_c()).collect())
    }
}

/// The offsets of PyTorch's `OffsetBasedRNGTracker` around a random op on a
/// DTensor of `global_shape`, starting from `offset`: `(pre, post)`, where
/// this rank draws from `pre` and every rank continues from `post`.
pub fn dtensor_offsets(
    mesh: &MeshPlacement<'_>,
    global_shape: &[u64],
    offset: u64,
    rule: OffsetRule,
) -> Result<(u64, u64), Error> {
    crate::check_library_version()?;
    let placements = mesh.check()?;
    let rule = match rule {
        OffsetRule::Torch => sys::rngtrk_offset_rule_RNGTRK_OFFSET_RULE_TORCH,
        OffsetRule::Exact => sys::rngtrk_offset_rule_RNGTRK_OFFSET_RULE_EXACT,
    };
    let (mut pre, mut post) = (0u64, 0u64);
    // SAFETY: the mesh arrays hold mesh_ndim entries, the shape ndim.
    check(unsafe {
        sys::rngtrk_dtensor_offsets(
            placements.len(),
            mesh.mesh_shape.as_ptr(),
            mesh.coord.as_ptr(),
            placements.as_ptr(),
            global_shape.len(),
            global_shape.as_ptr(),
            offset,
            rule,
            &mut pre,
            &mut post,
        )
    })?;
    Ok((pre, post))
}

/// This rank's box of a DTensor of `global_shape`: `(start, local_shape)`
/// as DTensor computes them.  Feed them to [`crate::sample_slice`] for
/// values that do not depend on the sharding.
pub fn dtensor_local_box(mesh: &MeshPlacement<'_>, global_shape: &[u64]) -> Result<(Vec<u64>, Vec<u64>), Error> {
    crate::check_library_version()?;
    let placements = mesh.check()?;
    let mut start = vec![0u64; global_shape.len()];
    let mut local = vec![0u64; global_shape.len()];
    // SAFETY: as in dtensor_offsets; `start` and `local` hold ndim entries.
    check(unsafe {
        sys::rngtrk_dtensor_local_box(
            placements.len(),
            mesh.mesh_shape.as_ptr(),
            mesh.coord.as_ptr(),
            placements.as_ptr(),
            global_shape.len(),
            global_shape.as_ptr(),
            start.as_mut_ptr(),
            local.as_mut_ptr(),
        )
    })?;
    Ok((start, local))
}
