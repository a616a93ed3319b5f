// SPDX-License-Identifier: Apache-2.0
// Stream semantics through the C API: slice invariance, the offset rule,
// the float transform, and every error path.
#include <cmath>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>

#include "support.h"

using namespace rngtrk_test;

namespace {
constexpr uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
}

TEST(Stream, AnySliceEqualsTheSameSliceOfTheWhole) {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        const rngtrk_philox_state s{rng(), (rng() % (1u << 20)) * 4};
        std::vector<uint32_t> whole(257);
        ASSERT_OK(rngtrk_random_u32(&s, 0, whole.size(), whole.data()));
        const uint64_t first = rng() % whole.size();
        const uint64_t count = rng() % (whole.size() - first + 1);
        std::vector<uint32_t> part(count + 1, 0xA5A5A5A5u);
        ASSERT_OK(rngtrk_random_u32(&s, first, count, part.data()));
        for (uint64_t k = 0; k < count; ++k) ASSERT_EQ(whole[first + k], part[k]);
        EXPECT_EQ(0xA5A5A5A5u, part[count]) << "wrote past count";
    }
}

TEST(Stream, OffsetFourSkipsExactlyOneBlock) {
    // Offset counts 32-bit outputs: (seed, offset + 4) starts one block later.
    const rngtrk_philox_state a{99, 0}, b{99, 4};
    uint32_t wa[12], wb[8];
    ASSERT_OK(rngtrk_random_u32(&a, 0, 12, wa));
    ASSERT_OK(rngtrk_random_u32(&b, 0, 8, wb));
    for (int i = 0; i < 8; ++i) EXPECT_EQ(wa[4 + i], wb[i]);
    // and `first` addresses the same stream as the offset does.
    uint32_t wc[8];
    ASSERT_OK(rngtrk_random_u32(&a, 4, 8, wc));
    for (int i = 0; i < 8; ++i) EXPECT_EQ(wb[i], wc[i]);
}

TEST(Stream, ElementIsWordOfPhiloxBlock) {
    const uint64_t seed = 0x0123456789ABCDEFull, offset = 4 * 1000;
    const rngtrk_philox_state s{seed, offset};
    const uint64_t g = (1ull << 35) + 6;  // block index needs the counter's high word
    uint32_t v;
    ASSERT_OK(rngtrk_random_u32(&s, g, 1, &v));
    const uint64_t b = offset / 4 + g / 4;
    const uint32_t ctr[4] = {static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0};
    const uint32_t key[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
    uint32_t w[4];
    rngtrk_philox4x32_10(ctr, key, w);
    EXPECT_EQ(w[g % 4], v);
}

TEST(Stream, UniformIsLow24BitsTimesTwoToMinus24) {
    const rngtrk_philox_state s{5, 8};
    std::vector<uint32_t> words(1000);
    std::vector<float> u(1000);
    ASSERT_OK(rngtrk_random_u32(&s, 3, words.size(), words.data()));
    ASSERT_OK(rngtrk_uniform_f32(&s, 3, u.size(), u.data()));
    double sum = 0;
    for (size_t i = 0; i < words.size(); ++i) {
        EXPECT_EQ(std::ldexp(static_cast<double>(words[i] & 0xFFFFFF), -24), static_cast<double>(u[i]));
        EXPECT_GE(u[i], 0.0f);
        EXPECT_LT(u[i], 1.0f);
        sum += u[i];
    }
    EXPECT_NEAR(0.5, sum / words.size(), 0.05);  // 1000 uniforms: sd of mean ~0.009
}

TEST(Stream, LastElementIndicesAreReachable) {
    const rngtrk_philox_state s{1, 0};
    uint32_t tail[3];
    EXPECT_STATUS(RNGTRK_OK, rngtrk_random_u32(&s, kMax64 - 2, 3, tail));
    uint32_t again;
    ASSERT_OK(rngtrk_random_u32(&s, kMax64 - 1, 1, &again));
    EXPECT_EQ(tail[1], again);
}

TEST(Stream, ZeroCountWritesNothingAndAcceptsNull) {
    const rngtrk_philox_state s{1, 0};
    EXPECT_STATUS(RNGTRK_OK, rngtrk_random_u32(&s, 0, 0, nullptr));
    EXPECT_STATUS(RNGTRK_OK, rngtrk_uniform_f32(&s, 12, 0, nullptr));
}

TEST(Stream, Errors) {
    const rngtrk_philox_state good{1, 0}, misaligned{1, 6};
    uint32_t w[4] = {1, 2, 3, 4};
    float f[4] = {};
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_random_u32(nullptr, 0, 4, w));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "state"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_random_u32(&good, 0, 4, nullptr));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "out"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_random_u32(&misaligned, 0, 4, w));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "multiple of 4"));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_uniform_f32(&misaligned, 0, 4, f));
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_random_u32(&good, kMax64 - 1, 3, w));
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_uniform_f32(&good, 1, kMax64, f));
    // A count whose byte size passes size_t, even with first = 0.
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_random_u32(&good, 0, kMax64 / 2, w));
    // Nothing was written by the failed calls.
    EXPECT_EQ(1u, w[0]);
    EXPECT_EQ(4u, w[3]);
}

TEST(StateCodec, LittleEndianOnEveryHostAndNullChecks) {
    const rngtrk_philox_state s{0x0102030405060708ull, 0x1112131415161718ull};
    uint8_t bytes[16];
    ASSERT_OK(rngtrk_state_to_bytes(&s, bytes));
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(8 - i, bytes[i]);
        EXPECT_EQ(0x18 - i, bytes[8 + i]);
    }
    rngtrk_philox_state back{};
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_state_to_bytes(nullptr, bytes));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_state_to_bytes(&s, nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_state_from_bytes(nullptr, &back));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_state_from_bytes(bytes, nullptr));
    // Any 16 bytes decode, a misaligned offset included (it is checked where used).
    bytes[8] = 0x03;
    ASSERT_OK(rngtrk_state_from_bytes(bytes, &back));
    EXPECT_EQ(s.seed, back.seed);
    EXPECT_EQ(0x1112131415161703ull, back.offset);
}

// rngtrk_state_advance is the tracker's own advance, on a bare state.
TEST(StateAdvance, EqualsTheTrackersAdvanceAndRefusesWhatItRefuses) {
    std::mt19937_64 rng(23);
    for (int i = 0; i < 200; ++i) {
        const uint64_t seed = rng(), offset = (rng() >> 8) * 4, increment = i < 20 ? uint64_t(i) : rng() >> 10;
        rngtrk_tracker *t = nullptr;
        ASSERT_OK(rngtrk_tracker_new(&t));
        const rngtrk_philox_state start = {seed, offset};
        ASSERT_OK(rngtrk_tracker_set_default(t, &start));
        ASSERT_OK(rngtrk_tracker_advance(t, increment, nullptr));
        rngtrk_philox_state want, got = start;
        ASSERT_OK(rngtrk_tracker_get_default(t, &want));
        ASSERT_OK(rngtrk_state_advance(&got, increment, &got));  // out may be the input
        EXPECT_EQ(want.seed, got.seed);
        EXPECT_EQ(want.offset, got.offset);
        EXPECT_EQ(0u, got.offset % 4);
        EXPECT_LT(got.offset - offset - increment, 4u);
        rngtrk_tracker_free(t);
    }
    const rngtrk_philox_state high = {1, UINT64_MAX - 7};
    rngtrk_philox_state out = {9, 9};
    ASSERT_OK(rngtrk_state_advance(&high, 4, &out));
    EXPECT_EQ(UINT64_MAX - 3, out.offset);
    out = {9, 9};
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_state_advance(&high, 5, &out));  // rounds to 8: past 2^64 - 1
    EXPECT_EQ(9u, out.offset) << "a refusal leaves *out";
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_state_advance(&high, UINT64_MAX, &out));
    const rngtrk_philox_state odd = {1, 6};
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_state_advance(&odd, 4, &out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_state_advance(nullptr, 4, &out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_state_advance(&high, 4, nullptr));
}
