/* SPDX-License-Identifier: Apache-2.0 */
// Distributed training helpers (docs/distributed.md): key derivation
// (fold_in), PyTorch DTensor's RNG offsets, the local box of a sharded
// tensor, and a digest of a tracker for desync checks.  The seeding policies
// are seed_policy.h's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "philox_state.h"

namespace rngtrk {

class Tracker;  // tracker.h

// fold_in(state, d): the state (w0 | w1 << 32, w2 | w3 << 32) of
// Philox4x32-10(key(state.seed), counter = state.offset / 4 + d): PyTorch's
// stateless split/fold_in rule.
PhiloxState fold_in(const PhiloxState &state, uint64_t d);

// -- DTensor ----------------------------------------------------------------------

struct Placement {
    enum Kind { replicate = 0, shard = 1, partial = 2 } kind = replicate;
    uint32_t dim = 0;  // for shard
};

// torch.chunk's split of `size` into `n` chunks: (offset, size) of chunk i.
void chunk(uint64_t size, uint64_t n, uint64_t i, uint64_t *offset, uint64_t *length);

struct MeshSpec {
    std::vector<uint64_t> mesh_shape, coord;
    std::vector<Placement> placements;  // one per mesh dim
    std::vector<uint64_t> global_shape;
};

// Checks sizes, coordinates and shard dims; throws Error.
void check_mesh(const MeshSpec &m);

// This rank's box: start and local shape per tensor dim (DTensor's
// compute_local_shape_and_global_offset: placements applied in mesh-dim
// order, each Shard cutting the current range like torch.chunk).
void local_box(const MeshSpec &m, std::vector<uint64_t> *start, std::vector<uint64_t> *local);

enum class OffsetRule { torch, exact };

// OffsetBasedRNGTracker's offsets around a random op on a DTensor: pre =
// offset + round_up4(shard_linear_idx * first_shard_numel), post = offset +
// round_up4(numel).  `torch` computes the first shard's size per placement
// from the full dim (upstream); `exact` chunks a dim sharded over several
// mesh dims repeatedly, giving the true size of shard 0.
void dtensor_offsets(const MeshSpec &m, uint64_t offset, OffsetRule rule, uint64_t *pre, uint64_t *post);

// -- desync detection ---------------------------------------------------------

// A 64-bit fingerprint of everything a checkpoint records (default state,
// named states in order), chained through Philox4x32-10.
uint64_t tracker_digest(const Tracker &tracker);

}  // namespace rngtrk
