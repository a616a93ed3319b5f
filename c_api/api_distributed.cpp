// SPDX-License-Identifier: Apache-2.0
// The distributed-training entry points of the C ABI.
#include <string>
#include <vector>

#include "../core/distributed.h"
#include "../core/seed_policy.h"
#include "api_versioned_struct.h"
#include "api_names.h"
#include "api_convert.h"
#include "api_guard.h"
#include "api_tracker_handle.h"

namespace {

using rngtrk::guarded;
using rngtrk::require_pointer;

rngtrk::MeshSpec mesh_from_c(size_t mesh_ndim, const uint64_t *mesh_shape, const uint64_t *coord,
                             const rngtrk_placement *placements, size_t ndim, const uint64_t *global_shape) {
    static_assert(RNGTRK_MAX_NDIM == rngtrk::kMaxSliceDims, "one limit on dimensions");
    if (mesh_ndim == 0 || mesh_ndim > RNGTRK_MAX_NDIM)
        rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "mesh_ndim must be 1 to " + std::to_string(RNGTRK_MAX_NDIM));
    if (ndim > RNGTRK_MAX_NDIM)
        rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "ndim must be at most " + std::to_string(RNGTRK_MAX_NDIM));
    require_pointer(mesh_shape, "mesh_shape");
    require_pointer(coord, "coord");
    require_pointer(placements, "placements");
    if (ndim > 0) require_pointer(global_shape, "global_shape");
    rngtrk::MeshSpec m;
    m.mesh_shape.assign(mesh_shape, mesh_shape + mesh_ndim);
    m.coord.assign(coord, coord + mesh_ndim);
    for (size_t i = 0; i < mesh_ndim; ++i) {
        if (placements[i].kind > RNGTRK_PLACEMENT_PARTIAL)
            rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "unknown placement kind " + std::to_string(placements[i].kind));
        m.placements.push_back({static_cast<rngtrk::Placement::Kind>(placements[i].kind), placements[i].dim});
    }
    m.global_shape.assign(global_shape, global_shape + ndim);
    return m;
}

rngtrk::ParallelRank to_core(const rngtrk_parallel_rank &c) {
    rngtrk::ParallelRank r;
    r.tp = c.tp, r.pp = c.pp, r.dp = c.dp, r.ep = c.ep, r.etp = c.etp;
    r.gtp_remat = c.gtp_remat, r.gtp_remat_size = c.gtp_remat_size;
    r.egtp_remat = c.egtp_remat, r.egtp_remat_size = c.egtp_remat_size;
    return r;
}

rngtrk_origin to_c(const rngtrk::Origin &o) {
    rngtrk_origin c{};
    c.present = o.present ? 1 : 0;
    if (o.present) {
        c.policy = static_cast<uint32_t>(o.policy), c.flags = o.flags, c.seed = o.seed;
        const rngtrk::ParallelRank &r = o.rank;
        c.tp = r.tp, c.pp = r.pp, c.dp = r.dp, c.ep = r.ep, c.etp = r.etp;
        c.gtp_remat = r.gtp_remat, c.gtp_remat_size = r.gtp_remat_size;
        c.egtp_remat = r.egtp_remat, c.egtp_remat_size = r.egtp_remat_size;
    }
    return c;
}

}  // namespace

extern "C" {

RNGTRK_API rngtrk_status rngtrk_fold_in(const rngtrk_philox_state *state, uint64_t d, rngtrk_philox_state *out) {
    return guarded([&] {
        require_pointer(state, "state");
        require_pointer(out, "out");
        *out = rngtrk::to_c(rngtrk::fold_in(rngtrk::to_core(*state), d));
    });
}

RNGTRK_API const char *rngtrk_seed_policy_name(rngtrk_seed_policy policy) {
    return rngtrk::seed_policy_name(static_cast<uint32_t>(policy));
}

RNGTRK_API rngtrk_status rngtrk_seed_policy_from_name(const char *name, rngtrk_seed_policy *out) {
    return guarded([&] {
        rngtrk::value_of_name(name, out, "seeding policy", "policies",
                              [](uint32_t v) { return rngtrk::seed_policy_name(v); });
    });
}

RNGTRK_API const char *rngtrk_seed_flag_name(uint32_t flag) { return rngtrk::seed_flag_name(flag); }

RNGTRK_API rngtrk_status rngtrk_parallel_rank_init(rngtrk_parallel_rank *rank, size_t rank_size) {
    return guarded([&] {
        rngtrk_parallel_rank zero{};
        rngtrk::init_versioned(rank, rank_size, RNGTRK_PARALLEL_RANK_MIN_SIZE, zero, "rank");
    });
}

RNGTRK_API rngtrk_status rngtrk_origin_init(rngtrk_origin *origin, size_t origin_size) {
    return guarded([&] {
        rngtrk_origin zero{};
        rngtrk::init_versioned(origin, origin_size, RNGTRK_ORIGIN_MIN_SIZE, zero, "origin");
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_seed_rank(rngtrk_tracker *t, rngtrk_seed_policy policy, uint64_t seed,
                                                  const rngtrk_parallel_rank *rank, uint32_t flags) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        const rngtrk_parallel_rank c = rngtrk::read_versioned(rank, RNGTRK_PARALLEL_RANK_MIN_SIZE, rngtrk_parallel_rank{}, "rank");
        const rngtrk::SeedPolicy p = rngtrk::checked_seed_policy(static_cast<uint32_t>(policy));
        const rngtrk::ParallelRank r = to_core(c);
        rngtrk::check_seed_request(p, r, flags);
        const rngtrk::PolicySeeds seeds = rngtrk::policy_seeds(p, seed, r, flags);
        std::vector<rngtrk::NamedState> entries;
        for (const rngtrk::NamedSeed &n : seeds.named) entries.push_back({n.name, rngtrk::PhiloxState{n.seed, 0}});
        t->impl.set_states(std::move(entries));  // validates everything first
        t->impl.manual_seed(seeds.default_seed);
        t->impl.set_origin(rngtrk::request_origin(p, seed, r, flags));
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_get_origin(const rngtrk_tracker *t, rngtrk_origin *out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        rngtrk::write_versioned(out, RNGTRK_ORIGIN_MIN_SIZE, to_c(t->impl.origin()), "origin");
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_digest(const rngtrk_tracker *t, uint64_t *out) {
    return guarded(t, [&] {
        require_pointer(t, "tracker");
        require_pointer(out, "out");
        *out = rngtrk::tracker_digest(t->impl);
    });
}

RNGTRK_API rngtrk_status rngtrk_dtensor_offsets(size_t mesh_ndim, const uint64_t *mesh_shape, const uint64_t *coord,
                                                const rngtrk_placement *placements, size_t ndim,
                                                const uint64_t *global_shape, uint64_t offset,
                                                rngtrk_offset_rule rule, uint64_t *pre, uint64_t *post) {
    return guarded([&] {
        require_pointer(pre, "pre");
        require_pointer(post, "post");
        if (rule != RNGTRK_OFFSET_RULE_TORCH && rule != RNGTRK_OFFSET_RULE_EXACT)
            rngtrk::fail(RNGTRK_E_INVALID_ARGUMENT, "unknown offset rule");
        const rngtrk::MeshSpec m = mesh_from_c(mesh_ndim, mesh_shape, coord, placements, ndim, global_shape);
        uint64_t a, b;
        rngtrk::dtensor_offsets(m, offset, rule == RNGTRK_OFFSET_RULE_TORCH ? rngtrk::OffsetRule::torch
                                                                            : rngtrk::OffsetRule::exact, &a, &b);
        *pre = a, *post = b;
    });
}

RNGTRK_API rngtrk_status rngtrk_dtensor_local_box(size_t mesh_ndim, const uint64_t *mesh_shape,
                                                  const uint64_t *coord, const rngtrk_placement *placements,
                                                  size_t ndim, const uint64_t *global_shape, uint64_t *start,
                                                  uint64_t *local_shape) {
    return guarded([&] {
        const rngtrk::MeshSpec m = mesh_from_c(mesh_ndim, mesh_shape, coord, placements, ndim, global_shape);
        if (ndim > 0) {
            require_pointer(start, "start");
            require_pointer(local_shape, "local_shape");
        }
        std::vector<uint64_t> s, l;
        rngtrk::local_box(m, &s, &l);
        for (size_t d = 0; d < ndim; ++d) start[d] = s[d], local_shape[d] = l[d];
    });
}

}  // extern "C"
