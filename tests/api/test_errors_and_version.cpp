// Status strings, the thread-local last error, the version, and trackers
// used from several threads at once.
#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "support.h"

using namespace rngtrk_test;

namespace {

// Every (name, value) of rngtrk_status, read from the header itself, so a
// status added there without a string, or without a line in the table of
// CodesAreStable, fails these tests.
std::vector<std::pair<std::string, int>> header_statuses() {
    const std::string header = read_text(vector_path("../../c_api/rngtrk.h"));
    std::vector<std::pair<std::string, int>> found;
    const std::regex line(R"((RNGTRK_(?:OK|E_[A-Z_]+)) = (-?[0-9]+),)");
    for (std::sregex_iterator it(header.begin(), header.end(), line), end; it != end; ++it)
        found.emplace_back((*it)[1].str(), std::stoi((*it)[2].str()));
    return found;
}

}  // namespace

TEST(Errors, EveryStatusHasItsOwnString) {
    const auto all = header_statuses();
    ASSERT_GE(all.size(), 15u);
    std::vector<std::string> seen;
    for (const auto &status : all) {
        const char *s = rngtrk_status_string(static_cast<rngtrk_status>(status.second));
        ASSERT_NE(nullptr, s);
        EXPECT_STRNE("unknown status code", s) << status.first;
        for (const std::string &other : seen) EXPECT_NE(other, s) << status.first;
        seen.emplace_back(s);
    }
    EXPECT_STREQ("unknown status code", rngtrk_status_string(static_cast<rngtrk_status>(-999)));
    EXPECT_STREQ("unknown status code", rngtrk_status_string(static_cast<rngtrk_status>(1)));
}

TEST(Errors, CodesAreStable) {
    // Bindings hard-code these values: they must never change, and new ones
    // are only appended (docs/abi.md).  Every status of the header is here.
    const std::map<std::string, int> stable = {
        {"RNGTRK_OK", 0},
        {"RNGTRK_E_INVALID_ARGUMENT", -1},
        {"RNGTRK_E_DUPLICATE_NAME", -2},
        {"RNGTRK_E_DUPLICATE_SEED", -3},
        {"RNGTRK_E_UNKNOWN_NAME", -4},
        {"RNGTRK_E_FORK_ORDER", -5},
        {"RNGTRK_E_BUFFER_TOO_SMALL", -6},
        {"RNGTRK_E_CORRUPT", -7},
        {"RNGTRK_E_UNSUPPORTED_VERSION", -8},
        {"RNGTRK_E_OVERFLOW", -9},
        {"RNGTRK_E_OUT_OF_MEMORY", -10},
        {"RNGTRK_E_UNAVAILABLE", -11},
        {"RNGTRK_E_INTERNAL", -12},
        {"RNGTRK_E_WRONG_RANK", -13},
        {"RNGTRK_E_IO", -14},
        {"RNGTRK_E_STREAM_REUSE", -15},
        {"RNGTRK_E_REPLAY_MISMATCH", -16},
    };
    const auto all = header_statuses();
    EXPECT_EQ(stable.size(), all.size()) << "a status was added to or removed from rngtrk.h";
    for (const auto &status : all) {
        ASSERT_TRUE(stable.count(status.first)) << status.first << " is not in this table";
        EXPECT_EQ(stable.at(status.first), status.second) << status.first;
        EXPECT_EQ(status.second, status_from_name(status.first));
    }
    // Appended only: the codes are 0, -1, -2, ... without a gap.
    for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(-static_cast<int>(i), all[i].second);
}

TEST(Errors, LastErrorIsThreadLocalAndSurvivesSuccess) {
    TrackerPtr t = new_tracker();
    ASSERT_EQ(RNGTRK_E_UNKNOWN_NAME, rngtrk_tracker_fork(t.get(), "main-thread-name"));
    std::string other_thread_message;
    std::thread([&] {
        EXPECT_STREQ("", rngtrk_last_error());  // nothing failed on this thread yet
        TrackerPtr u = new_tracker();
        EXPECT_EQ(RNGTRK_E_UNKNOWN_NAME, rngtrk_tracker_fork(u.get(), "other-thread-name"));
        other_thread_message = rngtrk_last_error();
    }).join();
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "main-thread-name"));
    EXPECT_NE(std::string::npos, other_thread_message.find("other-thread-name"));
    ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 1));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "main-thread-name"));
}

TEST(Errors, LongMessagesAreCutNotOverflowed) {
    TrackerPtr t = new_tracker();
    const std::string name(255, 'q');
    ASSERT_OK(rngtrk_tracker_add(t.get(), name.c_str(), 1));
    ASSERT_OK(rngtrk_tracker_add(t.get(), std::string(255, 'r').c_str(), 2));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), name.c_str()));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), std::string(255, 'r').c_str()));
    EXPECT_EQ(RNGTRK_E_FORK_ORDER, rngtrk_tracker_restore(t.get(), name.c_str()));
    EXPECT_GT(std::strlen(rngtrk_last_error()), 255u);
    EXPECT_LT(std::strlen(rngtrk_last_error()), 512u);
}

TEST(Version, NumberAndStringMatchTheHeader) {
    EXPECT_EQ(static_cast<uint32_t>(RNGTRK_VERSION_NUMBER), rngtrk_version_number());
    EXPECT_EQ(static_cast<uint32_t>(RNGTRK_VERSION_MAJOR * 10000 + RNGTRK_VERSION_MINOR * 100 +
                                    RNGTRK_VERSION_PATCH),
              rngtrk_version_number());
    const std::string expected = std::to_string(RNGTRK_VERSION_MAJOR) + "." +
                                 std::to_string(RNGTRK_VERSION_MINOR) + "." +
                                 std::to_string(RNGTRK_VERSION_PATCH);
    EXPECT_EQ(expected, rngtrk_version_string());
}

TEST(Threads, DistinctTrackersOnDistinctThreadsAgree) {
    // Each thread runs the same script on its own tracker; all must end with
    // the same checkpoint bytes and draw the same numbers.
    constexpr int kThreads = 8;
    std::vector<std::vector<uint8_t>> results(kThreads);
    std::vector<std::vector<uint32_t>> draws(kThreads);
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; ++i) {
        threads.emplace_back([i, &results, &draws] {
            TrackerPtr t = new_tracker();
            EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_add(t.get(), "a", 11));
            for (int step = 0; step < 2000; ++step) {
                rngtrk_philox_state s{};
                EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_fork(t.get(), "a"));
                EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_advance(t.get(), 7, &s));
                uint32_t w[7];
                EXPECT_EQ(RNGTRK_OK, rngtrk_random_u32(&s, 0, 7, w));
                draws[i].insert(draws[i].end(), w, w + 7);
                EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_restore(t.get(), "a"));
            }
            results[i] = save(t.get());
        });
    }
    for (std::thread &th : threads) th.join();
    for (int i = 1; i < kThreads; ++i) {
        EXPECT_EQ(results[0], results[i]);
        EXPECT_EQ(draws[0], draws[i]);
    }
}
