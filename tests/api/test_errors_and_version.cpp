// SPDX-License-Identifier: Apache-2.0
// Status strings, the thread-local last error, the version, and trackers
// used from several threads at once.
#include <algorithm>
#include <cctype>
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

// True when `s` is well-formed UTF-8, decoded here from RFC 3629's table
// (independently of the library's own rule).
bool well_formed_utf8(const std::string &s) {
    size_t i = 0;
    while (i < s.size()) {
        const auto b = static_cast<unsigned char>(s[i]);
        size_t len;
        uint32_t cp;
        if (b < 0x80) { len = 1; cp = b; }
        else if ((b & 0xE0) == 0xC0) { len = 2; cp = b & 0x1Fu; }
        else if ((b & 0xF0) == 0xE0) { len = 3; cp = b & 0x0Fu; }
        else if ((b & 0xF8) == 0xF0) { len = 4; cp = b & 0x07u; }
        else return false;
        if (i + len > s.size()) return false;
        for (size_t j = 1; j < len; ++j) {
            const auto c = static_cast<unsigned char>(s[i + j]);
            if ((c & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (c & 0x3Fu);
        }
        const uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
        i += len;
    }
    return true;
}

// Every backslash in `s` starts a whole "\xNN" escape.
bool escapes_whole(const std::string &s) {
    for (size_t i = s.find('\\'); i != std::string::npos; i = s.find('\\', i + 1))
        if (i + 4 > s.size() || s[i + 1] != 'x' || !std::isxdigit(static_cast<unsigned char>(s[i + 2])) ||
            !std::isxdigit(static_cast<unsigned char>(s[i + 3])))
            return false;
    return true;
}

// The tracker's own copy of its last failure (rngtrk_tracker_last_error).
std::string tracker_message(const rngtrk_tracker *t) {
    char text[RNGTRK_ERROR_MESSAGE_CAPACITY];
    size_t len = 0;
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_last_error(t, text, sizeof text, &len));
    EXPECT_EQ(std::strlen(text), len);
    return text;
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

TEST(Errors, MessagesAreCutBetweenCharactersNeverInsideOne) {
    // Two names of 255 bytes of multi-byte characters in one message: the
    // restore of a fork that is not the innermost names both, and is longer
    // than the buffer.  Shifting the names by 1 to 4 ASCII bytes moves the
    // cut over every byte of a character.
    const std::string chars[] = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x8E\xB2"};  // é, €, 🎲
    for (const std::string &c : chars) {
        for (size_t shift = 0; shift < 4; ++shift) {
            std::string a(shift + 1, 'a'), b(shift + 1, 'b');
            while (a.size() + c.size() <= RNGTRK_MAX_NAME_BYTES) a += c;
            while (b.size() + c.size() <= RNGTRK_MAX_NAME_BYTES) b += c;
            TrackerPtr t = new_tracker();
            ASSERT_OK(rngtrk_tracker_add(t.get(), a.c_str(), 1));
            ASSERT_OK(rngtrk_tracker_add(t.get(), b.c_str(), 2));
            ASSERT_OK(rngtrk_tracker_fork(t.get(), a.c_str()));
            ASSERT_OK(rngtrk_tracker_fork(t.get(), b.c_str()));
            ASSERT_EQ(RNGTRK_E_FORK_ORDER, rngtrk_tracker_restore(t.get(), a.c_str()));
            const std::string m = rngtrk_last_error();
            EXPECT_TRUE(well_formed_utf8(m)) << c.size() << "-byte characters, shift " << shift;
            EXPECT_LE(m.size(), static_cast<size_t>(RNGTRK_ERROR_MESSAGE_CAPACITY - 1));
            EXPECT_GT(m.size(), static_cast<size_t>(RNGTRK_ERROR_MESSAGE_CAPACITY - 8));  // cut late, not early
            EXPECT_EQ("...", m.substr(m.size() - 3)) << "a cut message says so";
            EXPECT_EQ(0u, m.find("restore(\"" + a + "\")")) << "the text before the cut is kept as it was";
            EXPECT_EQ(m, tracker_message(t.get()));
        }
    }
}

TEST(Errors, BytesThatAreNotUtf8AreEscapedInMessages) {
    // File paths are bytes: a path that is not UTF-8 is shown with its stray
    // bytes as \xNN, its well-formed characters as they are.
    TrackerPtr t = new_tracker();
    const std::string path = "/nonexistent-rngtrk-\xFF\xFE-\xC3\xA9-\xE2\x82/ckpt.rtck";
    EXPECT_STATUS(RNGTRK_E_IO, rngtrk_tracker_save_file(t.get(), path.c_str()));
    std::string m = rngtrk_last_error();
    EXPECT_TRUE(well_formed_utf8(m)) << m;
    EXPECT_NE(std::string::npos, m.find("/nonexistent-rngtrk-\\xff\\xfe-\xC3\xA9-\\xe2\\x82/ckpt.rtck")) << m;
    EXPECT_EQ(m, tracker_message(t.get()));
    EXPECT_STATUS(RNGTRK_E_IO, rngtrk_tracker_load_file(t.get(), path.c_str(), 0));
    m = rngtrk_last_error();
    EXPECT_TRUE(well_formed_utf8(m)) << m;
    EXPECT_NE(std::string::npos, m.find("\\xff\\xfe")) << m;
    char json[64];
    size_t len = 0;
    EXPECT_STATUS(RNGTRK_E_IO, rngtrk_checkpoint_file_json(path.c_str(), json, sizeof json, &len));
    EXPECT_TRUE(well_formed_utf8(rngtrk_last_error())) << rngtrk_last_error();

    // A path of 300 stray bytes: 1200 bytes of escapes, cut between two.
    const std::string long_path = "/nonexistent-rngtrk/" + std::string(300, '\xFF');
    EXPECT_STATUS(RNGTRK_E_IO, rngtrk_tracker_save_file(t.get(), long_path.c_str()));
    m = rngtrk_last_error();
    EXPECT_TRUE(well_formed_utf8(m)) << m;
    EXPECT_LE(m.size(), static_cast<size_t>(RNGTRK_ERROR_MESSAGE_CAPACITY - 1));
    EXPECT_EQ("...", m.substr(m.size() - 3));
    EXPECT_TRUE(escapes_whole(m)) << m;
}

TEST(Errors, TheLedgerPositionAndPrefixReplayKeepTheirFailureInTheTracker) {
    // Every entry point given a tracker records its failure there, the
    // ledger's position and prefix replay as well as the older calls.
    TrackerPtr t = new_tracker();
    uint64_t position = 0;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_ledger_position(t.get(), &position));
    EXPECT_EQ(std::string(rngtrk_last_error()), tracker_message(t.get()));
    EXPECT_NE(std::string::npos, tracker_message(t.get()).find("no position"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_replay_prefix_begin(t.get(), 0));
    EXPECT_EQ(std::string(rngtrk_last_error()), tracker_message(t.get()));
    EXPECT_NE(std::string::npos, tracker_message(t.get()).find("nothing to replay"));
}

TEST(Errors, TrackerMessageReachesOtherThreads) {
    // FFIs that run calls on pooled threads cannot read the failing
    // thread's message; the tracker keeps a copy for any thread.
    TrackerPtr t = new_tracker();
    TrackerPtr other = new_tracker();
    EXPECT_EQ("", tracker_message(t.get()));
    std::string failed_there;
    std::thread([&] {
        EXPECT_EQ(RNGTRK_E_UNKNOWN_NAME, rngtrk_tracker_fork(t.get(), "pooled-thread-name"));
        failed_there = rngtrk_last_error();
    }).join();
    EXPECT_NE(std::string::npos, failed_there.find("pooled-thread-name"));
    EXPECT_EQ(failed_there, tracker_message(t.get()));
    // Calls on a const tracker record too; success keeps the message;
    // another tracker's failure, and a failure given no tracker, do not touch it.
    std::thread([&] {
        rngtrk_philox_state s;
        EXPECT_EQ(RNGTRK_E_UNKNOWN_NAME, rngtrk_tracker_get_state(t.get(), "const-call-name", &s));
        EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_add(t.get(), "fine", 5));
        EXPECT_EQ(RNGTRK_E_UNKNOWN_NAME, rngtrk_tracker_fork(other.get(), "other-tracker-name"));
        EXPECT_EQ(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_fork(nullptr, "no-tracker"));
    }).join();
    const std::string m = tracker_message(t.get());
    EXPECT_NE(std::string::npos, m.find("const-call-name")) << m;
    EXPECT_NE(std::string::npos, tracker_message(other.get()).find("other-tracker-name"));

    // The buffer convention: a size query, a buffer one byte short, NULLs.
    size_t len = 0;
    ASSERT_OK(rngtrk_tracker_last_error(t.get(), nullptr, 0, &len));
    EXPECT_EQ(m.size(), len);
    std::vector<char> small(m.size(), '#');
    len = 0;
    EXPECT_STATUS(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_tracker_last_error(t.get(), small.data(), small.size(), &len));
    EXPECT_EQ(m.size(), len);
    EXPECT_EQ(std::string(m.size(), '#'), std::string(small.begin(), small.end())) << "nothing written";
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_last_error(t.get(), nullptr, 8, &len));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_last_error(t.get(), small.data(), small.size(), nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_last_error(nullptr, small.data(), small.size(), &len));
    EXPECT_EQ(m, tracker_message(t.get())) << "reading the message does not replace it, even when it fails";
}

TEST(Errors, TrackerMessageIsNeverTorn) {
    // Threads failing on one tracker (const calls may run at once) while
    // another reads: every read is one whole message (ThreadSanitizer runs this).
    TrackerPtr t = new_tracker();
    std::vector<std::string> names;
    for (int i = 0; i < 4; ++i) names.push_back(std::string(100 + 37 * i, static_cast<char>('a' + i)));
    std::vector<std::string> whole;
    for (const std::string &n : names) {
        rngtrk_philox_state s;
        EXPECT_EQ(RNGTRK_E_UNKNOWN_NAME, rngtrk_tracker_get_state(t.get(), n.c_str(), &s));
        whole.push_back(tracker_message(t.get()));
    }
    std::vector<std::thread> failing;
    for (const std::string &n : names)
        failing.emplace_back([&t, n] {
            rngtrk_philox_state s;
            for (int k = 0; k < 2000; ++k) rngtrk_tracker_get_state(t.get(), n.c_str(), &s);
        });
    for (int k = 0; k < 2000; ++k) {
        const std::string m = tracker_message(t.get());
        ASSERT_NE(whole.end(), std::find(whole.begin(), whole.end(), m)) << m;
    }
    for (std::thread &th : failing) th.join();
}

TEST(Errors, MessagesCountInEnglish) {
    // "1 trailing byte", "2 trailing bytes": a count and its noun agree.
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "a", 1));
    const std::vector<uint8_t> good = save(t.get());
    TrackerPtr u = new_tracker();
    for (size_t extra : {1, 2}) {
        std::vector<uint8_t> bytes = good;
        bytes.resize(good.size() + extra, 0);
        EXPECT_STATUS(RNGTRK_E_CORRUPT, rngtrk_tracker_load(u.get(), bytes.data(), bytes.size()));
        const std::string expected = extra == 1 ? "1 trailing byte after" : "2 trailing bytes after";
        EXPECT_NE(std::string::npos, std::string(rngtrk_last_error()).find(expected)) << rngtrk_last_error();
    }
    const uint8_t one = 'R';
    EXPECT_STATUS(RNGTRK_E_CORRUPT, rngtrk_tracker_load(u.get(), &one, 1));
    EXPECT_NE(std::string::npos, std::string(rngtrk_last_error()).find("only 1 byte)")) << rngtrk_last_error();
    uint8_t small[1];
    size_t len = 0;
    EXPECT_STATUS(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_tracker_save(t.get(), small, sizeof small, &len));
    EXPECT_NE(std::string::npos, std::string(rngtrk_last_error()).find("needs " + std::to_string(len) + " bytes; the capacity is 1"))
        << rngtrk_last_error();
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
