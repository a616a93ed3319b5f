// SPDX-License-Identifier: Apache-2.0
// Threads: many threads each driving their own tracker while others
// generate concurrently and read a shared tracker (make test-tsan runs this
// under ThreadSanitizer).
#include <atomic>
#include <thread>
#include <vector>

#include "support.h"

using namespace rngtrk_test;

TEST(Stress, ThreadsWithTheirOwnTrackersAndConcurrentGeneration) {
    TrackerPtr shared = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(shared.get(), "model-parallel-rng", 7));
    const std::vector<uint8_t> shared_bytes = save(shared.get());
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int id = 0; id < 8; ++id) {
        threads.emplace_back([&, id] {
            TrackerPtr t = new_tracker();
            rngtrk_sample_spec s;
            RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32);
            s.threads = id % 2 ? 2 : 1;
            std::vector<float> out(1 << 12);
            for (int i = 0; i < 300; ++i) {
                const std::string name = "s" + std::to_string(i);
                if (rngtrk_tracker_add(t.get(), name.c_str(), uint64_t(id) * 1000 + i) != RNGTRK_OK) ++failures;
                if (rngtrk_tracker_fork(t.get(), name.c_str()) != RNGTRK_OK) ++failures;
                if (rngtrk_tracker_sample(t.get(), &s, out.size(), out.data(), out.size() * 4, nullptr) != RNGTRK_OK) ++failures;
                if (rngtrk_tracker_restore(t.get(), name.c_str()) != RNGTRK_OK) ++failures;
                // Failures set a thread-local message; other threads' stay theirs.
                if (rngtrk_tracker_add(t.get(), name.c_str(), 1) != RNGTRK_E_DUPLICATE_NAME) ++failures;
                if (std::string(rngtrk_last_error()).find(name) == std::string::npos) ++failures;
                // Reads of the shared tracker run concurrently with each other.
                if (save(shared.get()) != shared_bytes) ++failures;
                const rngtrk_philox_state st{uint64_t(i), 0};
                if (rngtrk_sample(&st, &s, 0, out.size(), out.data(), out.size() * 4) != RNGTRK_OK) ++failures;
            }
            const std::vector<uint8_t> bytes = save(t.get());
            TrackerPtr u = new_tracker();
            if (rngtrk_tracker_load(u.get(), bytes.data(), bytes.size()) != RNGTRK_OK || save(u.get()) != bytes) ++failures;
        });
    }
    for (std::thread &t : threads) t.join();
    EXPECT_EQ(0, failures.load());
}
