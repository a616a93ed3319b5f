// SPDX-License-Identifier: Apache-2.0
// The library against tests/vectors/rngtrk_vectors.txt, written by the
// independent Python implementation in tests/vectors/generate.py.
#include <cstring>
#include <sstream>

#include "support.h"

using namespace rngtrk_test;

namespace {

struct VectorLines {
    std::vector<std::vector<std::string>> philox, state, u32, f32;
};

VectorLines parse_vectors() {
    VectorLines v;
    std::istringstream in(read_text(vector_path("rngtrk_vectors.txt")));
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        std::string kind, tok;
        fields >> kind;
        std::vector<std::string> toks;
        while (fields >> tok) toks.push_back(tok);
        if (kind == "philox") v.philox.push_back(toks);
        else if (kind == "state") v.state.push_back(toks);
        else if (kind == "u32") v.u32.push_back(toks);
        else if (kind == "f32") v.f32.push_back(toks);
        else ADD_FAILURE() << "unknown vector kind: " << kind;
    }
    return v;
}

uint32_t hex32(const std::string &s) { return static_cast<uint32_t>(std::stoul(s, nullptr, 16)); }
uint64_t dec64(const std::string &s) { return std::stoull(s, nullptr, 10); }

const VectorLines &vectors() {
    static const VectorLines v = parse_vectors();
    return v;
}

}  // namespace

TEST(SharedVectors, FileHasEveryKind) {
    EXPECT_GE(vectors().philox.size(), 60u);
    EXPECT_GE(vectors().state.size(), 8u);
    EXPECT_GE(vectors().u32.size(), 16u);
    EXPECT_EQ(vectors().u32.size(), vectors().f32.size());
}

TEST(SharedVectors, Philox) {
    for (const auto &t : vectors().philox) {
        ASSERT_EQ(10u, t.size());
        const uint32_t ctr[4] = {hex32(t[0]), hex32(t[1]), hex32(t[2]), hex32(t[3])};
        const uint32_t key[2] = {hex32(t[4]), hex32(t[5])};
        uint32_t out[4];
        rngtrk_philox4x32_10(ctr, key, out);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(hex32(t[6 + i]), out[i]) << "counter " << t[0];
    }
}

TEST(SharedVectors, StateBytes) {
    for (const auto &t : vectors().state) {
        ASSERT_EQ(3u, t.size());
        const rngtrk_philox_state s{dec64(t[0]), dec64(t[1])};
        uint8_t bytes[16];
        ASSERT_OK(rngtrk_state_to_bytes(&s, bytes));
        char hex[33];
        for (int i = 0; i < 16; ++i) std::snprintf(hex + 2 * i, 3, "%02x", bytes[i]);
        EXPECT_EQ(t[2], std::string(hex));
        rngtrk_philox_state back{};
        ASSERT_OK(rngtrk_state_from_bytes(bytes, &back));
        EXPECT_EQ(s.seed, back.seed);
        EXPECT_EQ(s.offset, back.offset);
    }
}

TEST(SharedVectors, StreamU32) {
    for (const auto &t : vectors().u32) {
        const rngtrk_philox_state s{dec64(t[0]), dec64(t[1])};
        const uint64_t first = dec64(t[2]), count = dec64(t[3]);
        ASSERT_EQ(4 + count, t.size());
        std::vector<uint32_t> out(count);
        ASSERT_OK(rngtrk_random_u32(&s, first, count, out.data()));
        for (uint64_t k = 0; k < count; ++k)
            EXPECT_EQ(hex32(t[4 + k]), out[k]) << "seed " << t[0] << " offset " << t[1] << " g " << first + k;
    }
}

TEST(SharedVectors, UniformF32Bits) {
    for (const auto &t : vectors().f32) {
        const rngtrk_philox_state s{dec64(t[0]), dec64(t[1])};
        const uint64_t first = dec64(t[2]), count = dec64(t[3]);
        ASSERT_EQ(4 + count, t.size());
        std::vector<float> out(count);
        ASSERT_OK(rngtrk_uniform_f32(&s, first, count, out.data()));
        for (uint64_t k = 0; k < count; ++k) {
            uint32_t bits;
            std::memcpy(&bits, &out[k], 4);
            EXPECT_EQ(hex32(t[4 + k]), bits);
        }
    }
}
