// SPDX-License-Identifier: Apache-2.0
// The reservation ledger: reuse caught (or recorded), recomputation proven to
// replay the forward exactly, the planted bugs of issue 17 each caught with
// the right status, a correct recomputation over nested forks and many steps
// passing, and a property test against a brute-force model.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "rngtrk.h"
#include "support.h"

namespace {

using rngtrk_test::new_tracker;
using rngtrk_test::snapshot;
using rngtrk_test::Snapshot;
using rngtrk_test::TrackerPtr;

// The states a checkpointed forward starts from (TransformerEngine's get_states).
struct States {
    rngtrk_philox_state def;
    std::vector<std::string> names;
    std::vector<rngtrk_philox_state> states;
};

States take(rngtrk_tracker *t) {
    States s;
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_get_default(t, &s.def));
    size_t n = 0;
    rngtrk_tracker_count(t, &n);
    for (size_t i = 0; i < n; ++i) {
        const char *name;
        rngtrk_tracker_name_at(t, i, &name);
        s.names.push_back(name);
        rngtrk_philox_state st;
        rngtrk_tracker_get_state(t, name, &st);
        s.states.push_back(st);
    }
    return s;
}

void put(rngtrk_tracker *t, const States &s) {
    std::vector<const char *> names;
    for (const std::string &n : s.names) names.push_back(n.c_str());
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_set_states(t, names.data(), s.states.data(), names.size()));
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_set_default(t, &s.def));
}

rngtrk_status draw(rngtrk_tracker *t, const char *fork, uint64_t n) {
    if (fork != nullptr && rngtrk_tracker_fork(t, fork) != RNGTRK_OK) return RNGTRK_E_INTERNAL;
    rngtrk_philox_state before;
    const rngtrk_status st = rngtrk_tracker_advance(t, n, &before);
    if (fork != nullptr) {
        EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_restore(t, fork));
    }
    return st;
}

// One layer's forward: dropout in the tensor-parallel region (nested in
// another fork), one in the default region, an expert draw.
rngtrk_status layer(rngtrk_tracker *t, uint64_t step, uint64_t extra = 0) {
    rngtrk_status st;
    if ((st = rngtrk_tracker_fork(t, "data-parallel-rng")) != RNGTRK_OK) return st;
    st = draw(t, "model-parallel-rng", 4096 + extra);
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_restore(t, "data-parallel-rng"));
    if (st != RNGTRK_OK) return st;
    if ((st = draw(t, nullptr, 1000 + step)) != RNGTRK_OK) return st;
    return draw(t, "expert-parallel-rng", 64);
}

TrackerPtr seeded(rngtrk_ledger_mode mode) {
    TrackerPtr t = new_tracker();
    rngtrk_tracker_manual_seed(t.get(), 1234);
    rngtrk_tracker_add(t.get(), "data-parallel-rng", 1235);
    rngtrk_tracker_add(t.get(), "model-parallel-rng", 3952);
    rngtrk_tracker_add(t.get(), "expert-parallel-rng", 2258);
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_set_ledger(t.get(), mode, 0));
    return t;
}

}  // namespace

TEST(Ledger, OffByDefaultAndReuseGoesUnnoticed) {
    TrackerPtr t = new_tracker();
    const States s = take(t.get());
    ASSERT_EQ(RNGTRK_OK, draw(t.get(), nullptr, 16));
    put(t.get(), s);
    EXPECT_EQ(RNGTRK_OK, draw(t.get(), nullptr, 16)) << "without a ledger the same numbers go out twice";
    uint64_t mark;
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_ledger_mark(t.get(), &mark));
}

TEST(Ledger, AWrongSnapshotRestoredIsRefusedNamingBothRangesAndChangesNothing) {
    TrackerPtr t = seeded(RNGTRK_LEDGER_RAISE);
    const States old = take(t.get());
    ASSERT_EQ(RNGTRK_OK, layer(t.get(), 0));
    ASSERT_EQ(RNGTRK_OK, layer(t.get(), 1));
    put(t.get(), old);  // the planted bug: a stale snapshot
    const Snapshot before = snapshot(t.get());
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_fork(t.get(), "model-parallel-rng"));
    rngtrk_philox_state got;
    EXPECT_EQ(RNGTRK_E_STREAM_REUSE, rngtrk_tracker_advance(t.get(), 4096, &got));
    const std::string m = rngtrk_last_error();
    EXPECT_NE(m.find("state 'model-parallel-rng' seed 3952 offsets [0, 4096)"), std::string::npos) << m;
    EXPECT_NE(m.find("reservation #0"), std::string::npos) << m;
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_restore(t.get(), "model-parallel-rng"));
    EXPECT_TRUE(before == snapshot(t.get())) << "a refused reservation moves nothing";
    // The tracker-level draws go through the ledger too.
    rngtrk_sample_spec spec;
    ASSERT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&spec, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    std::vector<float> out(8);
    EXPECT_EQ(RNGTRK_E_STREAM_REUSE, rngtrk_tracker_sample(t.get(), &spec, 8, out.data(), 32, nullptr));
    EXPECT_STREQ("random numbers reused", rngtrk_status_string(RNGTRK_E_STREAM_REUSE));
}

TEST(Ledger, RecordModeHandsOutAndListsTheOverlaps) {
    TrackerPtr t = seeded(RNGTRK_LEDGER_RECORD);
    const States old = take(t.get());
    ASSERT_EQ(RNGTRK_OK, draw(t.get(), "model-parallel-rng", 100));
    put(t.get(), old);
    ASSERT_EQ(RNGTRK_OK, draw(t.get(), "model-parallel-rng", 8));
    size_t count = 0;
    EXPECT_EQ(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_tracker_ledger_overlaps(t.get(), nullptr, 0, &count));
    ASSERT_EQ(1u, count);
    rngtrk_overlap o;
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_overlaps(t.get(), &o, 1, &count));
    EXPECT_EQ(3952u, o.seed);
    EXPECT_EQ(1u, o.earlier_known);
    EXPECT_EQ(0u, o.earlier_begin);
    EXPECT_EQ(100u, o.earlier_end);
    EXPECT_EQ(0u, o.earlier_sequence);
    EXPECT_EQ(0u, o.later_begin);
    EXPECT_EQ(8u, o.later_end);
    EXPECT_EQ(1u, o.later_sequence);
    EXPECT_STREQ("model-parallel-rng", o.name);
}

TEST(Ledger, CorrectRecomputationOverNestedForksAndManyStepsPasses) {
    TrackerPtr t = seeded(RNGTRK_LEDGER_RAISE);
    for (uint64_t step = 0; step < 50; ++step) {
        // Forward: two checkpointed layers, each a region, and one plain.
        const States s0 = take(t.get());
        uint64_t m0, m1, m2;
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_mark(t.get(), &m0));
        ASSERT_EQ(RNGTRK_OK, layer(t.get(), step));
        const States s1 = take(t.get());
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_mark(t.get(), &m1));
        ASSERT_EQ(RNGTRK_OK, layer(t.get(), step + 7));
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_mark(t.get(), &m2));
        ASSERT_EQ(RNGTRK_OK, draw(t.get(), nullptr, 12));  // not checkpointed
        const States after = take(t.get());
        // Backward, last layer first: restore, replay, put the states back.
        put(t.get(), s1);
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_begin(t.get(), m1));
        ASSERT_EQ(RNGTRK_OK, layer(t.get(), step + 7)) << rngtrk_last_error();
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_end(t.get())) << rngtrk_last_error();
        put(t.get(), s0);
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_begin(t.get(), m0));
        ASSERT_EQ(RNGTRK_OK, layer(t.get(), step)) << rngtrk_last_error();
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_end(t.get())) << rngtrk_last_error();
        put(t.get(), after);
    }
}

TEST(Ledger, PlantedRecomputationBugsAreEachCaught) {
    // 0: one extra number; 1: a skipped draw; 2: from another state; 3: an extra draw.
    for (int bug = 0; bug < 4; ++bug) {
        SCOPED_TRACE(bug);
        TrackerPtr t = seeded(RNGTRK_LEDGER_RAISE);
        const States s0 = take(t.get());
        uint64_t m0, m1;
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_mark(t.get(), &m0));
        ASSERT_EQ(RNGTRK_OK, layer(t.get(), 3));
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_mark(t.get(), &m1));
        const States after = take(t.get());
        if (bug != 2) put(t.get(), s0);  // bug 2 forgets to restore
        ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_begin(t.get(), m0));
        const Snapshot before = snapshot(t.get());
        rngtrk_status st = RNGTRK_OK, end = RNGTRK_OK;
        if (bug == 0) {
            st = layer(t.get(), 3, 1);  // 4097 numbers where the forward drew 4096
        } else if (bug == 1) {
            ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_fork(t.get(), "data-parallel-rng"));
            st = draw(t.get(), "model-parallel-rng", 4096);
            ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_restore(t.get(), "data-parallel-rng"));
            if (st == RNGTRK_OK) st = draw(t.get(), nullptr, 1003);  // the expert draw skipped
        } else if (bug == 2) {
            st = layer(t.get(), 3);
        } else {
            st = layer(t.get(), 3);
            if (st == RNGTRK_OK) st = draw(t.get(), nullptr, 4);  // one draw more
        }
        const std::string message = rngtrk_last_error();
        end = rngtrk_tracker_replay_end(t.get());
        const bool caught = st == RNGTRK_E_REPLAY_MISMATCH || end == RNGTRK_E_REPLAY_MISMATCH;
        EXPECT_TRUE(caught) << "draw " << st << " end " << end;
        if (bug == 0 || bug == 2) {
            EXPECT_EQ(RNGTRK_E_REPLAY_MISMATCH, st);
            EXPECT_NE(message.find("expected"), std::string::npos) << message;
            EXPECT_TRUE(before == snapshot(t.get()) || bug == 0) << "the refused reservation moved nothing";
        }
        if (bug == 1) {
            EXPECT_EQ(RNGTRK_E_REPLAY_MISMATCH, end) << "fewer reservations than the forward";
        }
        if (bug == 3) {
            EXPECT_NE(message.find("draws more than the forward"), std::string::npos) << message;
        }
        put(t.get(), after);
    }
}

TEST(Ledger, MisuseIsRefusedAndTheLedgerSurvivesSetStatesButNotCheckpoints) {
    TrackerPtr t = seeded(RNGTRK_LEDGER_RAISE);
    uint64_t m;
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_mark(t.get(), &m));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_begin(t.get(), m + 5)) << "not a mark";
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_end(t.get())) << "no replay open";
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_begin(t.get(), m));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_begin(t.get(), m)) << "nested replay";
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_ledger_mark(t.get(), &m)) << "mark inside a replay";
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_set_ledger(t.get(), RNGTRK_LEDGER_OFF, 0));
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_end(t.get()));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_set_ledger(t.get(), static_cast<rngtrk_ledger_mode>(7), 0));
    // set_states and load keep the ledger: restoring an old checkpoint then
    // drawing is exactly the reuse it is there to catch.
    std::vector<uint8_t> ckpt(4096);
    size_t len = 0;
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_save(t.get(), ckpt.data(), ckpt.size(), &len));
    ASSERT_EQ(RNGTRK_OK, draw(t.get(), "model-parallel-rng", 64));
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_load(t.get(), ckpt.data(), len));
    EXPECT_EQ(RNGTRK_E_STREAM_REUSE, draw(t.get(), "model-parallel-rng", 64));
    // A checkpoint does not carry it: a fresh tracker loading it has none.
    TrackerPtr other = new_tracker();
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_load(other.get(), ckpt.data(), len));
    EXPECT_EQ(RNGTRK_OK, draw(other.get(), "model-parallel-rng", 64));
    EXPECT_EQ(RNGTRK_OK, draw(other.get(), nullptr, 4));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_ledger_mark(other.get(), &m));
}

TEST(Ledger, APositionEndsNoRegionAndAPrefixReplayMayStopEarlyButNotDiffer) {
    TrackerPtr t = seeded(RNGTRK_LEDGER_RAISE);
    const States s0 = take(t.get());
    uint64_t m0, p1, p2;
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_mark(t.get(), &m0));
    ASSERT_EQ(RNGTRK_OK, layer(t.get(), 0));
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_position(t.get(), &p1));
    EXPECT_EQ(m0 + 3, p1) << "a layer makes three reservations";
    const States s1 = take(t.get());
    ASSERT_EQ(RNGTRK_OK, layer(t.get(), 1));
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_position(t.get(), &p2));
    const States after = take(t.get());
    // A position is not a mark: the region of m0 still holds both layers.
    put(t.get(), s0);
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_begin(t.get(), m0));
    ASSERT_EQ(RNGTRK_OK, layer(t.get(), 0)) << rngtrk_last_error();
    EXPECT_EQ(RNGTRK_E_REPLAY_MISMATCH, rngtrk_tracker_replay_end(t.get())) << "the region holds the second layer";
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_begin(t.get(), p1)) << "a position is not a mark";
    // A prefix replay from p1: the second layer, then stopping early is fine.
    put(t.get(), s1);
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_prefix_begin(t.get(), p1));
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_fork(t.get(), "data-parallel-rng"));
    ASSERT_EQ(RNGTRK_OK, draw(t.get(), "model-parallel-rng", 4096)) << rngtrk_last_error();
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_restore(t.get(), "data-parallel-rng"));
    uint64_t during;
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_position(t.get(), &during));
    EXPECT_EQ(p1 + 1, during) << "during a replay: the reservation it is at";
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_replay_end(t.get())) << "a prefix replay may stop early";
    // ... but a draw that differs is caught, and changes nothing.
    put(t.get(), s1);
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_prefix_begin(t.get(), p1));
    const Snapshot before = snapshot(t.get());
    EXPECT_EQ(RNGTRK_E_REPLAY_MISMATCH, draw(t.get(), nullptr, 8)) << "the forward drew in model-parallel-rng first";
    EXPECT_NE(std::string(rngtrk_last_error()).find("expected state 'model-parallel-rng'"), std::string::npos)
        << rngtrk_last_error();
    EXPECT_TRUE(before == snapshot(t.get()));
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_end(t.get()));
    // ... and so is a replay that draws past everything recorded.
    put(t.get(), s1);
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_prefix_begin(t.get(), p1));
    ASSERT_EQ(RNGTRK_OK, layer(t.get(), 1)) << rngtrk_last_error();
    EXPECT_EQ(RNGTRK_E_REPLAY_MISMATCH, draw(t.get(), nullptr, 4));
    EXPECT_NE(std::string(rngtrk_last_error()).find("draws more than the forward"), std::string::npos);
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_end(t.get()));
    put(t.get(), after);
    // Refusals: past the position, a replay already open, ledger off, NULLs.
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_prefix_begin(t.get(), p2 + 1));
    EXPECT_NE(std::string(rngtrk_last_error()).find("past the ledger's position"), std::string::npos);
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_prefix_begin(t.get(), p2));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_prefix_begin(t.get(), p2));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_begin(t.get(), m0));
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_replay_end(t.get()));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_ledger_position(t.get(), nullptr));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_ledger_position(nullptr, &p1));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_prefix_begin(nullptr, 0));
    TrackerPtr off = new_tracker();
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_ledger_position(off.get(), &p1));
    EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_prefix_begin(off.get(), 0));
}

TEST(Ledger, CapacityDropsTheOldestReservationsAndSaysSoOnReplay) {
    TrackerPtr t = seeded(RNGTRK_LEDGER_RAISE);
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_set_ledger(t.get(), RNGTRK_LEDGER_RAISE, 8));
    const States s0 = take(t.get());
    uint64_t m0, m1;
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_mark(t.get(), &m0));
    ASSERT_EQ(RNGTRK_OK, draw(t.get(), nullptr, 4));
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_ledger_mark(t.get(), &m1));
    for (int i = 0; i < 20; ++i) ASSERT_EQ(RNGTRK_OK, draw(t.get(), nullptr, 4));
    put(t.get(), s0);
    EXPECT_EQ(RNGTRK_E_REPLAY_MISMATCH, rngtrk_tracker_replay_begin(t.get(), m0));
    EXPECT_NE(std::string(rngtrk_last_error()).find("keeps the last 8"), std::string::npos) << rngtrk_last_error();
    EXPECT_EQ(RNGTRK_E_REPLAY_MISMATCH, rngtrk_tracker_replay_prefix_begin(t.get(), m0)) << "the same for a prefix";
    // Reuse is still caught: the merged ranges are kept apart from the log.
    EXPECT_EQ(RNGTRK_E_STREAM_REUSE, draw(t.get(), nullptr, 4));
}

TEST(Ledger, ReuseDecisionsEqualABruteForceModel) {
    std::mt19937_64 rng(17);
    for (int round = 0; round < 40; ++round) {
        const bool record = round % 2 == 1;
        TrackerPtr t = seeded(record ? RNGTRK_LEDGER_RECORD : RNGTRK_LEDGER_RAISE);
        struct R {
            uint64_t seed, begin, end;
        };
        std::vector<R> handed;  // the model: every reservation handed out
        size_t model_overlaps = 0;
        const char *names[] = {nullptr, "data-parallel-rng", "model-parallel-rng", "expert-parallel-rng"};
        const uint64_t seeds[] = {1234, 1235, 3952, 2258};
        for (int op = 0; op < 300; ++op) {
            const int which = static_cast<int>(rng() % 4);
            if (rng() % 5 == 0) {  // move the state back or forward: reuse becomes possible
                const rngtrk_philox_state st{seeds[which], 4 * (rng() % 64)};
                if (which == 0) rngtrk_tracker_set_default(t.get(), &st);
                else rngtrk_tracker_set_state(t.get(), names[which], &st);
                continue;
            }
            rngtrk_philox_state now;
            if (which == 0) rngtrk_tracker_get_default(t.get(), &now);
            else rngtrk_tracker_get_state(t.get(), names[which], &now);
            const uint64_t n = 1 + rng() % 40, end = now.offset + (n + 3) / 4 * 4;
            bool overlap = false;
            for (const R &r : handed) overlap |= r.seed == now.seed && r.begin < end && now.offset < r.end;
            const rngtrk_status st = draw(t.get(), names[which], n);
            if (overlap && !record) {
                ASSERT_EQ(RNGTRK_E_STREAM_REUSE, st) << "round " << round << " op " << op;
                continue;
            }
            ASSERT_EQ(RNGTRK_OK, st) << "round " << round << " op " << op << ": " << rngtrk_last_error();
            model_overlaps += overlap;
            handed.push_back({now.seed, now.offset, end});
        }
        size_t count = 0;
        rngtrk_tracker_ledger_overlaps(t.get(), nullptr, 0, &count);
        EXPECT_EQ(record ? model_overlaps : 0u, count);
    }
}
