// SPDX-License-Identifier: Apache-2.0
// Distributed helpers through the C API: seeding policies (exact upstream
// formulas, and collisions), fold_in, DTensor offsets against a table worked
// out by hand from PyTorch's torch/distributed/tensor/_random.py, local
// boxes, sharding invariance, and the tracker digest.
#include <Random123/philox.h>

#include <cstring>
#include <map>
#include <random>
#include <set>

#include "support.h"

using namespace rngtrk_test;

namespace {

rngtrk_placement S(uint32_t dim) { return {RNGTRK_PLACEMENT_SHARD, dim}; }
const rngtrk_placement R = {RNGTRK_PLACEMENT_REPLICATE, 0};
const rngtrk_placement P = {RNGTRK_PLACEMENT_PARTIAL, 0};

struct OffsetCase {
    std::vector<uint64_t> mesh, coord;
    std::vector<rngtrk_placement> placements;
    std::vector<uint64_t> shape;
    uint64_t offset, pre_torch, pre_exact, post;
    std::vector<uint64_t> start, local;
};

// The named states in the tracker's order, with their seeds.
std::vector<std::pair<std::string, uint64_t>> ordered_seeds(rngtrk_tracker *t) {
    std::vector<std::pair<std::string, uint64_t>> out;
    size_t n = 0;
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_count(t, &n));
    for (size_t i = 0; i < n; ++i) {
        const char *name;
        rngtrk_philox_state s;
        EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_name_at(t, i, &name));
        EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_get_state(t, name, &s));
        out.emplace_back(name, s.seed);
    }
    return out;
}

// The same, by name.
std::map<std::string, uint64_t> named_seeds(rngtrk_tracker *t) {
    const std::vector<std::pair<std::string, uint64_t>> ordered = ordered_seeds(t);
    return {ordered.begin(), ordered.end()};
}

rngtrk_parallel_rank remat_rank(uint32_t tp, uint32_t gtp, uint32_t gtp_size, uint32_t egtp, uint32_t egtp_size) {
    rngtrk_parallel_rank r = make_rank(tp, 0, 0, 0, 0);
    r.gtp_remat = gtp, r.gtp_remat_size = gtp_size, r.egtp_remat = egtp, r.egtp_remat_size = egtp_size;
    return r;
}

}  // namespace

TEST(Distributed, DTensorOffsetsMatchTheHandWorkedTable) {
    // Each row follows _set_pre_op_offset / _set_post_op_offset by hand:
    // shard index per tensor dim (mesh dims in placement order), row-major
    // linear index, first-shard numel, round_up4.
    const OffsetCase cases[] = {
        // mesh 2x4 at (1,3), [S0, R], 8x16: linear 1, first 4x16 = 64.
        {{2, 4}, {1, 3}, {S(0), R}, {8, 16}, 0, 64, 64, 128, {4, 0}, {4, 16}},
        // PyTorch's docstring example: mesh 2x2x2, rank 5 = (1,0,1), [S1, R, S0], 8x16:
        // shard (1,1), linear 3, first 4x8 = 32.
        {{2, 2, 2}, {1, 0, 1}, {S(1), R, S(0)}, {8, 16}, 0, 96, 96, 128, {4, 8}, {4, 8}},
        // Uneven: 10 rows over 3 ranks are 4,4,2; rank 2: linear 2, first 4x3 = 12.
        {{3}, {2}, {S(0)}, {10, 3}, 0, 24, 24, 32, {8, 0}, {2, 3}},
        // Dim 0 sharded twice (mesh 2x3 at (1,2), [S0, S0], 12x5), from offset 8:
        // shard index 1*3 + 2 = 5 of 6.  torch: the second placement recomputes
        // chunk(12, 3) = 4 rows, first numel 20, pre 8 + 100; exact: chunk(chunk(12,2),3)
        // = 2 rows, first numel 10, pre 8 + round_up4(50) = 60.  post 8 + 60.
        {{2, 3}, {1, 2}, {S(0), S(0)}, {12, 5}, 8, 108, 60, 68, {10, 0}, {2, 5}},
        // 3-D mesh, two sharded dims, uneven: mesh 2x2x2 at (1,1,0), [S0, S1, R], 7x9x4:
        // shard (1,1,0) of (2,2,1): linear 1*1 + 1*2 = 3; first 4x5x4 = 80; post 100 + 252.
        {{2, 2, 2}, {1, 1, 0}, {S(0), S(1), R}, {7, 9, 4}, 100, 340, 340, 352, {4, 5, 0}, {3, 4, 4}},
        // Partial behaves like Replicate: linear 0.
        {{4}, {3}, {P}, {5, 5}, 0, 0, 0, 28, {0, 0}, {5, 5}},
        // An empty last chunk: 5 over 4 ranks is 2,2,1,0; rank 3 holds nothing.
        {{4}, {3}, {S(0)}, {5}, 0, 8, 8, 8, {5}, {0}},
    };
    for (const OffsetCase &c : cases) {
        uint64_t pre = 0, post = 0;
        ASSERT_OK(rngtrk_dtensor_offsets(c.mesh.size(), c.mesh.data(), c.coord.data(), c.placements.data(),
                                         c.shape.size(), c.shape.data(), c.offset, RNGTRK_OFFSET_RULE_TORCH, &pre,
                                         &post));
        EXPECT_EQ(c.pre_torch, pre);
        EXPECT_EQ(c.post, post);
        ASSERT_OK(rngtrk_dtensor_offsets(c.mesh.size(), c.mesh.data(), c.coord.data(), c.placements.data(),
                                         c.shape.size(), c.shape.data(), c.offset, RNGTRK_OFFSET_RULE_EXACT, &pre,
                                         &post));
        EXPECT_EQ(c.pre_exact, pre);
        EXPECT_EQ(c.post, post);
        std::vector<uint64_t> start(c.shape.size()), local(c.shape.size());
        ASSERT_OK(rngtrk_dtensor_local_box(c.mesh.size(), c.mesh.data(), c.coord.data(), c.placements.data(),
                                           c.shape.size(), c.shape.data(), start.data(), local.data()));
        EXPECT_EQ(c.start, start);
        EXPECT_EQ(c.local, local);
    }
}

TEST(Distributed, DTensorErrors) {
    const uint64_t mesh[2] = {2, 4}, bad_coord[2] = {2, 0}, coord[2] = {1, 1}, shape[2] = {8, 8};
    const rngtrk_placement pl[2] = {S(0), R}, bad_pl[2] = {S(2), R}, weird[2] = {{7, 0}, R};
    uint64_t a, b;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dtensor_offsets(2, mesh, bad_coord, pl, 2, shape, 0, RNGTRK_OFFSET_RULE_TORCH, &a, &b));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dtensor_offsets(2, mesh, coord, bad_pl, 2, shape, 0, RNGTRK_OFFSET_RULE_TORCH, &a, &b));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dtensor_offsets(2, mesh, coord, weird, 2, shape, 0, RNGTRK_OFFSET_RULE_TORCH, &a, &b));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dtensor_offsets(0, mesh, coord, pl, 2, shape, 0, RNGTRK_OFFSET_RULE_TORCH, &a, &b));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dtensor_offsets(2, mesh, coord, pl, 2, shape, 0, static_cast<rngtrk_offset_rule>(5), &a, &b));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dtensor_offsets(2, mesh, coord, pl, 2, shape, 0, RNGTRK_OFFSET_RULE_TORCH, nullptr, &b));
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_dtensor_offsets(2, mesh, coord, pl, 2, shape, ~uint64_t{0} - 8, RNGTRK_OFFSET_RULE_TORCH, &a, &b));
}

TEST(Distributed, ShardedBoxesRebuildTheUnshardedTensorOnEveryLayout) {
    // 8 ranks on a 2x2x2 mesh, [S0, R, S1] (uneven 7x10): the boxes, drawn with
    // rngtrk_sample_slice, tile the tensor; replicas get identical boxes.
    const uint64_t mesh[3] = {2, 2, 2}, shape[2] = {7, 10};
    const rngtrk_placement pl[3] = {S(0), R, S(1)};
    for (rngtrk_layout layout :
         {RNGTRK_LAYOUT_STATELESS, RNGTRK_LAYOUT_NVFUSER, RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_LAYOUT_TRITON}) {
        rngtrk_sample_spec s;
        ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, layout, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32));
        rngtrk_sample_spec whole_spec = s;
        whole_spec.numel = 70;
        const rngtrk_philox_state st{2024, 12};
        std::vector<float> whole(70), rebuilt(70, -99.0f);
        ASSERT_OK(rngtrk_sample(&st, &whole_spec, 0, 70, whole.data(), 70 * 4));
        for (uint64_t r = 0; r < 8; ++r) {
            const uint64_t coord[3] = {r / 4, (r / 2) % 2, r % 2};
            uint64_t start[2], local[2];
            ASSERT_OK(rngtrk_dtensor_local_box(3, mesh, coord, pl, 2, shape, start, local));
            std::vector<float> box(local[0] * local[1] + 1);
            ASSERT_OK(rngtrk_sample_slice(&st, &s, 2, shape, start, local, box.data(), box.size() * 4));
            for (uint64_t i = 0; i < local[0]; ++i)
                for (uint64_t j = 0; j < local[1]; ++j) {
                    float &dst = rebuilt[(start[0] + i) * 10 + start[1] + j];
                    if (dst != -99.0f) {
                        ASSERT_EQ(dst, box[i * local[1] + j]) << "replicas differ";
                    }
                    dst = box[i * local[1] + j];
                }
        }
        EXPECT_EQ(whole, rebuilt) << "layout " << layout;
    }
}

TEST(Distributed, MegatronAndSlapoSeedsAreTheUpstreamFormulas) {
    TrackerPtr t = new_tracker();
    const rngtrk_parallel_rank r = make_rank(3, 1, 2, 1, 0);  // tp 3, pp 1, dp 2, ep 1, etp 0
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 1234, &r, 0));
    rngtrk_philox_state d;
    ASSERT_OK(rngtrk_tracker_get_default(t.get(), &d));
    EXPECT_EQ(1234u + 100, d.seed);
    std::map<std::string, uint64_t> want = {{"data-parallel-rng", 1334},
                                            {"model-parallel-rng", 1334 + 2718 + 3},
                                            {"expert-parallel-rng", 1334 + 1024 + 100 + 0}};
    EXPECT_EQ(want, named_seeds(t.get()));
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 1234, &r, RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT));
    ASSERT_OK(rngtrk_tracker_get_default(t.get(), &d));
    EXPECT_EQ(1234u + 100 + 20, d.seed);
    // slapo: seed += 100 pp + 10 dp; tp_seed = seed + 2718 + tp.
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_SLAPO, 2013, &r, 0));
    ASSERT_OK(rngtrk_tracker_get_default(t.get(), &d));
    EXPECT_EQ(2013u + 100 + 20, d.seed);
    EXPECT_EQ((std::map<std::string, uint64_t>{{"model-parallel-rng", 2133 + 2718 + 3}}), named_seeds(t.get()));
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_SLAPO, 2013, &r, RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED));
    ASSERT_OK(rngtrk_tracker_get_default(t.get(), &d));
    EXPECT_EQ(2133u + 2718 + 3, d.seed);
}

TEST(Distributed, MegatronSeedsAreMegatronLmMainsFormulasInItsAddOrderOnRandomRanks) {
    // Megatron-LM main (d98e8a6) model_parallel_cuda_manual_seed, after
    // training's seed + 100 pp (+ 10 dp): data-parallel, model-parallel,
    // expert-parallel, then gtp-remat only when its group has 2 ranks or
    // more, then egtp-remat likewise.
    std::mt19937_64 rng(2026);
    TrackerPtr t = new_tracker();
    int with_gtp = 0, with_egtp = 0;
    for (int trial = 0; trial < 400; ++trial) {
        rngtrk_parallel_rank r = make_rank(rng() % 64, rng() % 16, rng() % 64, rng() % 32, rng() % 8);
        // Sizes 0 and 1 (off) and 2..8 (on), with a rank below the size.
        r.gtp_remat_size = static_cast<uint32_t>(rng() % 9);
        r.gtp_remat = r.gtp_remat_size > 1 ? static_cast<uint32_t>(rng() % r.gtp_remat_size) : 0;
        r.egtp_remat_size = static_cast<uint32_t>(rng() % 9);
        r.egtp_remat = r.egtp_remat_size > 1 ? static_cast<uint32_t>(rng() % r.egtp_remat_size) : 0;
        const bool random_init = rng() % 2;
        const uint64_t seed = rng() % 100000;
        const rngtrk_status st = rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, seed, &r,
                                                          random_init ? RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT : 0);
        const uint64_t s = seed + 100 * r.pp + (random_init ? 10 * r.dp : 0);
        const uint64_t model = s + 2718 + r.tp, expert = s + 1024 + 100 * r.ep + r.etp;
        std::vector<std::pair<std::string, uint64_t>> want = {
            {"data-parallel-rng", s}, {"model-parallel-rng", model}, {"expert-parallel-rng", expert}};
        if (r.gtp_remat_size > 1) want.emplace_back("gtp-remat-rng", model + 65536 * (1 + uint64_t{r.gtp_remat})), ++with_gtp;
        if (r.egtp_remat_size > 1)
            want.emplace_back("egtp-remat-rng", expert + 32768 + 65536 * (1 + uint64_t{r.egtp_remat})), ++with_egtp;
        std::set<uint64_t> distinct;
        for (const auto &w : want) distinct.insert(w.second);
        if (distinct.size() < want.size()) {  // the additive formulas collide here: refused
            EXPECT_EQ(RNGTRK_E_DUPLICATE_SEED, st);
            continue;
        }
        ASSERT_OK(st);
        rngtrk_philox_state d;
        ASSERT_OK(rngtrk_tracker_get_default(t.get(), &d));
        EXPECT_EQ(s, d.seed);
        EXPECT_EQ(want, ordered_seeds(t.get()));
    }
    EXPECT_GT(with_gtp, 100);
    EXPECT_GT(with_egtp, 100);
    // A caller compiled against the first published struct (24 bytes) has both axes off.
    rngtrk_parallel_rank old_caller = remat_rank(1, 3, 4, 1, 2);
    old_caller.struct_size = RNGTRK_PARALLEL_RANK_MIN_SIZE;
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 5, &old_caller, 0));
    EXPECT_EQ(3u, ordered_seeds(t.get()).size());
}

TEST(Distributed, RematRanksOutsideTheirGroupAndRematWithSlapoAreRefusedByValue) {
    TrackerPtr t = new_tracker();
    const rngtrk_parallel_rank good = remat_rank(1, 1, 2, 0, 0);
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 5, &good, 0));
    const Snapshot before = snapshot(t.get());
    const std::vector<uint8_t> saved = save(t.get());
    const struct {
        rngtrk_seed_policy policy;
        rngtrk_parallel_rank rank;
        const char *message;
    } refused[] = {
        {RNGTRK_POLICY_MEGATRON, remat_rank(0, 4, 4, 0, 0), "gtp_remat 4 is outside its group of gtp_remat_size 4 (ranks 0 to 3)"},
        {RNGTRK_POLICY_DERIVED, remat_rank(0, 0, 0, 2, 2), "egtp_remat 2 is outside its group of egtp_remat_size 2"},
        {RNGTRK_POLICY_MEGATRON, remat_rank(0, 1, 1, 0, 0), "gtp_remat 1 with gtp_remat_size 1: a group of size 0 or 1 is off"},
        {RNGTRK_POLICY_DERIVED, remat_rank(0, 0, 0, 3, 0), "egtp_remat 3 with egtp_remat_size 0"},
        {RNGTRK_POLICY_SLAPO, remat_rank(0, 1, 2, 0, 0), "policy slapo has no gtp-remat-rng state: gtp_remat_size 2"},
        {RNGTRK_POLICY_SLAPO, remat_rank(0, 0, 0, 0, 8), "policy slapo has no egtp-remat-rng state"},
    };
    for (const auto &c : refused) {
        EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_seed_rank(t.get(), c.policy, 5, &c.rank, 0));
        EXPECT_NE(std::string::npos, std::string(rngtrk_last_error()).find(c.message)) << rngtrk_last_error();
        EXPECT_TRUE(before == snapshot(t.get()));
        EXPECT_EQ(saved, save(t.get()));
    }
    // slapo with the axes off (sizes 0 or 1, ranks 0) is fine.
    const rngtrk_parallel_rank off = remat_rank(1, 0, 1, 0, 0);
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_SLAPO, 5, &off, 0));
}

TEST(Distributed, TheOriginRecordsTheRematCoordinatesWithOffAsZero) {
    TrackerPtr t = new_tracker();
    const rngtrk_parallel_rank r = remat_rank(2, 3, 8, 0, 1);  // expert axis off, with size 1
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_DERIVED, 11, &r, 0));
    rngtrk_origin o;
    ASSERT_OK(RNGTRK_ORIGIN_INIT(&o));
    ASSERT_OK(rngtrk_tracker_get_origin(t.get(), &o));
    EXPECT_EQ(3u, o.gtp_remat);
    EXPECT_EQ(8u, o.gtp_remat_size);
    EXPECT_EQ(0u, o.egtp_remat);
    EXPECT_EQ(0u, o.egtp_remat_size) << "a size of 1 is recorded as 0";
    EXPECT_EQ(4u, ordered_seeds(t.get()).size());
    EXPECT_EQ("gtp-remat-rng", ordered_seeds(t.get()).back().first);
    // Version 3 round trip: the same bytes and origin in a fresh tracker.
    const std::vector<uint8_t> bytes = save(t.get());
    EXPECT_EQ(3u, bytes[8]);
    TrackerPtr u = new_tracker();
    ASSERT_OK(rngtrk_tracker_load(u.get(), bytes.data(), bytes.size()));
    rngtrk_origin back;
    ASSERT_OK(RNGTRK_ORIGIN_INIT(&back));
    ASSERT_OK(rngtrk_tracker_get_origin(u.get(), &back));
    EXPECT_EQ(0, std::memcmp(&o, &back, sizeof o));
    EXPECT_EQ(bytes, save(u.get()));
    // Without a remat axis on the same tracker writes version 2.
    const rngtrk_parallel_rank plain = remat_rank(2, 0, 1, 0, 0);
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_DERIVED, 11, &plain, 0));
    EXPECT_EQ(2u, save(t.get())[8]);
}

TEST(Distributed, DerivedSeedsUseFoldInAndNeverCollideOnABigLayout) {
    // fold_in against Random123: Philox(key(seed), counter offset/4 + d).
    rngtrk_philox_state f;
    const rngtrk_philox_state s{0x1234567890ull, 40};
    ASSERT_OK(rngtrk_fold_in(&s, 7, &f));
    r123::Philox4x32 philox;
    const r123::Philox4x32::ctr_type c = {{17, 0, 0, 0}};
    const r123::Philox4x32::key_type k = {{0x34567890u, 0x12u}};
    const r123::Philox4x32::ctr_type w = philox(c, k);
    EXPECT_EQ(uint64_t{w[0]} | uint64_t{w[1]} << 32, f.seed);
    EXPECT_EQ(uint64_t{w[2]} | uint64_t{w[3]} << 32, f.offset);
    // 16 tp x 8 pp x 16 dp x 8 ep x 2 etp coordinates: every (role, relevant
    // coordinates) gets its own seed.
    std::set<uint64_t> seen;
    size_t entries = 0;
    TrackerPtr t = new_tracker();
    for (uint32_t pp = 0; pp < 8; ++pp)
        for (uint32_t dp = 0; dp < 16; ++dp)
            for (uint32_t tp = 0; tp < 16; ++tp)
                for (uint32_t ep = 0; ep < 8; ++ep)
                    for (uint32_t etp = 0; etp < 2; ++etp) {
                        const rngtrk_parallel_rank r = make_rank(tp, pp, dp, ep, etp);
                        ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_DERIVED, 1234, &r,
                                                           RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT));
                        const std::map<std::string, uint64_t> n = named_seeds(t.get());
                        // Each seed should be new exactly when its coordinates are new.
                        if (tp == 0 && ep == 0 && etp == 0) seen.insert(n.at("data-parallel-rng")), ++entries;
                        if (ep == 0 && etp == 0) seen.insert(n.at("model-parallel-rng")), ++entries;
                        if (tp == 0) seen.insert(n.at("expert-parallel-rng")), ++entries;
                    }
    EXPECT_EQ(entries, seen.size());
}

TEST(Distributed, DerivedRematSeedsAreNewExactlyWhenTheirCoordinatesAre) {
    // 4 pp x 8 tp x 4 ep x 2 etp x GTP_remat 4 x expert GTP_remat 2: each
    // state's seed is distinct for each value of what it depends on, and
    // from every other state's.
    std::set<uint64_t> seen;
    size_t entries = 0;
    TrackerPtr t = new_tracker();
    for (uint32_t pp = 0; pp < 4; ++pp)
        for (uint32_t tp = 0; tp < 8; ++tp)
            for (uint32_t ep = 0; ep < 4; ++ep)
                for (uint32_t etp = 0; etp < 2; ++etp)
                    for (uint32_t gtp = 0; gtp < 4; ++gtp)
                        for (uint32_t egtp = 0; egtp < 2; ++egtp) {
                            rngtrk_parallel_rank r = remat_rank(tp, gtp, 4, egtp, 2);
                            r.pp = pp, r.ep = ep, r.etp = etp;
                            ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_DERIVED, 77, &r, 0));
                            const std::map<std::string, uint64_t> n = named_seeds(t.get());
                            const bool no_expert = ep == 0 && etp == 0 && egtp == 0, no_dense = tp == 0 && gtp == 0;
                            if (no_expert && no_dense) seen.insert(n.at("data-parallel-rng")), ++entries;
                            if (no_expert && gtp == 0) seen.insert(n.at("model-parallel-rng")), ++entries;
                            if (no_dense && egtp == 0) seen.insert(n.at("expert-parallel-rng")), ++entries;
                            if (no_expert) seen.insert(n.at("gtp-remat-rng")), ++entries;
                            if (no_dense) seen.insert(n.at("egtp-remat-rng")), ++entries;
                        }
    EXPECT_EQ(entries, seen.size());
}

TEST(Distributed, SeedRankErrorsChangeNothing) {
    TrackerPtr t = new_tracker();
    const rngtrk_parallel_rank r = make_rank(0, 0, 0, 0, 0);
    const Snapshot before = snapshot(t.get());
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_seed_rank(t.get(), static_cast<rngtrk_seed_policy>(9), 1, &r, 0));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 1, &r, 64));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 1, nullptr, 0));
    // Megatron collides within one rank when 2718 + tp = 1024 + 100 ep + etp.
    const rngtrk_parallel_rank clash = make_rank(6, 0, 0, 16, 100);
    EXPECT_STATUS(RNGTRK_E_DUPLICATE_SEED, rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 1, &clash, 0));
    // A seed whose sums pass 2^64 - 1 is refused, not wrapped into another rank's stream.
    const rngtrk_parallel_rank pp1 = make_rank(0, 1, 0, 0, 0);
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_SLAPO, UINT64_MAX, &pp1, 0));
    EXPECT_NE(std::string(rngtrk_last_error()).find("past 2^64 - 1"), std::string::npos) << rngtrk_last_error();
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT,
                  rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, UINT64_MAX - 2000, &r, 0));
    EXPECT_TRUE(before == snapshot(t.get()));
    // The largest seed that fits is taken: slapo's tp seed is seed + 2718 at rank 0.
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_SLAPO, UINT64_MAX - 2718, &r, 0));
}

TEST(Distributed, PolicyAndFlagNamesComeFromTheLibrary) {
    const std::pair<rngtrk_seed_policy, std::string> policies[] = {
        {RNGTRK_POLICY_MEGATRON, "megatron"}, {RNGTRK_POLICY_SLAPO, "slapo"}, {RNGTRK_POLICY_DERIVED, "derived"}};
    for (const auto &p : policies) {
        ASSERT_NE(nullptr, rngtrk_seed_policy_name(p.first));
        EXPECT_EQ(p.second, rngtrk_seed_policy_name(p.first));
        rngtrk_seed_policy back = static_cast<rngtrk_seed_policy>(-7);
        ASSERT_OK(rngtrk_seed_policy_from_name(p.second.c_str(), &back));
        EXPECT_EQ(p.first, back);
    }
    // Numbered from 0 without gaps: the first NULL ends the list.
    EXPECT_EQ(nullptr, rngtrk_seed_policy_name(static_cast<rngtrk_seed_policy>(3)));
    EXPECT_EQ(nullptr, rngtrk_seed_policy_name(static_cast<rngtrk_seed_policy>(-1)));
    EXPECT_EQ(nullptr, rngtrk_seed_policy_name(RNGTRK_POLICY_RANGE_));
    for (const char *bad : {"Megatron", "", "megatron ", "context-parallel", "derivedx"}) {
        rngtrk_seed_policy out = RNGTRK_POLICY_SLAPO;
        EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_seed_policy_from_name(bad, &out));
        EXPECT_NE(std::string::npos, std::string(rngtrk_last_error()).find("megatron, slapo or derived"));
        EXPECT_EQ(RNGTRK_POLICY_SLAPO, out) << "a refused name leaves *out";
    }
    const std::string long_name(5000, 'm');
    rngtrk_seed_policy out;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_seed_policy_from_name(long_name.c_str(), &out));
    EXPECT_LT(std::strlen(rngtrk_last_error()), 300u);
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_seed_policy_from_name(nullptr, &out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_seed_policy_from_name("megatron", nullptr));
    // Flags: exactly one known bit has a name.
    EXPECT_STREQ("dp-random-init", rngtrk_seed_flag_name(RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT));
    EXPECT_STREQ("always-enable-tp-seed", rngtrk_seed_flag_name(RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED));
    int named = 0;
    for (int i = 0; i < 32; ++i) named += rngtrk_seed_flag_name(1u << i) != nullptr;
    EXPECT_EQ(2, named);
    EXPECT_EQ(nullptr, rngtrk_seed_flag_name(0));
    EXPECT_EQ(nullptr, rngtrk_seed_flag_name(RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT | RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED));
    EXPECT_EQ(nullptr, rngtrk_seed_flag_name(4));
}

TEST(Distributed, UnknownPoliciesAndFlagsAndFlagsThePolicyDoesNotReadAreRefusedByName) {
    TrackerPtr t = new_tracker();
    const rngtrk_parallel_rank r = make_rank(1, 1, 1, 0, 0);
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_DERIVED, 3, &r, RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "model-parallel-rng"));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 8, nullptr));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "model-parallel-rng"));
    const Snapshot before = snapshot(t.get());
    const std::vector<uint8_t> saved = save(t.get());
    const struct {
        rngtrk_seed_policy policy;
        uint32_t flags;
        std::vector<std::string> named;  // what the message must name
    } refused[] = {
        {RNGTRK_POLICY_MEGATRON, RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED, {"megatron", "always-enable-tp-seed", "dp-random-init"}},
        {RNGTRK_POLICY_DERIVED, RNGTRK_SEED_ALWAYS_ENABLE_TP_SEED | RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT,
         {"derived", "always-enable-tp-seed"}},
        {RNGTRK_POLICY_SLAPO, RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT, {"slapo", "dp-random-init"}},
        {RNGTRK_POLICY_MEGATRON, 4, {"0x4"}},  // the bit the context-parallel flag had: unknown now
        {RNGTRK_POLICY_SLAPO, 0x80000000u, {"0x80000000", "dp-random-init", "always-enable-tp-seed"}},
        {static_cast<rngtrk_seed_policy>(3), 0, {"3", "megatron, slapo or derived"}},
    };
    for (const auto &c : refused) {
        EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_seed_rank(t.get(), c.policy, 3, &r, c.flags));
        const std::string message = rngtrk_last_error();
        for (const std::string &word : c.named) EXPECT_NE(std::string::npos, message.find(word)) << message;
        EXPECT_TRUE(before == snapshot(t.get()));
        EXPECT_EQ(saved, save(t.get()));  // the origin too
    }
}

TEST(Distributed, DigestsAgreeExactlyWhenTrackersDo) {
    TrackerPtr a = new_tracker(), b = new_tracker();
    uint64_t da, db;
    ASSERT_OK(rngtrk_tracker_digest(a.get(), &da));
    ASSERT_OK(rngtrk_tracker_digest(b.get(), &db));
    EXPECT_EQ(da, db);
    const rngtrk_parallel_rank r = make_rank(1, 0, 0, 0, 0);
    ASSERT_OK(rngtrk_tracker_seed_rank(a.get(), RNGTRK_POLICY_MEGATRON, 5, &r, 0));
    ASSERT_OK(rngtrk_tracker_seed_rank(b.get(), RNGTRK_POLICY_MEGATRON, 5, &r, 0));
    ASSERT_OK(rngtrk_tracker_digest(a.get(), &da));
    ASSERT_OK(rngtrk_tracker_digest(b.get(), &db));
    EXPECT_EQ(da, db);
    std::set<uint64_t> digests{da};
    // Every single change of offset, seed or default gives another digest.
    ASSERT_OK(rngtrk_tracker_advance(b.get(), 4, nullptr));
    ASSERT_OK(rngtrk_tracker_digest(b.get(), &db));
    EXPECT_TRUE(digests.insert(db).second);
    ASSERT_OK(rngtrk_tracker_fork(a.get(), "model-parallel-rng"));
    ASSERT_OK(rngtrk_tracker_advance(a.get(), 4, nullptr));
    ASSERT_OK(rngtrk_tracker_digest(a.get(), &da));
    EXPECT_TRUE(digests.insert(da).second);
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_digest(a.get(), nullptr));
}

namespace {

std::vector<uint8_t> seeded_checkpoint(rngtrk_seed_policy policy, const rngtrk_parallel_rank &r, uint32_t flags) {
    TrackerPtr t = new_tracker();
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_seed_rank(t.get(), policy, 1234, &r, flags));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_fork(t.get(), "model-parallel-rng"));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_advance(t.get(), 16, nullptr));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_restore(t.get(), "model-parallel-rng"));
    return save(t.get());
}

}  // namespace

TEST(Distributed, CheckpointsOfSeededTrackersAreVersion2AndNameTheirRank) {
    // tp 3, pp 1, dp 2, ep 1: the golden file written by the independent encoder.
    const rngtrk_parallel_rank r = make_rank(3, 1, 2, 1, 0);
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 1234, &r, 0));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 8, nullptr));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "model-parallel-rng"));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 16, nullptr));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "model-parallel-rng"));
    const std::vector<uint8_t> bytes = save(t.get());
    EXPECT_EQ(read_file(vector_path("checkpoints/megatron_rank_v2.rtck")), bytes);
    EXPECT_EQ(2u, bytes[8]);
    // A fresh tracker takes the origin with the states.
    TrackerPtr u = new_tracker();
    ASSERT_OK(rngtrk_tracker_load(u.get(), bytes.data(), bytes.size()));
    rngtrk_origin o;
    ASSERT_OK(RNGTRK_ORIGIN_INIT(&o));
    ASSERT_OK(rngtrk_tracker_get_origin(u.get(), &o));
    EXPECT_EQ(1u, o.present);
    EXPECT_EQ(uint32_t{RNGTRK_POLICY_MEGATRON}, o.policy);
    EXPECT_EQ(1234u, o.seed);
    EXPECT_EQ(3u, o.tp);
    EXPECT_EQ(2u, o.dp);
    EXPECT_EQ(bytes, save(u.get()));
    // reset forgets it, and saves version 1 again.
    ASSERT_OK(rngtrk_tracker_reset(u.get()));
    ASSERT_OK(rngtrk_tracker_get_origin(u.get(), &o));
    EXPECT_EQ(0u, o.present);
    EXPECT_EQ(1u, save(u.get())[8]);
}

TEST(Distributed, ACheckpointOfAnotherRankIsRefusedUnlessAsked) {
    const rngtrk_parallel_rank writer = make_rank(1, 0, 0, 0, 0), other_tp = make_rank(0, 0, 0, 0, 0),
                               other_dp = make_rank(1, 0, 1, 0, 0);
    const std::vector<uint8_t> bytes = seeded_checkpoint(RNGTRK_POLICY_MEGATRON, writer, 0);
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 1234, &other_tp, 0));
    const Snapshot before = snapshot(t.get());
    EXPECT_STATUS(RNGTRK_E_WRONG_RANK, rngtrk_tracker_load(t.get(), bytes.data(), bytes.size()));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "tp 1"));
    EXPECT_TRUE(before == snapshot(t.get()));
    // Megatron without data-parallel random init: dp replicas share streams.
    TrackerPtr replica = new_tracker();
    ASSERT_OK(rngtrk_tracker_seed_rank(replica.get(), RNGTRK_POLICY_MEGATRON, 1234, &other_dp, 0));
    ASSERT_OK(rngtrk_tracker_load(replica.get(), bytes.data(), bytes.size()));
    // ...but not with it, nor under slapo, where dp changes the seeds.
    const std::vector<uint8_t> dp_init = seeded_checkpoint(RNGTRK_POLICY_MEGATRON, writer, RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT);
    TrackerPtr d = new_tracker();
    ASSERT_OK(rngtrk_tracker_seed_rank(d.get(), RNGTRK_POLICY_MEGATRON, 1234, &other_dp, RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT));
    EXPECT_STATUS(RNGTRK_E_WRONG_RANK, rngtrk_tracker_load(d.get(), dp_init.data(), dp_init.size()));
    // Another base seed or policy is another job.
    TrackerPtr s = new_tracker();
    ASSERT_OK(rngtrk_tracker_seed_rank(s.get(), RNGTRK_POLICY_DERIVED, 1234, &writer, 0));
    EXPECT_STATUS(RNGTRK_E_WRONG_RANK, rngtrk_tracker_load(s.get(), bytes.data(), bytes.size()));
    // The override takes it, with its origin.
    ASSERT_OK(rngtrk_tracker_load_flags(t.get(), bytes.data(), bytes.size(), RNGTRK_LOAD_ANY_RANK));
    EXPECT_EQ(bytes, save(t.get()));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_load_flags(t.get(), bytes.data(), bytes.size(), 2));
    // Version 1 checkpoints carry no origin: always accepted.
    const std::vector<uint8_t> v1 = read_file(vector_path("checkpoints/megatron.rtck"));
    ASSERT_OK(rngtrk_tracker_load(s.get(), v1.data(), v1.size()));
}

TEST(Distributed, AWrongRankRefusalNamesEveryCoordinateThatDiffers) {
    // megatron without random init: dp does not matter, the four others do.
    const rngtrk_parallel_rank writer = make_rank(1, 0, 0, 0, 0), reader = make_rank(0, 1, 3, 2, 1);
    const std::vector<uint8_t> bytes = seeded_checkpoint(RNGTRK_POLICY_MEGATRON, writer, 0);
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 1234, &reader, 0));
    const Snapshot before = snapshot(t.get());
    EXPECT_STATUS(RNGTRK_E_WRONG_RANK, rngtrk_tracker_load(t.get(), bytes.data(), bytes.size()));
    const std::string message = rngtrk_last_error();
    for (const char *want : {"they differ in tp 1 vs 0, pp 0 vs 1, ep 0 vs 2, etp 0 vs 1;", "RNGTRK_LOAD_ANY_RANK"})
        EXPECT_NE(std::string::npos, message.find(want)) << message;
    EXPECT_EQ(std::string::npos, message.find("dp 0 vs 3")) << message;
    EXPECT_TRUE(before == snapshot(t.get()));
    // Another policy, seed and flags are named as such.
    TrackerPtr d = new_tracker();
    ASSERT_OK(rngtrk_tracker_seed_rank(d.get(), RNGTRK_POLICY_DERIVED, 99, &writer, RNGTRK_SEED_DATA_PARALLEL_RANDOM_INIT));
    EXPECT_STATUS(RNGTRK_E_WRONG_RANK, rngtrk_tracker_load(d.get(), bytes.data(), bytes.size()));
    EXPECT_NE(std::string::npos,
              std::string(rngtrk_last_error()).find("policy megatron vs derived, base seed 1234 vs 99, flags none vs "
                                                    "dp-random-init"))
        << rngtrk_last_error();
}

TEST(Distributed, ARematCoordinateAloneMakesAnotherRank) {
    // GTP_remat rank 1 of 4 writes; the reader differs only in that rank,
    // only in whether the axis is on, or only in the expert axis.
    for (rngtrk_seed_policy policy : {RNGTRK_POLICY_MEGATRON, RNGTRK_POLICY_DERIVED}) {
        const rngtrk_parallel_rank writer = remat_rank(1, 1, 4, 0, 0);
        const std::vector<uint8_t> bytes = seeded_checkpoint(policy, writer, 0);
        EXPECT_EQ(3u, bytes[8]);
        const struct {
            rngtrk_parallel_rank reader;
            const char *difference;
        } cases[] = {
            {remat_rank(1, 2, 4, 0, 0), "they differ in gtp_remat 1 vs 2;"},
            {remat_rank(1, 0, 0, 0, 0), "they differ in gtp_remat on (1 of 4) vs off;"},
            {remat_rank(1, 0, 1, 0, 0), "they differ in gtp_remat on (1 of 4) vs off;"},
            {remat_rank(1, 1, 4, 0, 2), "they differ in egtp_remat off vs on (0 of 2);"},
            {remat_rank(0, 2, 4, 1, 3), "they differ in tp 1 vs 0, gtp_remat 1 vs 2, egtp_remat off vs on (1 of 3);"},
        };
        for (const auto &c : cases) {
            TrackerPtr t = new_tracker();
            ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), policy, 1234, &c.reader, 0));
            const Snapshot before = snapshot(t.get());
            EXPECT_STATUS(RNGTRK_E_WRONG_RANK, rngtrk_tracker_load(t.get(), bytes.data(), bytes.size()));
            EXPECT_NE(std::string::npos, std::string(rngtrk_last_error()).find(c.difference)) << rngtrk_last_error();
            EXPECT_TRUE(before == snapshot(t.get()));
            // any_rank takes it, with its origin.
            ASSERT_OK(rngtrk_tracker_load_flags(t.get(), bytes.data(), bytes.size(), RNGTRK_LOAD_ANY_RANK));
            EXPECT_EQ(bytes, save(t.get()));
            rngtrk_origin o;
            ASSERT_OK(RNGTRK_ORIGIN_INIT(&o));
            ASSERT_OK(rngtrk_tracker_get_origin(t.get(), &o));
            EXPECT_EQ(1u, o.gtp_remat);
            EXPECT_EQ(4u, o.gtp_remat_size);
        }
        // Another group size with the same rank draws the same numbers: accepted.
        TrackerPtr same = new_tracker();
        const rngtrk_parallel_rank bigger_group = remat_rank(1, 1, 8, 0, 0);
        ASSERT_OK(rngtrk_tracker_seed_rank(same.get(), policy, 1234, &bigger_group, 0));
        ASSERT_OK(rngtrk_tracker_load(same.get(), bytes.data(), bytes.size()));
    }
}

TEST(Distributed, DataParallelReplicasHaveEqualDigestsAndTensorShardsDifferent) {
    std::map<std::pair<uint32_t, uint32_t>, uint64_t> by_tp_pp;
    std::set<uint64_t> distinct;
    for (uint32_t pp = 0; pp < 2; ++pp)
        for (uint32_t dp = 0; dp < 2; ++dp)
            for (uint32_t tp = 0; tp < 2; ++tp) {
                TrackerPtr t = new_tracker();
                const rngtrk_parallel_rank r = make_rank(tp, pp, dp, 0, 0);
                ASSERT_OK(rngtrk_tracker_seed_rank(t.get(), RNGTRK_POLICY_MEGATRON, 7, &r, 0));
                uint64_t d;
                ASSERT_OK(rngtrk_tracker_digest(t.get(), &d));
                const auto key = std::make_pair(tp, pp);
                if (by_tp_pp.count(key)) {
                    EXPECT_EQ(by_tp_pp[key], d) << "dp replicas differ";
                }
                by_tp_pp[key] = d;
                distinct.insert(d);
            }
    EXPECT_EQ(4u, distinct.size());  // one per (tp, pp)
}
