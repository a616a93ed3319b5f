// SPDX-License-Identifier: Apache-2.0
// The bad-input matrix of docs/errors.md through the C API: every row
// returns its documented status, says why, and changes nothing.
#include "support.h"

using namespace rngtrk_test;

TEST(BadInputs, NullHandlesAndPointers) {
    rngtrk_philox_state s{1, 0};
    size_t n;
    const char *name;
    uint8_t buf[64];
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_new(nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_add(nullptr, "a", 1));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_fork(nullptr, "a"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_restore(nullptr, "a"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_get_state(nullptr, "a", &s));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_count(nullptr, &n));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_name_at(nullptr, 0, &name));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_advance(nullptr, 4, &s));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_save(nullptr, buf, sizeof buf, &n));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_load(nullptr, buf, sizeof buf));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_save_file(nullptr, "/tmp/x"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_digest(nullptr, nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_state_to_bytes(nullptr, buf));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_random_u32(nullptr, 0, 1, nullptr));
    rngtrk_tracker_free(nullptr);  // a no-op
    TrackerPtr t = new_tracker();
    const Snapshot before = snapshot(t.get());
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_add(t.get(), nullptr, 1));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_get_state(t.get(), "a", nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_save(t.get(), nullptr, 0, nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_load(t.get(), nullptr, 10));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_load_file(t.get(), nullptr, 0));
    EXPECT_TRUE(before == snapshot(t.get()));
}

TEST(BadInputs, NamesEmptyLongAndInvalidUtf8) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    const Snapshot before = snapshot(t.get());
    const std::string long_name(256, 'x');
    for (const char *bad : {"", long_name.c_str(), "\xff", "\xc3\x28", "\xed\xa0\x80" /* surrogate */,
                            "\xf4\x90\x80\x80" /* above U+10FFFF */, "\xc0\xaf" /* overlong */}) {
        EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_add(t.get(), bad, 2));
        EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_fork(t.get(), bad));
        EXPECT_TRUE(before == snapshot(t.get()));
    }
}

TEST(BadInputs, SizesOffsetsAndBuffers) {
    const rngtrk_philox_state s{1, 0}, near_end{1, ~uint64_t{0} - 3};
    uint32_t one;
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_random_u32(&s, 0, uint64_t{1} << 62, &one));  // bytes past size_t
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_random_u32(&s, ~uint64_t{0}, 2, &one));
    ASSERT_OK(rngtrk_random_u32(&near_end, 0, 1, &one));  // the last offset is usable
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_set_default(t.get(), &near_end));
    const Snapshot before = snapshot(t.get());
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_tracker_advance(t.get(), 1, nullptr));
    uint8_t small[10];
    size_t len = 0;
    EXPECT_STATUS(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_tracker_save(t.get(), small, sizeof small, &len));
    EXPECT_EQ(44u, len);
    EXPECT_TRUE(before == snapshot(t.get()));
}

TEST(BadInputs, ForkMisuse) {
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    const std::vector<uint8_t> bytes = save(t.get());
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    Snapshot before = snapshot(t.get());
    EXPECT_STATUS(RNGTRK_E_FORK_ORDER, rngtrk_tracker_load(t.get(), bytes.data(), bytes.size()));
    EXPECT_TRUE(before == snapshot(t.get()));
    // Forking the open name again is allowed (one stream); each fork needs its restore.
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "a"));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    EXPECT_TRUE(before == snapshot(t.get()));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "a"));
    before = snapshot(t.get());
    EXPECT_STATUS(RNGTRK_E_FORK_ORDER, rngtrk_tracker_restore(t.get(), "a"));  // twice
    EXPECT_TRUE(before == snapshot(t.get()));
}
