// SPDX-License-Identifier: Apache-2.0
// The triton layout against Triton itself: tests/vectors/triton_captured.txt
// holds what tl.randint, tl.rand, tl.randn and tl.randint4x returned on an
// H100 (Triton 3.6.0; tools/triton_capture.py) for random seeds and for
// offsets passed as 32- and 64-bit integers.  Every randint and rand value
// must be equal bit for bit; randn (fast math in Triton) within a few ulps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "rngtrk.h"
#include "support.h"

namespace {

using rngtrk_test::read_text;
using rngtrk_test::vector_path;

struct Captured {
    int width;
    uint64_t seed, offset, n;
    std::string kind;
    std::vector<uint64_t> values;
};

std::vector<Captured> captured() {
    std::istringstream in(read_text(vector_path("triton_captured.txt")));
    std::vector<Captured> out;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("triton ", 0) != 0) continue;
        std::istringstream f(line.substr(7));
        Captured c;
        f >> c.width >> c.seed >> c.offset >> c.n >> c.kind;
        std::string hex;
        while (f >> hex) c.values.push_back(std::stoull(hex, nullptr, 16));
        out.push_back(c);
    }
    return out;
}

// Triton's counter for element i is offset + i; rngtrk's states keep
// offsets at multiples of 4, so start at the multiple below and skip.
std::vector<uint32_t> draw(const Captured &c, rngtrk_distribution dist, rngtrk_dtype dtype) {
    rngtrk_sample_spec spec;
    EXPECT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&spec, RNGTRK_LAYOUT_TRITON, dist, dtype));
    const rngtrk_philox_state st{c.seed, c.offset / 4 * 4};
    std::vector<uint32_t> out(c.n);
    EXPECT_EQ(RNGTRK_OK, rngtrk_sample(&st, &spec, c.offset % 4, c.n, out.data(), out.size() * 4))
        << rngtrk_last_error();
    return out;
}

}  // namespace

TEST(TritonLayout, RandintAndRandEqualTritonsOwnOutputBitForBit) {
    int lines = 0, wide = 0;
    for (const Captured &c : captured()) {
        std::vector<uint32_t> got;
        if (c.kind == "randint") got = draw(c, RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32);
        else if (c.kind == "rand") got = draw(c, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32);
        else continue;
        ASSERT_EQ(c.n, c.values.size());
        for (uint64_t i = 0; i < c.n; ++i)
            ASSERT_EQ(c.values[i], got[i]) << c.kind << " seed " << c.seed << " offset " << c.offset << " ("
                                           << c.width << "-bit) element " << i;
        ++lines, wide += c.width == 64;
    }
    EXPECT_GE(lines, 30);
    EXPECT_GE(wide, 8) << "64-bit offsets (2^31 and beyond) are covered";
}

TEST(TritonLayout, Randint4xIsTheElementsPhiloxBlock) {
    int lines = 0;
    for (const Captured &c : captured()) {
        if (c.kind != "randint4x") continue;
        for (uint64_t i = 0; i < c.n; ++i) {
            const uint64_t counter = c.offset + i;
            const uint32_t ctr[4] = {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0, 0};
            const uint32_t key[2] = {static_cast<uint32_t>(c.seed), static_cast<uint32_t>(c.seed >> 32)};
            uint32_t w[4];
            rngtrk_philox4x32_10(ctr, key, w);
            for (int j = 0; j < 4; ++j) ASSERT_EQ(c.values[4 * i + j], w[j]) << "seed " << c.seed << " i " << i;
        }
        ++lines;
    }
    EXPECT_GE(lines, 15);
}

TEST(TritonLayout, RandnHasTritonsInputsAndDiffersOnlyInTheLastBits) {
    double worst = 0;
    for (const Captured &c : captured()) {
        if (c.kind != "randn") continue;
        const std::vector<uint32_t> got = draw(c, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32);
        for (uint64_t i = 0; i < c.n; ++i) {
            float t, r;
            const uint32_t bits = static_cast<uint32_t>(c.values[i]);
            std::memcpy(&t, &bits, 4);
            std::memcpy(&r, &got[i], 4);
            const double err = std::fabs(static_cast<double>(t) - r) / std::max(1.0, std::fabs(static_cast<double>(t)));
            worst = std::max(worst, err);
        }
    }
    EXPECT_LT(worst, 1e-5) << "rngtrk's Box-Muller from Triton's inputs";
    std::printf("[ INFO     ] triton randn: worst relative difference from Triton %.3g\n", worst);
}

TEST(TritonLayout, CountersPastInt64AreRefusedAndTheIncrementIsTheCountRoundedUp) {
    rngtrk_sample_spec spec;
    ASSERT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&spec, RNGTRK_LAYOUT_TRITON, RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32));
    uint32_t out[8];
    const rngtrk_philox_state edge{1, (uint64_t{1} << 63) - 8};
    EXPECT_EQ(RNGTRK_OK, rngtrk_sample(&edge, &spec, 0, 8, out, sizeof out));
    EXPECT_EQ(RNGTRK_E_OVERFLOW, rngtrk_sample(&edge, &spec, 1, 8, out, sizeof out));
    EXPECT_NE(std::string(rngtrk_last_error()).find("2^63"), std::string::npos) << rngtrk_last_error();
    uint64_t inc = 0;
    ASSERT_EQ(RNGTRK_OK, rngtrk_sample_offset_increment(&spec, 5, &inc));
    EXPECT_EQ(8u, inc);
    ASSERT_EQ(RNGTRK_OK, rngtrk_sample_offset_increment(&spec, 8, &inc));
    EXPECT_EQ(8u, inc);
    // A tracker draw refused for its counters leaves the tracker where it was.
    rngtrk_tracker *t = nullptr;
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_new(&t));
    const rngtrk_philox_state high{9, (uint64_t{1} << 63) - 4};
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_set_default(t, &high));
    EXPECT_EQ(RNGTRK_E_OVERFLOW, rngtrk_tracker_sample(t, &spec, 8, out, sizeof out, nullptr));
    rngtrk_philox_state now;
    ASSERT_EQ(RNGTRK_OK, rngtrk_tracker_get_default(t, &now));
    EXPECT_EQ(high.offset, now.offset);
    rngtrk_tracker_free(t);
}
