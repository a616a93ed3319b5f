// SPDX-License-Identifier: Apache-2.0
// Checkpoint bytes through the C API: the golden files written by the
// independent Python encoder, the invalid files, byte-for-byte round trips,
// and damage at every position leaving the tracker as it was.
#include <cstring>
#include <sstream>

#include "../c/checkpoint_recipes.h"
#include "support.h"

using namespace rngtrk_test;

namespace {

const char *const kGolden[] = {"empty",           "megatron",          "edge_names",      "resumed_job",
                               "megatron_rank_v2", "megatron_remat_v3", "derived_remat_v3"};

// A tracker with a few states, its default advanced, and a fork opened and
// closed, so the bytes are not trivial.
TrackerPtr populated() {
    TrackerPtr t = new_tracker();
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_manual_seed(t.get(), 1234));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_add(t.get(), "data-parallel-rng", 1234));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_add(t.get(), "model-parallel-rng", 3955));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_fork(t.get(), "model-parallel-rng"));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_advance(t.get(), 37, nullptr));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_restore(t.get(), "model-parallel-rng"));
    EXPECT_EQ(RNGTRK_OK, rngtrk_tracker_advance(t.get(), 8, nullptr));
    return t;
}

}  // namespace

TEST(Checkpoint, GoldenFilesDecodeToTheirJson) {
    for (const char *name : kGolden) {
        const std::vector<uint8_t> bytes = read_file(vector_path(std::string("checkpoints/") + name + ".rtck"));
        TrackerPtr t = new_tracker();
        ASSERT_OK(rngtrk_tracker_load(t.get(), bytes.data(), bytes.size()));
        EXPECT_EQ(read_text(vector_path(std::string("checkpoints/") + name + ".json")), canonical_json(t.get()))
            << name;
    }
}

TEST(Checkpoint, GoldenFilesSaveBackByteForByte) {
    for (const char *name : kGolden) {
        const std::vector<uint8_t> bytes = read_file(vector_path(std::string("checkpoints/") + name + ".rtck"));
        TrackerPtr t = new_tracker();
        ASSERT_OK(rngtrk_tracker_load(t.get(), bytes.data(), bytes.size()));
        EXPECT_EQ(bytes, save(t.get())) << name;
    }
}

TEST(Checkpoint, TheSameStatesBuiltThroughTheApiSaveToTheGoldenBytes) {
    // megatron.rtck: Megatron-LM's seeds for seed 1234, tp_rank 3, ep_rank 1.
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 1234));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 8, nullptr));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "data-parallel-rng", 1234));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "model-parallel-rng", 1234 + 2718 + 3));
    ASSERT_OK(rngtrk_tracker_add(t.get(), "expert-parallel-rng", 1234 + 1024 + 100));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "model-parallel-rng"));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 40, nullptr));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "model-parallel-rng"));
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "expert-parallel-rng"));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 3, nullptr));
    ASSERT_OK(rngtrk_tracker_restore(t.get(), "expert-parallel-rng"));
    EXPECT_EQ(read_file(vector_path("checkpoints/megatron.rtck")), save(t.get()));
}

TEST(Checkpoint, EveryRecipeSavesToItsGoldenBytes) {
    // recipes.txt: the calls every language replays; the golden bytes come
    // from the independent Python model in generate.py.
    const std::string recipes = read_text(vector_path("checkpoints/recipes.txt"));
    int checked = 0;
    std::istringstream lines(recipes);
    std::string line;
    while (std::getline(lines, line)) {
        if (line.rfind("recipe ", 0) != 0) continue;
        const std::string name = line.substr(7);
        TrackerPtr t = new_tracker();
        char err[512] = "";
        ASSERT_EQ(0, recipe_run(recipes.c_str(), name.c_str(), t.get(), err, sizeof err)) << err;
        EXPECT_EQ(read_file(vector_path("checkpoints/" + name + ".rtck")), save(t.get())) << name;
        ++checked;
    }
    EXPECT_GE(checked, 2);
}

TEST(Checkpoint, InvalidFilesFailWithTheirStatusAndChangeNothing) {
    std::istringstream manifest(read_text(vector_path("checkpoints/invalid/expected.txt")));
    std::string line;
    int checked = 0;
    while (std::getline(manifest, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string file, status_name;
        fields >> file >> status_name;
        const std::vector<uint8_t> bytes = read_file(vector_path("checkpoints/invalid/" + file));
        TrackerPtr t = populated();
        const Snapshot before = snapshot(t.get());
        EXPECT_STATUS(status_from_name(status_name), rngtrk_tracker_load(t.get(), bytes.data(), bytes.size()));
        EXPECT_TRUE(before == snapshot(t.get())) << file;
        // The describer validates exactly as load does: the same status and message.
        const std::string load_message = rngtrk_last_error();
        size_t len = 0;
        EXPECT_STATUS(status_from_name(status_name), rngtrk_checkpoint_json(bytes.data(), bytes.size(), nullptr, 0, &len));
        EXPECT_EQ(load_message, rngtrk_last_error()) << file;
        ++checked;
    }
    EXPECT_GE(checked, 14);
}

TEST(Checkpoint, JsonBufferRulesAndFiles) {
    const std::vector<uint8_t> bytes = read_file(vector_path("checkpoints/megatron_rank_v2.rtck"));
    const std::string want = read_text(vector_path("checkpoints/megatron_rank_v2.json"));  // with its newline
    size_t len = 0;
    ASSERT_OK(rngtrk_checkpoint_json(bytes.data(), bytes.size(), nullptr, 0, &len));  // a size query
    ASSERT_EQ(want.size() - 1, len);
    std::string text(len + 8, '#');
    EXPECT_STATUS(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_checkpoint_json(bytes.data(), bytes.size(), &text[0], len, &len));
    EXPECT_EQ(want.size() - 1, len);
    EXPECT_EQ(std::string(len + 8, '#'), text) << "a refused call wrote into the buffer";
    ASSERT_OK(rngtrk_checkpoint_json(bytes.data(), bytes.size(), &text[0], len + 1, &len));
    EXPECT_EQ('\0', text[len]);
    EXPECT_EQ(want, text.substr(0, len) + "\n");
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_checkpoint_json(nullptr, 4, nullptr, 0, &len));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_checkpoint_json(bytes.data(), bytes.size(), nullptr, 0, nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_checkpoint_json(bytes.data(), bytes.size(), nullptr, 9, &len));
    // From a file: the same text; errors name the file.
    const std::string path = vector_path("checkpoints/megatron_rank_v2.rtck");
    ASSERT_OK(rngtrk_checkpoint_file_json(path.c_str(), &text[0], text.size(), &len));
    EXPECT_EQ(want, text.substr(0, len) + "\n");
    const std::string bad = vector_path("checkpoints/invalid/bad_checksum.rtck");
    EXPECT_STATUS(RNGTRK_E_CORRUPT, rngtrk_checkpoint_file_json(bad.c_str(), nullptr, 0, &len));
    EXPECT_EQ(bad + ": corrupt checkpoint: checksum mismatch", std::string(rngtrk_last_error()));
    EXPECT_STATUS(RNGTRK_E_IO, rngtrk_checkpoint_file_json("/nonexistent/x.rtck", nullptr, 0, &len));
    EXPECT_STATUS(RNGTRK_E_IO, rngtrk_checkpoint_file_json(vector_path("checkpoints").c_str(), nullptr, 0, &len));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "Is a directory")) << rngtrk_last_error();
}

TEST(Checkpoint, SaveLoadSaveIsByteIdentical) {
    TrackerPtr a = populated();
    const std::vector<uint8_t> first = save(a.get());
    TrackerPtr b = new_tracker();
    ASSERT_OK(rngtrk_tracker_load(b.get(), first.data(), first.size()));
    EXPECT_EQ(first, save(b.get()));
    EXPECT_EQ(canonical_json(a.get()), canonical_json(b.get()));
}

TEST(Checkpoint, LoadReplacesEverythingAndStreamsContinue) {
    TrackerPtr a = populated();
    const std::vector<uint8_t> bytes = save(a.get());
    TrackerPtr b = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(b.get(), "stale", 99));
    ASSERT_OK(rngtrk_tracker_manual_seed(b.get(), 5));
    ASSERT_OK(rngtrk_tracker_load(b.get(), bytes.data(), bytes.size()));
    rngtrk_philox_state s{};
    EXPECT_STATUS(RNGTRK_E_UNKNOWN_NAME, rngtrk_tracker_get_state(b.get(), "stale", &s));
    // Both trackers now hand out the same states.
    for (int i = 0; i < 3; ++i) {
        rngtrk_philox_state sa{}, sb{};
        ASSERT_OK(rngtrk_tracker_fork(a.get(), "model-parallel-rng"));
        ASSERT_OK(rngtrk_tracker_fork(b.get(), "model-parallel-rng"));
        ASSERT_OK(rngtrk_tracker_advance(a.get(), 100, &sa));
        ASSERT_OK(rngtrk_tracker_advance(b.get(), 100, &sb));
        EXPECT_EQ(sa.seed, sb.seed);
        EXPECT_EQ(sa.offset, sb.offset);
        ASSERT_OK(rngtrk_tracker_restore(a.get(), "model-parallel-rng"));
        ASSERT_OK(rngtrk_tracker_restore(b.get(), "model-parallel-rng"));
    }
}

TEST(Checkpoint, SaveRecordsLiveValuesInsideAFork) {
    TrackerPtr t = populated();
    ASSERT_OK(rngtrk_tracker_fork(t.get(), "data-parallel-rng"));
    ASSERT_OK(rngtrk_tracker_advance(t.get(), 4, nullptr));
    const std::vector<uint8_t> bytes = save(t.get());
    TrackerPtr u = new_tracker();
    ASSERT_OK(rngtrk_tracker_load(u.get(), bytes.data(), bytes.size()));
    rngtrk_philox_state s{};
    ASSERT_OK(rngtrk_tracker_get_state(u.get(), "data-parallel-rng", &s));
    EXPECT_EQ(4u, s.offset);
    size_t depth = 1;
    ASSERT_OK(rngtrk_tracker_fork_depth(u.get(), &depth));
    EXPECT_EQ(0u, depth);  // forks are not recorded
}

TEST(Checkpoint, EveryTruncationFailsAndChangesNothing) {
    const std::vector<uint8_t> bytes = save(populated().get());
    TrackerPtr t = new_tracker();
    ASSERT_OK(rngtrk_tracker_add(t.get(), "x", 5));
    const Snapshot before = snapshot(t.get());
    for (size_t len = 0; len < bytes.size(); ++len) {
        const std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(len));
        EXPECT_STATUS(RNGTRK_E_CORRUPT, rngtrk_tracker_load(t.get(), cut.data(), cut.size()));
    }
    EXPECT_TRUE(before == snapshot(t.get()));
}

TEST(Checkpoint, EverySingleBitFlipFailsAndChangesNothing) {
    const std::vector<uint8_t> bytes = save(populated().get());
    TrackerPtr t = new_tracker();
    const Snapshot before = snapshot(t.get());
    for (size_t i = 0; i < bytes.size(); ++i) {
        for (int bit = 0; bit < 8; ++bit) {
            std::vector<uint8_t> damaged = bytes;
            damaged[i] ^= static_cast<uint8_t>(1u << bit);
            const rngtrk_status st = rngtrk_tracker_load(t.get(), damaged.data(), damaged.size());
            // A flip in the version field reads as a version this library
            // does not read, unless it lands on another readable one (1 -> 3);
            // all others are caught as corruption (CRC-32 catches every 1-bit error).
            const uint32_t version = uint32_t{damaged[8]} | uint32_t{damaged[9]} << 8 |
                                     uint32_t{damaged[10]} << 16 | uint32_t{damaged[11]} << 24;
            const bool unreadable = i >= 8 && i < 12 && (version == 0 || version > 3);
            EXPECT_EQ(unreadable ? RNGTRK_E_UNSUPPORTED_VERSION : RNGTRK_E_CORRUPT, st)
                << "byte " << i << " bit " << bit;
        }
    }
    EXPECT_TRUE(before == snapshot(t.get()));
}

TEST(Checkpoint, TrailingBytesAreRefused) {
    std::vector<uint8_t> bytes = save(populated().get());
    bytes.push_back(0);
    TrackerPtr t = new_tracker();
    EXPECT_STATUS(RNGTRK_E_CORRUPT, rngtrk_tracker_load(t.get(), bytes.data(), bytes.size()));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "trailing"));
}

TEST(Checkpoint, SaveBufferRules) {
    TrackerPtr t = populated();
    size_t needed = 0;
    EXPECT_STATUS(RNGTRK_OK, rngtrk_tracker_save(t.get(), nullptr, 0, &needed));  // size query
    EXPECT_EQ(40u + 4u + (1 + 17 + 16) + (1 + 18 + 16), needed);
    std::vector<uint8_t> small(needed - 1, 0xEE);
    size_t reported = 0;
    EXPECT_STATUS(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_tracker_save(t.get(), small.data(), small.size(), &reported));
    EXPECT_EQ(needed, reported);  // the needed length comes back anyway
    for (uint8_t b : small) ASSERT_EQ(0xEE, b);  // and nothing was written
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_save(t.get(), nullptr, 10, &reported));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_save(t.get(), small.data(), small.size(), nullptr));
    std::vector<uint8_t> roomy(needed + 10, 0xEE);
    ASSERT_OK(rngtrk_tracker_save(t.get(), roomy.data(), roomy.size(), &reported));
    EXPECT_EQ(needed, reported);
    EXPECT_EQ(0xEE, roomy[needed]);
}

TEST(Checkpoint, LoadArgumentErrors) {
    TrackerPtr t = populated();
    const Snapshot before = snapshot(t.get());
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_tracker_load(t.get(), nullptr, 10));
    EXPECT_STATUS(RNGTRK_E_CORRUPT, rngtrk_tracker_load(t.get(), nullptr, 0));
    EXPECT_TRUE(before == snapshot(t.get()));
}

// The version is read right after the magic, before the rest of the header:
// a short checkpoint of another version is UNSUPPORTED_VERSION, not CORRUPT,
// through bytes and through files alike.
TEST(Checkpoint, TheVersionIsCheckedBeforeTheRestOfTheHeader) {
    rngtrk_tracker *t = nullptr;
    ASSERT_OK(rngtrk_tracker_new(&t));
    size_t len = 0;
    ASSERT_OK(rngtrk_tracker_save(t, nullptr, 0, &len));
    std::vector<uint8_t> good(len);
    ASSERT_OK(rngtrk_tracker_save(t, good.data(), good.size(), &len));
    const std::string path = ::testing::TempDir() + "rngtrk_short_header.rtck";
    for (size_t cut = 12; cut < 20; ++cut) {
        std::vector<uint8_t> head(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(cut));
        head[8] = 99;  // version 99
        EXPECT_STATUS(RNGTRK_E_UNSUPPORTED_VERSION, rngtrk_tracker_load(t, head.data(), head.size()));
        FILE *f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(nullptr, f);
        ASSERT_EQ(head.size(), std::fwrite(head.data(), 1, head.size(), f));
        std::fclose(f);
        EXPECT_STATUS(RNGTRK_E_UNSUPPORTED_VERSION, rngtrk_tracker_load_file(t, path.c_str(), 0));
        head[8] = 1;  // a version this library reads, cut inside the header
        EXPECT_STATUS(RNGTRK_E_CORRUPT, rngtrk_tracker_load(t, head.data(), head.size()));
        EXPECT_NE(std::string::npos, std::string(rngtrk_last_error()).find("truncated inside the header"));
    }
    std::remove(path.c_str());
    rngtrk_tracker_free(t);
}
