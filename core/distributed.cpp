// SPDX-License-Identifier: Apache-2.0
#include "distributed.h"

#include <limits>

#include "error.h"
#include "philox.h"
#include "tracker.h"

namespace rngtrk {

PhiloxState fold_in(const PhiloxState &state, uint64_t d) {
    const PhiloxBlock b = philox_stream_block(state.seed, state.offset / 4 + d);
    return PhiloxState{uint64_t{b.w[0]} | uint64_t{b.w[1]} << 32, uint64_t{b.w[2]} | uint64_t{b.w[3]} << 32};
}

void chunk(uint64_t size, uint64_t n, uint64_t i, uint64_t *offset, uint64_t *length) {
    // torch.chunk: chunks of ceil(size / n), the last ones shorter or empty.
    const uint64_t full = size / n + (size % n != 0);
    const uint64_t begin = full * i < size ? full * i : size;
    const uint64_t end = full * (i + 1) < size ? full * (i + 1) : size;
    *offset = begin;
    *length = end - begin;
}

void check_mesh(const MeshSpec &m) {
    if (m.mesh_shape.empty()) fail(Status::invalid_argument, "the mesh has no dimensions");
    if (m.coord.size() != m.mesh_shape.size() || m.placements.size() != m.mesh_shape.size())
        fail(Status::invalid_argument, "coord and placements need one entry per mesh dimension");
    for (size_t i = 0; i < m.mesh_shape.size(); ++i) {
        if (m.mesh_shape[i] == 0) fail(Status::invalid_argument, "mesh dimensions must be at least 1");
        if (m.coord[i] >= m.mesh_shape[i])
            fail(Status::invalid_argument, "coordinate " + std::to_string(m.coord[i]) + " is outside mesh dimension " +
                                                std::to_string(i) + " of size " + std::to_string(m.mesh_shape[i]));
        const Placement &p = m.placements[i];
        if (p.kind != Placement::replicate && p.kind != Placement::shard && p.kind != Placement::partial)
            fail(Status::invalid_argument, "unknown placement kind");
        if (p.kind == Placement::shard && p.dim >= m.global_shape.size())
            fail(Status::invalid_argument, "Shard(" + std::to_string(p.dim) + ") of a " +
                                                std::to_string(m.global_shape.size()) + "-d tensor");
    }
    uint64_t numel = 1;
    for (uint64_t d : m.global_shape) {
        if (d != 0 && numel > std::numeric_limits<uint64_t>::max() / d)
            fail(Status::overflow, "the tensor has 2^64 elements or more");
        numel *= d;
    }
}

void local_box(const MeshSpec &m, std::vector<uint64_t> *start, std::vector<uint64_t> *local) {
    check_mesh(m);
    *start = std::vector<uint64_t>(m.global_shape.size(), 0);
    *local = m.global_shape;
    for (size_t i = 0; i < m.mesh_shape.size(); ++i) {
        const Placement &p = m.placements[i];
        if (p.kind != Placement::shard) continue;
        uint64_t offset, length;
        chunk((*local)[p.dim], m.mesh_shape[i], m.coord[i], &offset, &length);
        (*start)[p.dim] += offset;
        (*local)[p.dim] = length;
    }
}

namespace {

uint64_t round_up4(uint64_t v) {
    uint64_t out = 0;
    if (!round_up_to_block(v, &out)) fail(Status::overflow, "offset past 2^64");
    return out;
}

uint64_t checked_add(uint64_t a, uint64_t b) {
    if (b > std::numeric_limits<uint64_t>::max() - a) fail(Status::overflow, "offset past 2^64 - 1");
    return a + b;
}

}  // namespace

void dtensor_offsets(const MeshSpec &m, uint64_t offset, OffsetRule rule, uint64_t *pre, uint64_t *post) {
    check_mesh(m);
    const size_t nd = m.global_shape.size();
    // Per tensor dim: the shard index and count over the mesh dims sharding
    // it, combined in placement (mesh-dim) order.
    std::vector<uint64_t> shard_idx(nd, 0), shard_count(nd, 1);
    for (size_t i = 0; i < m.mesh_shape.size(); ++i) {
        const Placement &p = m.placements[i];
        if (p.kind != Placement::shard) continue;
        shard_idx[p.dim] = shard_idx[p.dim] * m.mesh_shape[i] + m.coord[i];
        shard_count[p.dim] *= m.mesh_shape[i];
    }
    // Row-major linear index over the tensor dims, the last dim fastest.
    uint64_t linear = 0, stride = 1;
    for (size_t d = nd; d-- > 0;) linear += shard_idx[d] * stride, stride *= shard_count[d];
    // The first shard's element count.
    std::vector<uint64_t> first = m.global_shape;
    for (size_t i = 0; i < m.mesh_shape.size(); ++i) {
        const Placement &p = m.placements[i];
        if (p.kind != Placement::shard) continue;
        uint64_t off, len;
        // torch: each placement chunks the full dim (a second Shard of the
        // same dim overwrites the first); exact: chunk the current size.
        chunk(rule == OffsetRule::torch ? m.global_shape[p.dim] : first[p.dim], m.mesh_shape[i], 0, &off, &len);
        first[p.dim] = len;
    }
    uint64_t first_numel = 1, numel = 1;
    for (size_t d = 0; d < nd; ++d) first_numel *= first[d], numel *= m.global_shape[d];
    if (first_numel != 0 && linear > std::numeric_limits<uint64_t>::max() / first_numel)
        fail(Status::overflow, "shard index * shard size passes 2^64");
    *pre = checked_add(offset, round_up4(linear * first_numel));
    *post = checked_add(offset, round_up4(numel));
}

uint64_t tracker_digest(const Tracker &t) {
    // The states only (the version 1 encoding): replicas whose origins name
    // different data-parallel ranks still hold the same streams.
    std::vector<uint8_t> bytes(checkpoint_size(t.table().entries()));
    encode_checkpoint(t.default_state(), t.table().entries(), bytes.data());
    // Philox4x32-10 as a compression function: the running 64-bit value and
    // the next 8 bytes form the counter, under a fixed key; the two halves of
    // the output are xor-ed into the new running value.  The length goes in
    // first, so no two inputs of different lengths share a chain.
    uint64_t h = bytes.size();
    for (size_t i = 0; i < bytes.size(); i += 8) {
        uint64_t m = 0;
        for (size_t j = 0; j < 8 && i + j < bytes.size(); ++j) m |= uint64_t{bytes[i + j]} << (8 * j);
        const PhiloxBlock b = philox4x32_10(static_cast<uint32_t>(h), static_cast<uint32_t>(h >> 32),
                                            static_cast<uint32_t>(m), static_cast<uint32_t>(m >> 32),
                                            0x52474B54u /* "RGKT" */, 0x44494745u /* "DIGE" */);
        h = (uint64_t{b.w[0]} | uint64_t{b.w[1]} << 32) ^ (uint64_t{b.w[2]} | uint64_t{b.w[3]} << 32);
    }
    return h;
}

}  // namespace rngtrk
