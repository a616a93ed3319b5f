// SPDX-License-Identifier: Apache-2.0
// rngtrk_dropout and rngtrk_dropout_slice (f32, f16 and bf16 data) through
// the C API, against an oracle written here: the keep flag of element g is
// element g of rngtrk_sample's BERNOULLI u8 mask of the same spec, and
// out[i] = round_T(float(in[i]) * (keep ? float(scale_T) : 0.0f)) with
// scale_T = 1.0 / p (double) rounded to float and then to T, the rounding
// written in the tests from the definition (support.h).  Every layout, odd
// counts, unaligned firsts, counters crossing 2^32, NaN, infinities, signed
// zeros, subnormals and overflow to infinity; in place; slices against the
// box of the whole tensor's dropout; every refusal leaving the output
// untouched.  make test runs this file once per CPU path (the suites are
// named Sample*).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support.h"

using namespace rngtrk_test;

namespace {

const rngtrk_layout kLayouts[] = {RNGTRK_LAYOUT_STATELESS, RNGTRK_LAYOUT_NVFUSER, RNGTRK_LAYOUT_TORCH_EAGER_CUDA,
                                   RNGTRK_LAYOUT_TRITON};
const rngtrk_dtype kDataTypes[] = {RNGTRK_DTYPE_F32, RNGTRK_DTYPE_F16, RNGTRK_DTYPE_BF16};

size_t width(rngtrk_dtype t) { return t == RNGTRK_DTYPE_F32 ? 4 : 2; }

std::string name_of(rngtrk_layout l, rngtrk_dtype t) {
    return std::string(rngtrk_layout_name(l)) + " " + rngtrk_dtype_name(t);
}

// A dropout spec: BERNOULLI with keep probability p over data of `dtype`.
rngtrk_sample_spec drop_spec(rngtrk_layout layout, rngtrk_dtype dtype, double p) {
    rngtrk_sample_spec s;
    EXPECT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&s, layout, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
    s.dtype = dtype, s.param_a = p;
    s.sm_count = 3, s.max_threads_per_sm = 512;  // torch-eager-cuda: T = 768, several slabs
    return s;
}

// The u8 mask of the same spec, elements [first, first + count).
std::vector<uint8_t> mask_of(const rngtrk_philox_state &st, rngtrk_sample_spec spec, uint64_t first,
                             uint64_t count) {
    spec.dtype = RNGTRK_DTYPE_U8;
    std::vector<uint8_t> m(count);
    EXPECT_EQ(RNGTRK_OK, rngtrk_sample(&st, &spec, first, count, m.data(), m.size())) << rngtrk_last_error();
    return m;
}

// The value of data element i of `bytes` as float, and a float rounded to T.
float value_at(rngtrk_dtype t, const std::vector<uint8_t> &bytes, size_t i) {
    if (t == RNGTRK_DTYPE_F32) {
        float v;
        std::memcpy(&v, bytes.data() + 4 * i, 4);
        return v;
    }
    uint16_t h;
    std::memcpy(&h, bytes.data() + 2 * i, 2);
    return t == RNGTRK_DTYPE_F16 ? f16_value(h) : bf16_value(h);
}
void store_at(rngtrk_dtype t, std::vector<uint8_t> &bytes, size_t i, float v) {
    if (t == RNGTRK_DTYPE_F32) return std::memcpy(bytes.data() + 4 * i, &v, 4), void();
    const uint16_t h = t == RNGTRK_DTYPE_F16 ? f16_nearest(v) : bf16_nearest(v);
    std::memcpy(bytes.data() + 2 * i, &h, 2);
}

// scale_T: 1.0 / p in double, rounded to float, then to T (torch.tensor(1.0 /
// p, dtype=T) does the same), as a float.
float scale_of(rngtrk_dtype t, double p) {
    const float s = static_cast<float>(1.0 / p);
    if (t == RNGTRK_DTYPE_F32) return s;
    return t == RNGTRK_DTYPE_F16 ? f16_value(f16_nearest(s)) : bf16_value(bf16_nearest(s));
}

// The oracle: out = round_T(in * (keep ? scale_T : 0)), computed in float.
std::vector<uint8_t> oracle(rngtrk_dtype t, double p, const std::vector<uint8_t> &mask,
                            const std::vector<uint8_t> &in) {
    const float scale = scale_of(t, p);
    std::vector<uint8_t> out(in.size());
    for (size_t i = 0; i < mask.size(); ++i) store_at(t, out, i, value_at(t, in, i) * (mask[i] ? scale : 0.0f));
    return out;
}

// Data of every kind: NaN of both signs, infinities, zeros of both signs,
// subnormals, values that overflow the dtype once scaled, and ordinary
// positive and negative values.
std::vector<uint8_t> data(rngtrk_dtype t, size_t count, std::mt19937_64 &rng) {
    std::vector<uint8_t> in(count * width(t));
    const float special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-40f, -2e-39f, 6e-8f, -3e-5f,
                             65000.0f, -60000.0f, 3e38f, -3.3e38f, 1.0f, -1.0f};
    for (size_t i = 0; i < count; ++i) {
        const float ordinary = static_cast<float>(static_cast<int>(rng() % 20001) - 10000) / 97.0f;
        const float v = i % 7 == 3 ? special[rng() % 16] : ordinary;
        if (t == RNGTRK_DTYPE_F32) {
            std::memcpy(in.data() + 4 * i, &v, 4);
        } else if (i % 11 == 4) {  // any bit pattern, NaN payloads and subnormal halves included
            const uint16_t h = static_cast<uint16_t>(rng());
            std::memcpy(in.data() + 2 * i, &h, 2);
        } else {
            store_at(t, in, i, v);
        }
    }
    return in;
}

std::vector<uint8_t> dropout(const rngtrk_philox_state &st, const rngtrk_sample_spec &s, uint64_t first,
                             const std::vector<uint8_t> &in) {
    std::vector<uint8_t> out(in.size() + 3, 0xEE);  // spare bytes: nothing is written past the elements
    const uint64_t count = in.size() / width(static_cast<rngtrk_dtype>(s.dtype));
    EXPECT_EQ(RNGTRK_OK, rngtrk_dropout(&st, &s, first, count, in.data(), out.data(), out.size()))
        << rngtrk_last_error();
    for (size_t i = in.size(); i < out.size(); ++i) EXPECT_EQ(0xEE, out[i]) << "byte " << i << " past the end";
    out.resize(in.size());
    return out;
}

// The first difference between two results, described (element and values).
std::string first_difference(rngtrk_dtype t, const std::vector<uint8_t> &want, const std::vector<uint8_t> &got,
                             const std::vector<uint8_t> &in, const std::vector<uint8_t> &mask) {
    const size_t w = width(t);
    for (size_t i = 0; i * w < want.size(); ++i) {
        if (std::memcmp(want.data() + i * w, got.data() + i * w, w) == 0) continue;
        uint32_t a = 0, b = 0, x = 0;
        std::memcpy(&a, want.data() + i * w, w);
        std::memcpy(&b, got.data() + i * w, w);
        std::memcpy(&x, in.data() + i * w, w);
        return "element " + std::to_string(i) + " (in bits " + std::to_string(x) + ", kept " +
               std::to_string(int(mask[i])) + "): want bits " + std::to_string(a) + ", got " + std::to_string(b);
    }
    return "";
}

}  // namespace

TEST(SampleDropout, EveryLayoutAndDtypeEqualsTheMaskAndTheFormula) {
    std::mt19937_64 rng(42);
    // Keep probabilities: float values and not (0.3, 0.9: their float 1/p
    // differs from 1/(float)p somewhere), small ones whose f16 scale
    // overflows, and the ends.
    const double ps[] = {0.8, 0.5, 0.3, 0.9, 0.123456789, 1.0 / 3.0, 1e-5, 1.0, 0.0};
    // States: ordinary, and offsets whose counters cross 2^32 inside the call.
    const uint64_t near32 = 4 * ((uint64_t{1} << 32) - 2);
    for (rngtrk_layout layout : kLayouts) {
        for (rngtrk_dtype t : kDataTypes) {
            for (size_t trial = 0; trial < 18; ++trial) {
                const double p = ps[trial % 9];
                rngtrk_sample_spec s = drop_spec(layout, t, p);
                uint64_t first = rng() % 5000, count = 1 + 2 * (rng() % 3000);  // odd counts
                if (trial == 0) first = 0, count = 1;
                if (trial == 1) first = 3, count = 2;
                rngtrk_philox_state st{rng(), 4 * (rng() % 100000)};
                if (trial % 3 == 2) st.offset = near32;  // stateless, triton, eager: counters cross 2^32
                // nvfuser's block index runs in counter word 2: elements near 2^34 cross 2^32 there.
                if (trial % 4 == 3) first = (uint64_t{1} << 34) - 4 * 50 - 1 - rng() % 3;
                if (layout == RNGTRK_LAYOUT_TORCH_EAGER_CUDA) s.numel = first + count + rng() % 2000;
                const std::vector<uint8_t> in = data(t, count, rng);
                const std::vector<uint8_t> mask = mask_of(st, s, first, count);
                const std::vector<uint8_t> want = oracle(t, p, mask, in), got = dropout(st, s, first, in);
                ASSERT_EQ(want, got) << name_of(layout, t) << " p " << p << " first " << first << " count "
                                     << count << ": " << first_difference(t, want, got, in, mask);
                // In place.
                std::vector<uint8_t> inout = in;
                ASSERT_OK(rngtrk_dropout(&st, &s, first, count, inout.data(), inout.data(), inout.size()));
                ASSERT_EQ(want, inout) << name_of(layout, t) << " in place";
                // The keep flags mean something: p = 0 keeps nothing, p = 1 everything.
                const size_t kept = static_cast<size_t>(std::count(mask.begin(), mask.end(), 1));
                EXPECT_EQ(p == 0.0 ? 0u : p == 1.0 ? count : kept, kept);
            }
        }
    }
}

TEST(SampleDropout, DroppedElementsAreTheInputTimesZero) {
    // torch's x * mask * scale: a dropped NaN stays NaN, a dropped negative
    // or -0 is -0, a dropped infinity is NaN; a kept one is scaled.
    for (rngtrk_layout layout : kLayouts) {
        for (rngtrk_dtype t : kDataTypes) {
            const rngtrk_sample_spec s = drop_spec(layout, t, 0.5);
            const rngtrk_philox_state st{7, 40};
            const float values[] = {-2.5f, NAN, INFINITY, -0.0f, 3.0f};
            const size_t count = 400;
            std::vector<uint8_t> in(count * width(t));
            for (size_t i = 0; i < count; ++i) store_at(t, in, i, values[i % 5]);
            const std::vector<uint8_t> mask = mask_of(st, s, 0, count), out = dropout(st, s, 0, in);
            size_t dropped = 0, kept = 0;
            for (size_t i = 0; i < count; ++i) {
                const float x = values[i % 5], y = value_at(t, out, i);
                if (mask[i]) {
                    ++kept;
                    if (std::isnan(x)) {
                        EXPECT_TRUE(std::isnan(y));
                    } else {
                        EXPECT_EQ(x * 2.0f, y) << name_of(layout, t) << " element " << i;
                    }
                } else {
                    ++dropped;
                    if (std::isnan(x) || std::isinf(x)) {
                        EXPECT_TRUE(std::isnan(y)) << name_of(layout, t) << " element " << i;
                    } else {
                        EXPECT_EQ(0.0f, y);
                        EXPECT_EQ(std::signbit(x), std::signbit(y)) << name_of(layout, t) << " element " << i;
                    }
                }
            }
            EXPECT_GT(kept, 100u);
            EXPECT_GT(dropped, 100u);
        }
    }
}

TEST(SampleDropout, F32EqualsDropoutF32WhereKeptAndDiffersOnlyWhereDocumented) {
    std::mt19937_64 rng(9);
    for (rngtrk_layout layout : kLayouts) {
        // p a float value: the two scales agree.
        rngtrk_sample_spec s = drop_spec(layout, RNGTRK_DTYPE_F32, 0.75);
        s.numel = 20000;
        const rngtrk_philox_state st{31, 12};
        const size_t count = 10001;
        const std::vector<uint8_t> in = data(RNGTRK_DTYPE_F32, count, rng);
        const std::vector<uint8_t> got = dropout(st, s, 17, in), mask = mask_of(st, s, 17, count);
        std::vector<float> legacy(count);
        ASSERT_OK(rngtrk_dropout_f32(&st, &s, 17, count, reinterpret_cast<const float *>(in.data()), legacy.data()));
        size_t negative_dropped = 0;
        for (size_t i = 0; i < count; ++i) {
            const float x = value_at(RNGTRK_DTYPE_F32, in, i), y = value_at(RNGTRK_DTYPE_F32, got, i);
            if (mask[i]) {
                ASSERT_EQ(0, std::memcmp(&legacy[i], got.data() + 4 * i, 4)) << "layout " << layout << " element " << i;
            } else {
                uint32_t legacy_bits;
                std::memcpy(&legacy_bits, &legacy[i], 4);
                EXPECT_EQ(0u, legacy_bits) << "rngtrk_dropout_f32 writes +0";
                if (!std::isnan(x) && !std::isinf(x)) {
                    EXPECT_EQ(std::signbit(x), std::signbit(y));
                }
                negative_dropped += !std::isnan(x) && std::signbit(x);
            }
        }
        EXPECT_GT(negative_dropped, 100u);  // where the two differ: -0 here, +0 there
    }
}

TEST(SampleDropout, TheScaleIsTheDoubleReciprocalRoundedToFloatThenToTheDtype) {
    // A p whose float 1/p differs from 1.0f / (float)p: rngtrk_dropout takes
    // the first (torch.tensor(1.0 / p)), rngtrk_dropout_f32 the second.
    double p = 0.9;
    for (uint64_t i = 1; static_cast<float>(1.0 / p) == 1.0f / static_cast<float>(p); ++i) p = 0.9 + i * 1e-9;
    const rngtrk_philox_state st{3, 8};
    for (rngtrk_layout layout : kLayouts) {
        rngtrk_sample_spec s = drop_spec(layout, RNGTRK_DTYPE_F32, p);
        const std::vector<uint8_t> mask = mask_of(st, s, 0, 64);
        const float ones[64] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
        float now[64], legacy[64];
        ASSERT_OK(rngtrk_dropout(&st, &s, 0, 64, ones, now, sizeof now));
        ASSERT_OK(rngtrk_dropout_f32(&st, &s, 0, 64, ones, legacy));
        const size_t k = static_cast<size_t>(std::find(mask.begin(), mask.end(), 1) - mask.begin());
        ASSERT_LT(k, 64u);
        EXPECT_EQ(static_cast<float>(1.0 / p), now[k]);
        EXPECT_EQ(1.0f / static_cast<float>(p), legacy[k]);
        EXPECT_NE(now[k], legacy[k]);
    }
    // f16 and bf16: through float, not straight from the double.  1/p lies
    // just above the midpoint of two halves (and of two bfloat16s); the
    // float rounds to the midpoint itself, which ties to the even one below.
    struct Case {
        rngtrk_dtype dtype;
        double reciprocal;
        float via_float, direct;
    };
    const Case cases[] = {{RNGTRK_DTYPE_F16, 3 + 0x1p-10 + 0x1p-40, 3.0f, 3.0f + 0x1p-9f},
                          {RNGTRK_DTYPE_BF16, 3 + 0x1p-7 + 0x1p-40, 3.0f, 3.0f + 0x1p-6f}};
    for (const Case &c : cases) {
        const double q = 1.0 / c.reciprocal;
        ASSERT_GT(1.0 / q, 3.0 + (c.dtype == RNGTRK_DTYPE_F16 ? 0x1p-10 : 0x1p-7));  // above the midpoint
        for (rngtrk_layout layout : kLayouts) {
            const rngtrk_sample_spec s = drop_spec(layout, c.dtype, q);
            const std::vector<uint8_t> mask = mask_of(st, s, 0, 64);
            std::vector<uint8_t> one(64 * 2);
            for (size_t i = 0; i < 64; ++i) store_at(c.dtype, one, i, 1.0f);
            const std::vector<uint8_t> out = dropout(st, s, 0, one);
            const size_t k = static_cast<size_t>(std::find(mask.begin(), mask.end(), 1) - mask.begin());
            ASSERT_LT(k, 64u);
            EXPECT_EQ(c.via_float, value_at(c.dtype, out, k)) << name_of(layout, c.dtype);
            EXPECT_NE(c.direct, value_at(c.dtype, out, k));
        }
    }
}

TEST(SampleDropout, SlicesEqualTheBoxOfTheWholeTensorsDropout) {
    std::mt19937_64 rng(77);
    for (int trial = 0; trial < 96; ++trial) {
        const rngtrk_layout layout = kLayouts[trial % 4];
        const rngtrk_dtype t = kDataTypes[(trial / 4) % 3];
        const double p = trial % 5 == 0 ? 0.0 : 0.25 + (rng() % 1000) / 1500.0;
        const size_t ndim = 1 + rng() % 4;
        uint64_t global[4], start[4], local[4], numel = 1;
        for (size_t d = 0; d < ndim; ++d) {
            global[d] = 1 + rng() % (ndim == 1 ? 3000 : ndim == 2 ? 60 : 13);
            start[d] = rng() % global[d];
            local[d] = rng() % 4 == 0 ? global[d] - start[d] : 1 + rng() % (global[d] - start[d]);
            if (rng() % 5 == 0) start[d] = 0, local[d] = global[d];
            numel *= global[d];
        }
        uint64_t box = 1;
        for (size_t d = 0; d < ndim; ++d) box *= local[d];
        rngtrk_sample_spec s = drop_spec(layout, t, p);
        const rngtrk_philox_state st{rng(), trial % 7 == 0 ? 4 * ((uint64_t{1} << 32) - 3) : 4 * (rng() % 100)};
        // The whole tensor's dropout (for torch-eager-cuda: a tensor of numel elements).
        const std::vector<uint8_t> whole_in = data(t, numel, rng);
        rngtrk_sample_spec whole_spec = s;
        whole_spec.numel = numel;
        const std::vector<uint8_t> whole = dropout(st, whole_spec, 0, whole_in);
        // The box's input and the expected box, cut from the whole.
        const size_t w = width(t);
        std::vector<uint8_t> in(box * w), want(box * w);
        for (uint64_t i = 0; i < box; ++i) {
            uint64_t rem = i, g = 0, idx[4];
            for (size_t d = ndim; d-- > 0;) idx[d] = rem % local[d], rem /= local[d];
            for (size_t d = 0; d < ndim; ++d) g = g * global[d] + start[d] + idx[d];
            std::memcpy(in.data() + i * w, whole_in.data() + g * w, w);
            std::memcpy(want.data() + i * w, whole.data() + g * w, w);
        }
        s.numel = 1;  // not used by slices
        std::vector<uint8_t> got(box * w + 2, 0xEE);
        ASSERT_OK(rngtrk_dropout_slice(&st, &s, ndim, global, start, local, in.data(), got.data(), got.size()));
        EXPECT_EQ(0xEE, got[box * w]);
        got.resize(box * w);
        ASSERT_EQ(want, got) << "trial " << trial << " " << name_of(layout, t) << " ndim " << ndim;
        std::vector<uint8_t> inout = in;
        ASSERT_OK(rngtrk_dropout_slice(&st, &s, ndim, global, start, local, inout.data(), inout.data(),
                                       inout.size()));
        ASSERT_EQ(want, inout) << "trial " << trial << " in place";
    }
}

TEST(SampleDropout, ThreadsGiveTheSameBits) {
    for (rngtrk_layout layout : kLayouts) {
        rngtrk_sample_spec one = drop_spec(layout, RNGTRK_DTYPE_BF16, 0.6), many = one;
        many.threads = 3;
        const uint64_t n = (uint64_t{1} << 20) + 12345;  // above the threshold, uneven parts
        one.numel = many.numel = n + 7;
        std::mt19937_64 rng(1);
        const std::vector<uint8_t> in = data(RNGTRK_DTYPE_BF16, n, rng);
        const rngtrk_philox_state st{17, 400};
        EXPECT_EQ(dropout(st, one, 7, in), dropout(st, many, 7, in)) << "layout " << layout;
        const uint64_t global[2] = {2000, 700}, start[2] = {11, 5}, local[2] = {1600, 690};  // 2^20 and more
        const std::vector<uint8_t> box_in = data(RNGTRK_DTYPE_BF16, 1600 * 690, rng);
        std::vector<uint8_t> a(box_in.size()), b(a.size());
        ASSERT_OK(rngtrk_dropout_slice(&st, &one, 2, global, start, local, box_in.data(), a.data(), a.size()));
        ASSERT_OK(rngtrk_dropout_slice(&st, &many, 2, global, start, local, box_in.data(), b.data(), b.size()));
        EXPECT_EQ(a, b) << "layout " << layout;
    }
}

// Every refusal: the right status, a message, and nothing written.
TEST(SampleDropout, EveryRefusalWritesNothing) {
    const rngtrk_philox_state st{1, 0}, misaligned_state{1, 2}, near63{1, (uint64_t{1} << 63) - 4};
    alignas(16) uint8_t in[64] = {}, out[64];
    const auto poisoned = [&] { std::memset(out, 0xA5, sizeof out); };
    const auto untouched = [&] {
        for (uint8_t b : out)
            if (b != 0xA5) return false;
        for (uint8_t b : in)
            if (b != 0) return false;
        return true;
    };
    const rngtrk_sample_spec good = drop_spec(RNGTRK_LAYOUT_STATELESS, RNGTRK_DTYPE_F16, 0.5);
    // A call the checks accept: the CPU runs it, the CUDA call needs a device.
    const rngtrk_status cuda_ok = rngtrk_cuda_available() == RNGTRK_OK ? RNGTRK_OK : RNGTRK_E_UNAVAILABLE;
    const auto range = [&](rngtrk_status want, const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                           uint64_t first, uint64_t count, const void *i, void *o, size_t cap, const char *what) {
        poisoned();
        EXPECT_STATUS(want, rngtrk_dropout(state, spec, first, count, i, o, cap));
        EXPECT_TRUE(untouched()) << what;
        poisoned();
        EXPECT_STATUS(want == RNGTRK_OK ? cuda_ok : want,
                      rngtrk_cuda_dropout(state, spec, first, count, i, o, cap, nullptr));
        EXPECT_TRUE(untouched()) << what << " (cuda)";
    };
    range(RNGTRK_E_INVALID_ARGUMENT, nullptr, &good, 0, 8, in, out, 16, "state NULL");
    range(RNGTRK_E_INVALID_ARGUMENT, &st, nullptr, 0, 8, in, out, 16, "spec NULL");
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 0, 8, nullptr, out, 16, "in NULL");
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 0, 8, in, nullptr, 16, "out NULL");
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 0, 8, in + 1, out, 16, "in misaligned");
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 0, 8, in, out + 1, 16, "out misaligned");
    range(RNGTRK_E_INVALID_ARGUMENT, &misaligned_state, &good, 0, 8, in, out, 16, "offset not a multiple of 4");
    range(RNGTRK_E_BUFFER_TOO_SMALL, &st, &good, 0, 8, in, out, 15, "out_capacity short");
    range(RNGTRK_E_OVERFLOW, &st, &good, ~uint64_t{0}, 2, in, out, 16, "first + count past 2^64");
    rngtrk_sample_spec bad = good;
    for (double p : {-0.1, 1.5, double(NAN), double(INFINITY), -double(INFINITY)}) {
        bad.param_a = p;
        range(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 0, 8, in, out, 16, "p outside 0..1");
    }
    bad = good;
    bad.distribution = RNGTRK_DIST_UNIFORM;
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 0, 8, in, out, 16, "not bernoulli");
    for (rngtrk_dtype t : {RNGTRK_DTYPE_U8, RNGTRK_DTYPE_U32, RNGTRK_DTYPE_U64, RNGTRK_DTYPE_F64}) {
        bad = good;
        bad.dtype = t;
        range(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 0, 8, in, out, 64, "a dtype dropout does not take");
        rngtrk_dropout(&st, &bad, 0, 8, in, out, 64);
        EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), rngtrk_dtype_name(t))) << rngtrk_last_error();
    }
    bad = good;
    bad.dtype = 99;
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 0, 8, in, out, 16, "unknown dtype");
    bad = good;
    bad.reserved = 1;
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 0, 8, in, out, 16, "reserved");
    bad = good;
    bad.struct_size = 8;
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 0, 8, in, out, 16, "struct_size");
    bad = good;
    bad.threads = 65;
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 0, 8, in, out, 16, "threads");
    bad = drop_spec(RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DTYPE_BF16, 0.5);
    bad.numel = 5;
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 0, 8, in, out, 16, "numel < first + count");
    bad.numel = 0, bad.sm_count = 0;
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 0, 8, in, out, 16, "sm_count 0");
    bad = drop_spec(RNGTRK_LAYOUT_TRITON, RNGTRK_DTYPE_F32, 0.5);
    range(RNGTRK_E_OVERFLOW, &near63, &bad, 0, 8, in, out, 32, "triton counter reaches 2^63");
    // The last index, not first + count, which is 2^64 here and wrapped to 0 (review finding).
    range(RNGTRK_E_OVERFLOW, &st, &bad, ~uint64_t{0} - 7, 8, in, out, 32, "triton: first + count = 2^64");
    bad.dtype = RNGTRK_DTYPE_F32, bad.distribution = RNGTRK_DIST_UNIFORM, bad.param_a = 0, bad.param_b = 1;
    poisoned();
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_sample(&st, &bad, ~uint64_t{0} - 7, 8, out, 32));
    EXPECT_TRUE(untouched()) << "rngtrk_sample, triton: first + count = 2^64";
    // In place or apart: an input that partly overlaps the output is refused.
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 0, 8, out + 2, out, 16, "in one element past out");
    range(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 0, 8, out, out + 14, 16, "in overlaps out's last element");
    // Nothing to do: NULL buffers are fine.
    range(RNGTRK_OK, &st, &good, 5, 0, nullptr, nullptr, 0, "count 0");

    // Slices.
    const uint64_t g[2] = {4, 4}, st0[2] = {3, 0}, outside[2] = {2, 4}, ok_l[2] = {1, 4}, empty[2] = {0, 4};
    const auto slice = [&](rngtrk_status want, const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                           size_t ndim, const uint64_t *global, const uint64_t *start, const uint64_t *local,
                           const void *i, void *o, size_t cap, const char *what) {
        poisoned();
        EXPECT_STATUS(want, rngtrk_dropout_slice(state, spec, ndim, global, start, local, i, o, cap));
        EXPECT_TRUE(untouched()) << what;
        poisoned();
        EXPECT_STATUS(want == RNGTRK_OK ? cuda_ok : want,
                      rngtrk_cuda_dropout_slice(state, spec, ndim, global, start, local, i, o, cap, nullptr));
        EXPECT_TRUE(untouched()) << what << " (cuda)";
    };
    slice(RNGTRK_E_INVALID_ARGUMENT, nullptr, &good, 2, g, st0, ok_l, in, out, 8, "state NULL");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, nullptr, 2, g, st0, ok_l, in, out, 8, "spec NULL");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 2, g, st0, outside, in, out, 16, "box outside");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 0, g, st0, ok_l, in, out, 8, "ndim 0");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 17, g, st0, ok_l, in, out, 8, "ndim 17");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 2, nullptr, st0, ok_l, in, out, 8, "global NULL");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 2, g, nullptr, ok_l, in, out, 8, "start NULL");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 2, g, st0, nullptr, in, out, 8, "local NULL");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 2, g, st0, ok_l, nullptr, out, 8, "in NULL");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 2, g, st0, ok_l, in, nullptr, 8, "out NULL");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 2, g, st0, ok_l, in + 1, out, 8, "in misaligned");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 2, g, st0, ok_l, in, out + 1, 8, "out misaligned");
    slice(RNGTRK_E_BUFFER_TOO_SMALL, &st, &good, 2, g, st0, ok_l, in, out, 7, "out_capacity short");
    const uint64_t huge[2] = {uint64_t{1} << 40, uint64_t{1} << 40}, zero[2] = {0, 0}, one[2] = {1, 1};
    slice(RNGTRK_E_OVERFLOW, &st, &good, 2, huge, zero, one, in, out, 8, "2^80 elements");
    bad = good;
    bad.dtype = RNGTRK_DTYPE_U8;
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 2, g, st0, ok_l, in, out, 8, "dtype u8");
    bad = good;
    bad.param_a = 2;
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &bad, 2, g, st0, ok_l, in, out, 8, "p = 2");
    bad = drop_spec(RNGTRK_LAYOUT_TRITON, RNGTRK_DTYPE_F16, 0.5);
    slice(RNGTRK_E_OVERFLOW, &near63, &bad, 2, g, st0, ok_l, in, out, 8, "triton counter reaches 2^63");
    slice(RNGTRK_OK, &st, &good, 2, g, st0, empty, nullptr, nullptr, 0, "an empty box");
    slice(RNGTRK_E_INVALID_ARGUMENT, &st, &good, 2, g, st0, ok_l, out + 2, out, 8, "in overlaps out");

    // rngtrk_dropout_f32 still takes f32 data only.
    float f[8] = {};
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dropout_f32(&st, &good, 0, 8, f, f));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "dropout takes f32")) << rngtrk_last_error();
}
