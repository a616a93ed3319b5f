// SPDX-License-Identifier: Apache-2.0
// Tracker semantics through the C API.  Every failing call is checked to
// leave the tracker exactly as it was (Snapshot covers checkpoint bytes,
// active state and fork depth).
#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "support.h"

using namespace rngtrk_test;

namespace {

constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();

rngtrk_philox_state get(const rngtrk_tracker *t, const char *name) {
    rngtrk_philox_state s{~0ull, ~0ull};
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_get_state(t, name, &s)) << rngtrk_last_error();
    return s;
}
rngtrk_philox_state active(const rngtrk_tracker *t) {
    rngtrk_philox_state s{~0ull, ~0ull};
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_active_state(t, &s));
    return s;
}
rngtrk_philox_state default_of(const rngtrk_tracker *t) {
    rngtrk_philox_state s{~0ull, ~0ull};
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_get_default(t, &s));
    return s;
}
bool same(const rngtrk_philox_state &a, const rngtrk_philox_state &b) {
    return a.seed == b.seed && a.offset == b.offset;
}
#define EXPECT_STATE(seed_, offset_, state_)      \
    do {                                          \
        const rngtrk_philox_state s_ = (state_);  \
        EXPECT_EQ(uint64_t{seed_}, s_.seed);      \
        EXPECT_EQ(uint64_t{offset_}, s_.offset);  \
    } while (0)

// Runs `call`, expects `status`, and expects no observable change.
#define EXPECT_FAILS_UNCHANGED(status, t, call)    \
    do {                                           \
        const Snapshot before_ = snapshot(t);      \
        EXPECT_STATUS((status), (call));           \
        EXPECT_TRUE(before_ == snapshot(t)) << "a failed call changed the tracker"; \
    } while (0)

std::vector<std::string> names(const rngtrk_tracker *t) {
    size_t n = 0;
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_count(t, &n));
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) {
        const char *name = nullptr;
        EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_name_at(t, i, &name));
        out.emplace_back(name);
    }
    return out;
}

}  // namespace

TEST(Tracker, NewTrackerIsEmptyWithDefaultZero) {
    TrackerPtr t = new_tracker();
    EXPECT_TRUE(names(t.get()).empty());
    EXPECT_STATE(0, 0, default_of(t.get()));
    EXPECT_STATE(0, 0, active(t.get()));
    size_t depth = 99;
    ASSERT_OK(rngtrk_tracker_fork_depth(t.get(), &depth));
    EXPECT_EQ(0u, depth);
}

TEST(Tracker, AddRegistersSeedAtOffsetZeroInInsertionOrder) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "model-parallel-rng", 3955));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "data-parallel-rng", 1234));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "expert-parallel-rng", 2358));
    EXPECT_EQ((std::vector<std::string>{"model-parallel-rng", "data-parallel-rng",
                                        "expert-parallel-rng"}),
              names(t.get()));
    EXPECT_STATE(3955, 0, get(t.get(), "model-parallel-rng"));
    EXPECT_STATE(1234, 0, get(t.get(), "data-parallel-rng"));
}

TEST(Tracker, DuplicateNameIsRefusedAndBurnsNoSeed) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_DUPLICATE_NAME, t.get(), rngtrk_tracker_add(t.get(), "a", 2));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "\"a\""));
    // TransformerEngine records seed 2 before noticing the duplicate name;
    // here the failed add left it free.
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_add(t.get(), "b", 2));
}

TEST(Tracker, DuplicateSeedIsRefusedAndBurnsNoName) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_DUPLICATE_SEED, t.get(), rngtrk_tracker_add(t.get(), "b", 1));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "seed 1"));
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_add(t.get(), "b", 2));
}

TEST(Tracker, DefaultSeedMayEqualANamedSeed) {
    // Megatron seeds "data-parallel-rng" with the default state's seed.
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 1234));
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_add(t.get(), "data-parallel-rng", 1234));
}

TEST(Tracker, NameRules) {
    TrackerPtr t = new_tracker();
    const std::string longest(255, 'n'), too_long(256, 'n'), much_too_long(100000, 'n');
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_add(t.get(), longest.c_str(), 1));
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_add(t.get(), "dropout-\xC3\xBC-\xE6\x97\xA5-\xF0\x9F\x8E\xB2", 2));
    const char *bad[] = {
        "",                  // empty
        too_long.c_str(),    // 256 bytes
        much_too_long.c_str(),
        "\xC3\x28",          // bad continuation
        "\xC0\xAF",          // overlong '/'
        "\xE0\x80\xAF",      // overlong, 3 bytes
        "\xED\xA0\x80",      // UTF-16 surrogate
        "\xF4\x90\x80\x80",  // above U+10FFFF
        "\xF8\x88\x80\x80\x80",
        "abc\xE6\x97",       // truncated sequence
        "\x80",              // lone continuation byte
    };
    for (const char *name : bad) {
        EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_add(t.get(), name, 77));
        EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "name")) << rngtrk_last_error();
    }
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_add(t.get(), nullptr, 77));
    EXPECT_EQ(2u, names(t.get()).size());
}

TEST(Tracker, ForkActivatesAndRestoreKeepsTheAdvancedState) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 10));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "mp", 20));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "mp"));
    EXPECT_STATE(20, 0, active(t.get()));
    rngtrk_philox_state before{};
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 100, &before));
    EXPECT_STATE(20, 0, before);
    EXPECT_STATE(20, 100, active(t.get()));
    EXPECT_STATE(20, 100, get(t.get(), "mp"));  // live value while forked
    EXPECT_STATE(10, 0, default_of(t.get()));   // the default did not move
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "mp"));
    EXPECT_STATE(10, 0, active(t.get()));
    EXPECT_STATE(20, 100, get(t.get(), "mp"));
    // A second fork continues where the first stopped.
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "mp"));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 4, &before));
    EXPECT_STATE(20, 100, before);
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "mp"));
}

TEST(Tracker, ForksNestAndRestoreInReverseOrder) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "b", 2));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 4, nullptr));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "b"));
    EXPECT_STATE(2, 0, active(t.get()));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 8, nullptr));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_FORK_ORDER, t.get(), rngtrk_tracker_restore(t.get(), "a"));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "\"b\""));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "b"));
    EXPECT_STATE(1, 4, active(t.get()));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    EXPECT_STATE(0, 0, active(t.get()));
    EXPECT_STATE(1, 4, get(t.get(), "a"));
    EXPECT_STATE(2, 8, get(t.get(), "b"));
}

// Megatron-LM's double fork: fork a, draw, fork b, draw, fork a (a name
// already open), draw, restore a, draw under b, restore b, draw under a,
// restore a.  Each draw is advance(8) and the words of the state it returns;
// together they must be one uninterrupted stream per name.
TEST(Tracker, ForkingAnOpenNameContinuesItsOneStream) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 11));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "b", 22));
    // The ledger refuses any range of a seed handed out twice.
    ASSERT_OK(rngtrk_tracker_set_ledger(t.get(), RNGTRK_LEDGER_RAISE, 0));
    std::map<std::string, std::vector<uint32_t>> drawn;
    const auto draw = [&](const char *expected_active) {
        rngtrk_philox_state before;
        ASSERT_OK(rngtrk_tracker_advance(t.get(), 8, &before));
        EXPECT_EQ(get(t.get(), expected_active).seed, before.seed);
        uint32_t words[8];
        ASSERT_OK(rngtrk_random_u32(&before, 0, 8, words));
        drawn[expected_active].insert(drawn[expected_active].end(), words, words + 8);
    };
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    draw("a");
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "b"));
    draw("b");
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));  // "a" is open already
    size_t depth = 0;
    ASSERT_OK(rngtrk_tracker_fork_depth(t.get(), &depth));
    EXPECT_EQ(3u, depth);
    EXPECT_STATE(11, 8, active(t.get()));  // where the outer fork of "a" left it
    draw("a");
    // restore must still name the innermost fork.
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_FORK_ORDER, t.get(), rngtrk_tracker_restore(t.get(), "b"));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    EXPECT_STATE(22, 8, active(t.get()));
    draw("b");
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "b"));
    EXPECT_STATE(11, 16, active(t.get()));  // the outer "a" goes on where the inner one stopped
    draw("a");
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    EXPECT_STATE(0, 0, active(t.get()));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_FORK_ORDER, t.get(), rngtrk_tracker_restore(t.get(), "a"));
    // One uninterrupted stream per name: a drew words 0..23 of (11, 0), b 0..15 of (22, 0).
    std::vector<uint32_t> a(24), b(16);
    const rngtrk_philox_state a0{11, 0}, b0{22, 0};
    ASSERT_OK(rngtrk_random_u32(&a0, 0, a.size(), a.data()));
    ASSERT_OK(rngtrk_random_u32(&b0, 0, b.size(), b.data()));
    EXPECT_EQ(a, drawn["a"]);
    EXPECT_EQ(b, drawn["b"]);
    EXPECT_STATE(11, 24, get(t.get(), "a"));
    EXPECT_STATE(22, 16, get(t.get(), "b"));
    size_t overlaps = 1;
    ASSERT_OK(rngtrk_tracker_ledger_overlaps(t.get(), nullptr, 0, &overlaps));
    EXPECT_EQ(0u, overlaps);
}

TEST(Tracker, ForkingTheInnermostNameAgainNestsToAnyDepth) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    for (int i = 0; i < 5; ++i) {
        ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
        ASSERT_OK(rngtrk_tracker_advance(t.get(), 4, nullptr));
    }
    for (int i = 0; i < 5; ++i) {
        EXPECT_STATE(1, 20, active(t.get()));
        ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    }
    EXPECT_STATE(0, 0, active(t.get()));
    EXPECT_STATE(1, 20, get(t.get(), "a"));
}

TEST(Tracker, ForkAndRestoreErrors) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_UNKNOWN_NAME, t.get(), rngtrk_tracker_fork(t.get(), "zz"));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "\"zz\""));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_FORK_ORDER, t.get(), rngtrk_tracker_restore(t.get(), "a"));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_UNKNOWN_NAME, t.get(), rngtrk_tracker_restore(t.get(), "zz"));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_fork(t.get(), nullptr));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_restore(t.get(), ""));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    // Restoring twice: the second has no fork to close.
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_FORK_ORDER, t.get(), rngtrk_tracker_restore(t.get(), "a"));
}

TEST(Tracker, AdvanceRoundsUpToWholeBlocks) {
    TrackerPtr t = new_tracker();
    const struct {
        uint64_t increment, expected_offset;
    } steps[] = {{0, 0}, {1, 4}, {3, 8}, {4, 12}, {5, 20}, {8, 28}, {1000001, 1000032}};
    for (const auto &step : steps) {
        rngtrk_philox_state before{};
        const rngtrk_philox_state expected_before = active(t.get());
        ASSERT_OK(rngtrk_tracker_advance(t.get(), step.increment, &before));
        EXPECT_TRUE(same(expected_before, before));
        EXPECT_EQ(step.expected_offset, active(t.get()).offset) << "increment " << step.increment;
    }
}

TEST(Tracker, AdvanceOverflowChangesNothing) {
    TrackerPtr t = new_tracker();
    const rngtrk_philox_state near_end{7, kMax64 - 3};  // the largest aligned offset
    ASSERT_OK(rngtrk_tracker_set_default(t.get(), &near_end));
    rngtrk_philox_state before{1, 1};
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_OVERFLOW, t.get(), rngtrk_tracker_advance(t.get(), 1, &before));
    EXPECT_STATE(1, 1, before);  // out_before is not written on failure
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_OVERFLOW, t.get(), rngtrk_tracker_advance(t.get(), kMax64, nullptr));
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_advance(t.get(), 0, nullptr));
    // From offset 0, an increment whose rounding passes 2^64 - 1.
    ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 1));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_OVERFLOW, t.get(), rngtrk_tracker_advance(t.get(), kMax64 - 1, nullptr));
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_advance(t.get(), kMax64 - 3, nullptr));
    EXPECT_STATE(1, kMax64 - 3, active(t.get()));
}

TEST(Tracker, AdvanceInsideForkMovesOnlyTheForkedState) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    const rngtrk_philox_state near_end{1, kMax64 - 3};
    ASSERT_OK(rngtrk_tracker_set_state(t.get(), "a", &near_end));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_OVERFLOW, t.get(), rngtrk_tracker_advance(t.get(), 4, nullptr));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 4, nullptr));
    EXPECT_STATE(0, 4, default_of(t.get()));
}

TEST(Tracker, SetStateRules) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "b", 2));
    const rngtrk_philox_state moved{10, 40}, misaligned{10, 42}, taken{2, 0}, itself{1, 8};
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_set_state(t.get(), "a", &itself));  // own seed is fine
    EXPECT_STATE(1, 8, get(t.get(), "a"));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_DUPLICATE_SEED, t.get(), rngtrk_tracker_set_state(t.get(), "a", &taken));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_set_state(t.get(), "a", &misaligned));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_UNKNOWN_NAME, t.get(), rngtrk_tracker_set_state(t.get(), "zz", &moved));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_set_state(t.get(), "a", nullptr));
    ASSERT_OK(rngtrk_tracker_set_state(t.get(), "a", &moved));
    EXPECT_STATE(10, 40, get(t.get(), "a"));
    // Seed 1 is free again, seed 10 is taken.
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_add(t.get(), "c", 1));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_DUPLICATE_SEED, t.get(), rngtrk_tracker_add(t.get(), "d", 10));
}

TEST(Tracker, SetStateOnTheForkedStateChangesTheActiveState) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    const rngtrk_philox_state s{5, 16};
    ASSERT_OK(rngtrk_tracker_set_state(t.get(), "a", &s));
    EXPECT_STATE(5, 16, active(t.get()));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    EXPECT_STATE(5, 16, get(t.get(), "a"));
}

TEST(Tracker, SetStatesReplacesAllNamedStatesAtOnce) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 77));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "old", 1));
    const char *new_names[] = {"x", "y"};
    const rngtrk_philox_state new_states[] = {{1, 8}, {2, 4}};
    ASSERT_OK(rngtrk_tracker_set_states(t.get(), new_names, new_states, 2));
    EXPECT_EQ((std::vector<std::string>{"x", "y"}), names(t.get()));
    EXPECT_STATE(1, 8, get(t.get(), "x"));
    EXPECT_STATE(77, 0, default_of(t.get()));  // the default is kept
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_UNKNOWN_NAME, t.get(), rngtrk_tracker_fork(t.get(), "old"));
}

TEST(Tracker, SetStatesIsAtomic) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "keep", 9));
    const char *dup_names[] = {"x", "x"};
    const char *bad_names[] = {"x", "\xC0\xAF"};
    const char *ok_names[] = {"x", "y"};
    const char *null_name[] = {"x", nullptr};
    const rngtrk_philox_state ok[] = {{1, 0}, {2, 0}}, dup_seed[] = {{1, 0}, {1, 4}},
                              misaligned[] = {{1, 0}, {2, 2}};
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_DUPLICATE_NAME, t.get(), rngtrk_tracker_set_states(t.get(), dup_names, ok, 2));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_DUPLICATE_SEED, t.get(), rngtrk_tracker_set_states(t.get(), ok_names, dup_seed, 2));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_set_states(t.get(), ok_names, misaligned, 2));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_set_states(t.get(), bad_names, ok, 2));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_set_states(t.get(), null_name, ok, 2));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "names[1]"));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_set_states(t.get(), nullptr, ok, 2));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_set_states(t.get(), ok_names, nullptr, 2));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "keep"));
    // Inside a fork: refused only when it would drop the open fork's state.
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_FORK_ORDER, t.get(), rngtrk_tracker_set_states(t.get(), ok_names, ok, 2));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "\"keep\""));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "keep"));
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_set_states(t.get(), nullptr, nullptr, 0));
    EXPECT_TRUE(names(t.get()).empty());
}

TEST(Tracker, ResetDropsEverything) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 5));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 4, nullptr));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_FORK_ORDER, t.get(), rngtrk_tracker_reset(t.get()));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    ASSERT_OK(rngtrk_tracker_reset(t.get()));
    EXPECT_TRUE(names(t.get()).empty());
    EXPECT_STATE(0, 0, default_of(t.get()));
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_add(t.get(), "a", 1));  // name and seed are free again
}

TEST(Tracker, LoadIsRefusedInsideAFork) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    const std::vector<uint8_t> checkpoint = save(t.get());
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_FORK_ORDER, t.get(),
                           rngtrk_tracker_load(t.get(), checkpoint.data(), checkpoint.size()));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
}

// Megatron-LM allows add and set_states while a fork is open; so does
// rngtrk, and the open forks keep holding their names.
TEST(Tracker, AddAndSetStatesInsideForksKeepTheOpenForks) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "b", 2));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "b"));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "c", 3));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 4, nullptr));
    EXPECT_STATE(1, 4, get(t.get(), "a"));
    // A new order and new values; "a" and "b" are still open.
    const char *reordered[] = {"c", "a", "b"};
    const rngtrk_philox_state values[] = {{3, 0}, {10, 8}, {20, 0}};
    ASSERT_OK(rngtrk_tracker_set_states(t.get(), reordered, values, 3));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 4, nullptr));  // draws from "a", as it holds now
    EXPECT_STATE(10, 12, get(t.get(), "a"));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 8, nullptr));
    EXPECT_STATE(20, 8, get(t.get(), "b"));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "b"));
    size_t depth = 1;
    ASSERT_OK(rngtrk_tracker_fork_depth(t.get(), &depth));
    EXPECT_EQ(0u, depth);
    EXPECT_EQ((std::vector<std::string>{"c", "a", "b"}), names(t.get()));
}

TEST(Tracker, ManualSeedSetsTheDefaultEvenInsideAFork) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 12, nullptr));
    ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 42));
    EXPECT_STATE(42, 0, default_of(t.get()));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 43));
    EXPECT_STATE(1, 0, active(t.get()));  // the fork stays active
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    EXPECT_STATE(43, 0, active(t.get()));
}

TEST(Tracker, SetDefaultAcceptsATorchState) {
    TrackerPtr t = new_tracker();
    // 16 bytes as torch.cuda.get_rng_state() returns them: seed 1234, offset 8.
    const uint8_t torch_bytes[16] = {0xD2, 0x04, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0};
    rngtrk_philox_state s{};
    ASSERT_OK(rngtrk_state_from_bytes(torch_bytes, &s));
    ASSERT_OK(rngtrk_tracker_set_default(t.get(), &s));
    EXPECT_STATE(1234, 8, active(t.get()));
    const rngtrk_philox_state misaligned{1, 2};
    EXPECT_FAILS_UNCHANGED(RNGTRK_E_INVALID_ARGUMENT, t.get(), rngtrk_tracker_set_default(t.get(), &misaligned));
}

TEST(Tracker, NameAtAndCountErrors) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    const char *name = "untouched";
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_name_at(t.get(), 1, &name));
    EXPECT_STREQ("untouched", name);
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_name_at(t.get(), 0, nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_count(t.get(), nullptr));
    rngtrk_philox_state s{};
    EXPECT_STATUS(RNGTRK_E_UNKNOWN_NAME, rngtrk_tracker_get_state(t.get(), "b", &s));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_get_state(t.get(), "a", nullptr));
}

TEST(Tracker, NullTrackerIsAnInvalidArgumentEverywhere) {
    rngtrk_philox_state s{};
    size_t n = 0;
    const char *name = nullptr;
    uint8_t buf[64];
    const char *names_[] = {"a"};
    const rngtrk_philox_state states[] = {{1, 0}};
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_new(nullptr));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "out"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_add(nullptr, "a", 1));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "tracker"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_fork(nullptr, "a"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_restore(nullptr, "a"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_get_state(nullptr, "a", &s));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_set_state(nullptr, "a", &s));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_set_states(nullptr, names_, states, 1));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_count(nullptr, &n));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_name_at(nullptr, 0, &name));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_fork_depth(nullptr, &n));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_reset(nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_manual_seed(nullptr, 1));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_get_default(nullptr, &s));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_set_default(nullptr, &s));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_active_state(nullptr, &s));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_advance(nullptr, 4, &s));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_save(nullptr, buf, sizeof buf, &n));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_load(nullptr, buf, sizeof buf));
    rngtrk_tracker_free(nullptr);  // a no-op
}

TEST(Tracker, ReplayFromASavedStateDrawsTheSameNumbers) {
    // The product in one test: draws made inside a fork can be re-derived
    // later from the state the tracker handed out.
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "model-parallel-rng", 3955));
    std::vector<rngtrk_philox_state> handed_out;
    std::vector<std::vector<float>> drawn;
    for (int step = 0; step < 5; ++step) {
        ASSERT_OK(rngtrk_tracker_fork(t.get(), "model-parallel-rng"));
        rngtrk_philox_state s{};
        const uint64_t n = 10 + step;
        ASSERT_OK(rngtrk_tracker_advance(t.get(), n, &s));
        std::vector<float> mask(n);
        ASSERT_OK(rngtrk_uniform_f32(&s, 0, n, mask.data()));
        ASSERT_OK(rngtrk_tracker_restore(t.get(), "model-parallel-rng"));
        handed_out.push_back(s);
        drawn.push_back(mask);
    }
    for (size_t i = 1; i < handed_out.size(); ++i) EXPECT_GT(handed_out[i].offset, handed_out[i - 1].offset);
    for (size_t i = 0; i < handed_out.size(); ++i) {
        std::vector<float> again(drawn[i].size());
        ASSERT_OK(rngtrk_uniform_f32(&handed_out[i], 0, again.size(), again.data()));
        EXPECT_EQ(drawn[i], again);
    }
}
