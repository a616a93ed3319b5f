// SPDX-License-Identifier: Apache-2.0
// rngtrk_sample and friends through the C API: the shared vectors (from the
// independent Python reference), a second reference written here from the
// formulas of docs/streams.md with Random123's Philox, slices against cuts of
// the whole tensor, ranges against suffixes, statistics, errors, dropout and
// the tracker-level calls.  make test runs this file once per CPU path
// (RNGTRK_CPU=scalar, avx2, avx512 where the CPU has them).
#include <Random123/philox.h>

#include <algorithm>
#include <cstddef>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "support.h"

using namespace rngtrk_test;

namespace {

const rngtrk_layout kLayouts[] = {RNGTRK_LAYOUT_STATELESS, RNGTRK_LAYOUT_NVFUSER, RNGTRK_LAYOUT_TORCH_EAGER_CUDA,
                                   RNGTRK_LAYOUT_TRITON};

struct Kind {
    rngtrk_distribution dist;
    rngtrk_dtype dtype;
};
const Kind kKinds[] = {{RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32},     {RNGTRK_DIST_BITS, RNGTRK_DTYPE_U64},
                       {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32},  {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F64},
                       {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F16},  {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_BF16},
                       {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32},   {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F64},
                       {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F16},   {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_BF16},
                       {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8}};

size_t bytes_of(rngtrk_dtype t) { return rngtrk_dtype_size(t); }

rngtrk_sample_spec make_spec(rngtrk_layout l, Kind k) {
    rngtrk_sample_spec s;
    EXPECT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&s, l, k.dist, k.dtype)) << rngtrk_last_error();
    return s;
}

std::vector<uint8_t> sample(const rngtrk_philox_state &st, const rngtrk_sample_spec &spec, uint64_t first,
                            uint64_t count) {
    std::vector<uint8_t> out(count * bytes_of(static_cast<rngtrk_dtype>(spec.dtype)) + 1);
    EXPECT_EQ(RNGTRK_OK, rngtrk_sample(&st, &spec, first, count, out.data(), out.size())) << rngtrk_last_error();
    out.pop_back();
    return out;
}

template <class T>
std::vector<T> sample_as(const rngtrk_philox_state &st, const rngtrk_sample_spec &spec, uint64_t first,
                         uint64_t count) {
    std::vector<T> out(count);
    EXPECT_EQ(RNGTRK_OK, rngtrk_sample(&st, &spec, first, count, out.data(), out.size() * sizeof(T)))
        << rngtrk_last_error();
    return out;
}

rngtrk_layout layout_named(const std::string &n) {
    return n == "stateless" ? RNGTRK_LAYOUT_STATELESS
           : n == "nvfuser" ? RNGTRK_LAYOUT_NVFUSER
           : n == "triton"  ? RNGTRK_LAYOUT_TRITON
                            : RNGTRK_LAYOUT_TORCH_EAGER_CUDA;
}
rngtrk_distribution dist_named(const std::string &n) {
    return n == "bits" ? RNGTRK_DIST_BITS
           : n == "uniform" ? RNGTRK_DIST_UNIFORM
           : n == "normal" ? RNGTRK_DIST_NORMAL
                           : RNGTRK_DIST_BERNOULLI;
}
rngtrk_dtype dtype_named(const std::string &n) {
    const char *names[] = {"u8", "u32", "u64", "f16", "bf16", "f32", "f64"};
    for (int i = 0; i < 7; ++i)
        if (n == names[i]) return static_cast<rngtrk_dtype>(i);
    ADD_FAILURE() << "dtype " << n;
    return RNGTRK_DTYPE_U8;
}

uint64_t element_bits(const std::vector<uint8_t> &bytes, size_t i, size_t width) {
    uint64_t v = 0;
    std::memcpy(&v, bytes.data() + i * width, width);  // little-endian host
    return v;
}

const rngtrk_philox_state &st_zero() {
    static const rngtrk_philox_state s{5, 0};
    return s;
}

// --- a reference written from docs/streams.md, with Random123's Philox --------

struct Words {
    uint32_t w[4];
};

Words r123(uint64_t seed, uint64_t c_lo, uint64_t c_hi) {
    r123::Philox4x32 philox;
    const r123::Philox4x32::ctr_type c = {{static_cast<uint32_t>(c_lo), static_cast<uint32_t>(c_lo >> 32),
                                           static_cast<uint32_t>(c_hi), static_cast<uint32_t>(c_hi >> 32)}};
    const r123::Philox4x32::key_type k = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
    const r123::Philox4x32::ctr_type r = philox(c, k);
    return Words{{r[0], r[1], r[2], r[3]}};
}

// Words and unit index of element g (the layout formulas).
Words locate(const rngtrk_sample_spec &s, uint64_t seed, uint64_t offset, uint64_t g, uint64_t numel, unsigned *c) {
    const uint64_t E = s.dtype == RNGTRK_DTYPE_U64 || s.dtype == RNGTRK_DTYPE_F64 ? 2 : 4;
    const uint64_t B = offset / 4;
    if (s.layout == RNGTRK_LAYOUT_TRITON) {  // counter offset + g (the offset itself), word 0
        *c = 0;
        return r123(seed, offset + g, 0);
    }
    if (s.layout == RNGTRK_LAYOUT_STATELESS) {
        *c = static_cast<unsigned>(g % E);
        return r123(seed, B + g / E, 0);
    }
    if (s.layout == RNGTRK_LAYOUT_NVFUSER) {
        *c = static_cast<unsigned>(g % E);
        return r123(seed, B, g / E);
    }
    const uint64_t blocks = (numel + 255) / 256, cap = uint64_t{s.sm_count} * (s.max_threads_per_sm / 256);
    const uint64_t T = 256 * std::max<uint64_t>(1, std::min(blocks, cap)), U = E;
    *c = static_cast<unsigned>((g % (T * U)) / T);
    return r123(seed, B + g / (T * U), g % T);
}

float curand_u(uint32_t w) { return static_cast<float>(w) * 0x1p-32f + 0x1p-33f; }

// Triton's uint_to_uniform_float, as python/triton/language/random.py writes it.
float triton_u(uint32_t w) {
    int32_t x = static_cast<int32_t>(w);
    if (x < 0) x = -(x + 1);
    return static_cast<float>(x) * 4.6566127342e-10f;
}

// Bits of element g for bits, uniform (f32/f64) and bernoulli.
uint64_t reference_bits(const rngtrk_sample_spec &s, uint64_t seed, uint64_t offset, uint64_t g, uint64_t numel) {
    unsigned c;
    const Words w = locate(s, seed, offset, g, numel, &c);
    const bool triton = s.layout == RNGTRK_LAYOUT_TRITON;
    const bool curand = s.layout != RNGTRK_LAYOUT_STATELESS && !triton;
    switch (s.dtype) {
        case RNGTRK_DTYPE_U32: return w.w[c];
        case RNGTRK_DTYPE_U64: return uint64_t{w.w[2 * c]} << 32 | w.w[2 * c + 1];
        case RNGTRK_DTYPE_U8: {
            float u = triton ? triton_u(w.w[c])
                      : curand ? curand_u(w.w[c]) : static_cast<float>(w.w[c] & 0xFFFFFF) / 16777216.0f;
            if (u == 1.0f) u = 0.0f;
            return u < static_cast<float>(s.param_a) ? 1 : 0;
        }
        case RNGTRK_DTYPE_F32: {
            const float low = static_cast<float>(s.param_a), high = static_cast<float>(s.param_b);
            float u = triton ? triton_u(w.w[c])
                      : curand ? curand_u(w.w[c]) : static_cast<float>(w.w[c] & 0xFFFFFF) / 16777216.0f;
            if (s.layout == RNGTRK_LAYOUT_NVFUSER && u == 1.0f) u = 0.0f;
            // torch-eager-cuda rounds once (PyTorch's kernel is contracted
            // to a fused multiply-add); the others round the product first.
            volatile float prod = u * (high - low);  // volatile: no fused multiply-add
            float v = s.layout == RNGTRK_LAYOUT_TORCH_EAGER_CUDA ? std::fma(u, high - low, low) : low + prod;
            if (s.layout == RNGTRK_LAYOUT_TORCH_EAGER_CUDA && v == high) v = low;
            uint32_t b;
            std::memcpy(&b, &v, 4);
            return b;
        }
        case RNGTRK_DTYPE_F64: {
            const uint32_t a = w.w[2 * c], b2 = w.w[2 * c + 1];
            double u;
            if (!curand) u = static_cast<double>((uint64_t{a} << 32 | b2) & ((uint64_t{1} << 53) - 1)) / 9007199254740992.0;
            else u = static_cast<double>(uint64_t{a} ^ (uint64_t{b2} << 21)) * 0x1p-53 + 0x1p-54;
            if (s.layout == RNGTRK_LAYOUT_NVFUSER && u == 1.0) u = 0.0;
            volatile double prod = u * (s.param_b - s.param_a);
            double v = s.layout == RNGTRK_LAYOUT_TORCH_EAGER_CUDA ? std::fma(u, s.param_b - s.param_a, s.param_a)
                                                                 : s.param_a + prod;
            if (s.layout == RNGTRK_LAYOUT_TORCH_EAGER_CUDA && v == s.param_b) v = s.param_a;
            uint64_t bits;
            std::memcpy(&bits, &v, 8);
            return bits;
        }
        default: ADD_FAILURE() << "no reference for dtype " << s.dtype; return 0;
    }
}

}  // namespace

TEST(Sample, SharedVectorsFromThePythonReference) {
    std::istringstream lines(read_text(vector_path("sample_vectors.txt")));
    std::string line;
    int samples = 0, increments = 0;
    while (std::getline(lines, line)) {
        std::istringstream f(line);
        std::string what, layout, dist, dtype;
        f >> what;
        if (what == "sample") {
            uint64_t seed, offset, first, count, numel;
            double a, b;
            uint32_t sm, threads;
            f >> layout >> dist >> dtype >> seed >> offset >> first >> count >> a >> b >> sm >> threads >> numel;
            rngtrk_sample_spec s;
            ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, layout_named(layout), dist_named(dist), dtype_named(dtype)));
            s.param_a = a, s.param_b = b, s.sm_count = sm, s.max_threads_per_sm = threads, s.numel = numel;
            const size_t width = bytes_of(static_cast<rngtrk_dtype>(s.dtype));
            const std::vector<uint8_t> got = sample({seed, offset}, s, first, count);
            for (uint64_t i = 0; i < count; ++i) {
                std::string hex;
                f >> hex;
                ASSERT_EQ(std::stoull(hex, nullptr, 16), element_bits(got, i, width))
                    << line.substr(0, 90) << "... element " << i << " (path " << rngtrk_cpu_path() << ")";
            }
            ++samples;
        } else if (what == "increment") {
            uint64_t numel, expected, got = 0;
            f >> layout >> dist >> dtype >> numel >> expected;
            rngtrk_sample_spec s;
            ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, layout_named(layout), dist_named(dist), dtype_named(dtype)));
            ASSERT_OK(rngtrk_sample_offset_increment(&s, numel, &got));
            EXPECT_EQ(expected, got) << line;
            ++increments;
        }
    }
    EXPECT_GE(samples, 150);
    EXPECT_GE(increments, 50);
}

TEST(Sample, BitsUniformAndBernoulliMatchAReferenceWrittenFromTheFormulas) {
    std::mt19937_64 rng(77);
    const Kind kinds[] = {{RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32},
                          {RNGTRK_DIST_BITS, RNGTRK_DTYPE_U64},
                          {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32},
                          {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F64},
                          {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8}};
    for (rngtrk_layout layout : kLayouts) {
        for (Kind k : kinds) {
            for (int trial = 0; trial < 6; ++trial) {
                rngtrk_sample_spec s = make_spec(layout, k);
                if (k.dist == RNGTRK_DIST_UNIFORM) s.param_a = -2.5, s.param_b = 7.0;
                if (k.dist == RNGTRK_DIST_BERNOULLI) s.param_a = 0.3;
                if (trial % 2) s.sm_count = 1 + rng() % 3, s.max_threads_per_sm = 256 * (1 + rng() % 2);
                const uint64_t seed = rng(), offset = (rng() % 1000000) * 4;
                const uint64_t first = rng() % 3000, count = 1 + rng() % 5000;
                s.numel = layout == RNGTRK_LAYOUT_TORCH_EAGER_CUDA ? first + count + rng() % 4000 : 0;
                const std::vector<uint8_t> got = sample({seed, offset}, s, first, count);
                const size_t width = bytes_of(k.dtype);
                for (uint64_t i = 0; i < count; ++i)
                    ASSERT_EQ(reference_bits(s, seed, offset, first + i, s.numel), element_bits(got, i, width))
                        << "layout " << layout << " dtype " << k.dtype << " element " << first + i;
            }
        }
    }
}

TEST(Sample, StatelessU32AndUniformF32AreTheCoreStream) {
    const rngtrk_philox_state st{99, 4000};
    std::vector<uint32_t> stream(777), words = sample_as<uint32_t>(st, make_spec(RNGTRK_LAYOUT_STATELESS, kKinds[0]), 5, 777);
    ASSERT_OK(rngtrk_random_u32(&st, 5, stream.size(), stream.data()));
    EXPECT_EQ(stream, words);
    std::vector<float> f(777);
    ASSERT_OK(rngtrk_uniform_f32(&st, 5, f.size(), f.data()));
    EXPECT_EQ(f, sample_as<float>(st, make_spec(RNGTRK_LAYOUT_STATELESS, kKinds[2]), 5, 777));
}

// Normal f16 and bf16 are the f32 normal's value (mean + std * z computed
// in float) rounded to nearest even, element for element, in every layout,
// with the f32 normal's offset increment -- what drawing f32 and converting
// with torch's .to(float16) or .to(bfloat16) gives.
TEST(Sample, NormalHalfTypesAreTheF32ValueRounded) {
    std::mt19937_64 rng(30);
    const double params[][2] = {{0, 1}, {0.5, 2}, {-3, 0.02}, {1e4, 300}, {0, 1e-6}, {2, 0}};
    for (rngtrk_layout layout : kLayouts) {
        for (const auto &p : params) {
            rngtrk_sample_spec f32 = make_spec(layout, {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32});
            f32.param_a = p[0], f32.param_b = p[1], f32.sm_count = 3, f32.max_threads_per_sm = 512;
            const uint64_t first = rng() % 5000, count = 1 + rng() % 20000;
            f32.numel = first + count + rng() % 1000;
            const rngtrk_philox_state st{rng(), 4 * (rng() % 1000000)};
            const std::vector<float> want = sample_as<float>(st, f32, first, count);
            for (rngtrk_dtype dt : {RNGTRK_DTYPE_F16, RNGTRK_DTYPE_BF16}) {
                rngtrk_sample_spec h = f32;
                h.dtype = dt;
                uint64_t inc32 = 0, inc16 = 0;
                ASSERT_OK(rngtrk_sample_offset_increment(&f32, f32.numel, &inc32));
                ASSERT_OK(rngtrk_sample_offset_increment(&h, h.numel, &inc16));
                EXPECT_EQ(inc32, inc16);
                const std::vector<uint16_t> got = sample_as<uint16_t>(st, h, first, count);
                for (uint64_t i = 0; i < count; ++i) {
                    const uint16_t oracle = dt == RNGTRK_DTYPE_BF16 ? bf16_nearest(want[i]) : f16_nearest(want[i]);
                    ASSERT_EQ(oracle, got[i]) << "layout " << layout << " dtype " << dt << " mean " << p[0] << " std "
                                              << p[1] << " element " << first + i << " of value " << want[i];
                }
            }
        }
    }
}

TEST(Sample, ARangeEqualsTheSuffixOfALongerCall) {
    std::mt19937_64 rng(5);
    for (rngtrk_layout layout : kLayouts) {
        for (Kind k : kKinds) {
            rngtrk_sample_spec s = make_spec(layout, k);
            s.numel = 6000;  // the eager tensor is fixed, so its launch is too
            const rngtrk_philox_state st{rng(), 8};
            const std::vector<uint8_t> whole = sample(st, s, 0, 6000);
            const size_t w = bytes_of(k.dtype);
            for (uint64_t first : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{1023}, uint64_t{1025}, uint64_t{4097}}) {
                const uint64_t count = 6000 - first - rng() % 100;
                const std::vector<uint8_t> part = sample(st, s, first, count);
                ASSERT_TRUE(std::equal(part.begin(), part.end(), whole.begin() + first * w))
                    << "layout " << layout << " dtype " << k.dtype << " first " << first;
            }
        }
    }
}

TEST(Sample, SlicesEqualTheCutOfTheWholeTensor) {
    std::mt19937_64 rng(11);
    for (int trial = 0; trial < 60; ++trial) {
        const rngtrk_layout layout = kLayouts[trial % 3];
        const Kind k = kKinds[rng() % (sizeof kKinds / sizeof kKinds[0])];
        const rngtrk_sample_spec s = make_spec(layout, k);
        const size_t ndim = 1 + rng() % 4;
        uint64_t global[4], start[4], local[4], numel = 1;
        for (size_t d = 0; d < ndim; ++d) {
            global[d] = 1 + rng() % (ndim == 1 ? 3000 : ndim == 2 ? 60 : 13);
            start[d] = rng() % global[d];
            local[d] = rng() % 4 == 0 ? global[d] - start[d] : 1 + rng() % (global[d] - start[d]);  // touch edges too
            if (rng() % 5 == 0) start[d] = 0, local[d] = global[d];
            numel *= global[d];
        }
        const rngtrk_philox_state st{rng(), 4 * (rng() % 100)};
        rngtrk_sample_spec whole_spec = s;
        whole_spec.numel = numel;
        const std::vector<uint8_t> whole = sample(st, whole_spec, 0, numel);
        uint64_t box = 1;
        for (size_t d = 0; d < ndim; ++d) box *= local[d];
        const size_t w = bytes_of(k.dtype);
        std::vector<uint8_t> got(box * w);
        ASSERT_OK(rngtrk_sample_slice(&st, &s, ndim, global, start, local, got.data(), got.size()));
        for (uint64_t i = 0; i < box; ++i) {
            uint64_t rem = i, g = 0, idx[4];
            for (size_t d = ndim; d-- > 0;) idx[d] = rem % local[d], rem /= local[d];
            for (size_t d = 0; d < ndim; ++d) g = g * global[d] + start[d] + idx[d];
            ASSERT_EQ(0, std::memcmp(got.data() + i * w, whole.data() + g * w, w))
                << "trial " << trial << " layout " << layout << " ndim " << ndim << " element " << i;
        }
    }
}

TEST(Sample, StatisticsOfAMillionSamples) {
    constexpr size_t n = 1000000;
    for (rngtrk_layout layout : kLayouts) {
        const rngtrk_philox_state st{2026, 0};
        // Uniform f32 in [-1, 3): mean 1, variance 16/12, and a KS distance.
        rngtrk_sample_spec u = make_spec(layout, {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32});
        u.param_a = -1, u.param_b = 3;
        std::vector<float> x = sample_as<float>(st, u, 0, n);
        double mean = 0, var = 0;
        for (float v : x) mean += v;
        mean /= n;
        for (float v : x) var += (v - mean) * (v - mean);
        var /= n;
        EXPECT_NEAR(1.0, mean, 0.006) << layout;
        EXPECT_NEAR(16.0 / 12, var, 0.006) << layout;
        std::sort(x.begin(), x.end());
        double ks = 0;
        for (size_t i = 0; i < n; ++i) ks = std::max(ks, std::fabs((x[i] + 1) / 4 - (i + 0.5) / n));
        EXPECT_LT(ks, 1.63 / std::sqrt(double(n))) << "uniform KS, layout " << layout;
        EXPECT_GE(x.front(), -1.0f);
        EXPECT_LT(x.back(), 3.0f);
        // Normal f32 and f64 (mean 2, std 3), KS against the normal CDF.
        for (rngtrk_dtype dt : {RNGTRK_DTYPE_F32, RNGTRK_DTYPE_F64}) {
            rngtrk_sample_spec g = make_spec(layout, {RNGTRK_DIST_NORMAL, dt});
            g.param_a = 2, g.param_b = 3;
            std::vector<double> z(n);
            if (dt == RNGTRK_DTYPE_F32) {
                const std::vector<float> zf = sample_as<float>(st, g, 0, n);
                std::copy(zf.begin(), zf.end(), z.begin());
            } else {
                z = sample_as<double>(st, g, 0, n);
            }
            double m = 0, v = 0;
            for (double t : z) m += t;
            m /= n;
            for (double t : z) v += (t - m) * (t - m);
            v /= n;
            EXPECT_NEAR(2.0, m, 0.012) << layout << " " << dt;
            EXPECT_NEAR(9.0, v, 0.04) << layout << " " << dt;
            std::sort(z.begin(), z.end());
            double d = 0;
            for (size_t i = 0; i < n; ++i)
                d = std::max(d, std::fabs(0.5 * std::erfc(-(z[i] - 2) / 3 / std::sqrt(2.0)) - (i + 0.5) / n));
            EXPECT_LT(d, 1.63 / std::sqrt(double(n))) << "normal KS, layout " << layout << " dtype " << dt;
        }
        // Normal f16 (mean 2, std 3) and bf16 (mean 0, std 1): the moments,
        // within what rounding to 11 or 8 significant bits allows.
        for (rngtrk_dtype dt : {RNGTRK_DTYPE_F16, RNGTRK_DTYPE_BF16}) {
            rngtrk_sample_spec g = make_spec(layout, {RNGTRK_DIST_NORMAL, dt});
            const double mu = dt == RNGTRK_DTYPE_F16 ? 2 : 0, sigma = dt == RNGTRK_DTYPE_F16 ? 3 : 1;
            g.param_a = mu, g.param_b = sigma;
            const std::vector<uint16_t> h = sample_as<uint16_t>(st, g, 0, n);
            double m = 0, v = 0;
            for (uint16_t bits : h) {
                float t;
                if (dt == RNGTRK_DTYPE_BF16) {
                    const uint32_t w = uint32_t{bits} << 16;
                    std::memcpy(&t, &w, 4);
                } else {
                    const int e = (bits >> 10) & 0x1F, mant = bits & 0x3FF;
                    t = std::ldexp(float(e == 0 ? mant : mant | 0x400), e == 0 ? -24 : e - 25) * (bits & 0x8000 ? -1 : 1);
                }
                m += t, v += double(t) * t;
            }
            m /= n, v = v / n - m * m;
            EXPECT_NEAR(mu, m, 0.012 * sigma) << layout << " " << dt;
            EXPECT_NEAR(sigma * sigma, v, 0.01 * sigma * sigma) << layout << " " << dt;
        }
        // Bernoulli p = 0.3: the kept fraction.
        rngtrk_sample_spec b = make_spec(layout, {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8});
        b.param_a = 0.3;
        const std::vector<uint8_t> mask = sample_as<uint8_t>(st, b, 0, n);
        size_t kept = 0;
        for (uint8_t k : mask) kept += k;
        EXPECT_TRUE(std::all_of(mask.begin(), mask.end(), [](uint8_t k) { return k <= 1; }));
        EXPECT_NEAR(0.3, double(kept) / n, 0.0014) << layout;
        // f16 and bf16 uniforms stay in [0, 1), except that nvFuser's float
        // uniform can round up to 1.0 when converted (as nvFuser's does).
        for (rngtrk_dtype dt : {RNGTRK_DTYPE_F16, RNGTRK_DTYPE_BF16}) {
            const std::vector<uint16_t> h = sample_as<uint16_t>(st, make_spec(layout, {RNGTRK_DIST_UNIFORM, dt}), 0, 100000);
            const uint16_t one = dt == RNGTRK_DTYPE_F16 ? 0x3C00 : 0x3F80;
            for (uint16_t bits : h) {
                if (layout == RNGTRK_LAYOUT_NVFUSER) ASSERT_LE(bits, one);
                else ASSERT_LT(bits, one) << layout;
            }
        }
    }
}

TEST(Sample, DropoutScalesKeptValuesAndZeroesTheRest) {
    for (rngtrk_layout layout : kLayouts) {
        rngtrk_sample_spec mask_spec = make_spec(layout, {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8});
        mask_spec.param_a = 0.8;
        mask_spec.numel = 50000;
        rngtrk_sample_spec drop = mask_spec;
        drop.dtype = RNGTRK_DTYPE_F32;
        const rngtrk_philox_state st{31, 12};
        std::vector<float> in(40000), out(40000);
        for (size_t i = 0; i < in.size(); ++i) in[i] = 0.001f * i - 7;
        ASSERT_OK(rngtrk_dropout_f32(&st, &drop, 17, in.size(), in.data(), out.data()));
        const std::vector<uint8_t> mask = sample_as<uint8_t>(st, mask_spec, 17, in.size());
        const float scale = 1.0f / 0.8f;
        for (size_t i = 0; i < in.size(); ++i) ASSERT_EQ(mask[i] ? in[i] * scale : 0.0f, out[i]) << i;
        // In place gives the same.
        std::vector<float> inout = in;
        ASSERT_OK(rngtrk_dropout_f32(&st, &drop, 17, inout.size(), inout.data(), inout.data()));
        EXPECT_EQ(out, inout);
    }
}

TEST(Sample, OffsetIncrements) {
    uint64_t inc = 0;
    rngtrk_sample_spec s = make_spec(RNGTRK_LAYOUT_STATELESS, kKinds[2]);
    ASSERT_OK(rngtrk_sample_offset_increment(&s, 10, &inc));
    EXPECT_EQ(12u, inc);
    s = make_spec(RNGTRK_LAYOUT_STATELESS, kKinds[3]);  // f64: 2 per block
    ASSERT_OK(rngtrk_sample_offset_increment(&s, 5, &inc));
    EXPECT_EQ(12u, inc);
    s = make_spec(RNGTRK_LAYOUT_NVFUSER, kKinds[2]);
    ASSERT_OK(rngtrk_sample_offset_increment(&s, 123456789, &inc));
    EXPECT_EQ(4u, inc);
    // An H100 (132 SMs x 2048 threads): T = 270336, U = 4.
    s = make_spec(RNGTRK_LAYOUT_TORCH_EAGER_CUDA, kKinds[2]);
    ASSERT_OK(rngtrk_sample_offset_increment(&s, 270336 * 4, &inc));
    EXPECT_EQ(4u, inc);
    ASSERT_OK(rngtrk_sample_offset_increment(&s, 270336 * 4 + 1, &inc));
    EXPECT_EQ(8u, inc);
    ASSERT_OK(rngtrk_sample_offset_increment(&s, 0, &inc));
    EXPECT_EQ(0u, inc);
}

TEST(Sample, Errors) {
    const rngtrk_philox_state st{1, 0}, misaligned{1, 2};
    rngtrk_sample_spec s;
    float out[8];
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample_spec_init(nullptr, sizeof(rngtrk_sample_spec), RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BITS, RNGTRK_DTYPE_F32));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_U8));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_U32));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, RNGTRK_SAMPLE_SPEC_INIT(&s, static_cast<rngtrk_layout>(7), RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, static_cast<rngtrk_distribution>(9), RNGTRK_DTYPE_U32));
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(nullptr, &s, 0, 8, out, sizeof out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, nullptr, 0, 8, out, sizeof out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&misaligned, &s, 0, 8, out, sizeof out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &s, 0, 8, nullptr, sizeof out));
    EXPECT_STATUS(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_sample(&st, &s, 0, 8, out, sizeof out - 1));
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_sample(&st, &s, ~uint64_t{0}, 2, out, sizeof out));
    ASSERT_OK(rngtrk_sample(&st, &s, 0, 0, nullptr, 0));
    rngtrk_sample_spec bad = s;
    bad.param_a = 2, bad.param_b = 1;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &bad, 0, 8, out, sizeof out));
    bad.param_a = NAN;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &bad, 0, 8, out, sizeof out));
    bad = s;
    bad.struct_size = 8;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &bad, 0, 8, out, sizeof out));
    bad = s;
    bad.dtype = RNGTRK_DTYPE_U32;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &bad, 0, 8, out, sizeof out));
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32));
    s.param_b = -1;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &s, 0, 8, out, sizeof out));
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
    s.param_a = 1.5;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &s, 0, 8, out, sizeof out));
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    s.numel = 5;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &s, 0, 8, out, sizeof out));
    s.numel = 0, s.sm_count = 0;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &s, 0, 8, out, sizeof out));
    // torch-eager-cuda holds f16 bounds as f16 (PyTorch's rule): 7e4 is past
    // f16's largest value, so the draw is refused (bf16 reaches 3.4e38).
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F16));
    s.param_a = -1e3, s.param_b = 7e4;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &s, 0, 8, out, sizeof out));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "overflows f16")) << rngtrk_last_error();
    s.param_b = 6e4;
    ASSERT_OK(rngtrk_sample(&st, &s, 0, 8, out, sizeof out));
    s.dtype = RNGTRK_DTYPE_BF16, s.param_b = 7e4;
    ASSERT_OK(rngtrk_sample(&st, &s, 0, 8, out, sizeof out));
    // Dropout needs BERNOULLI with dtype F32; a mask spec is refused.
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dropout_f32(&st, &s, 0, 8, out, out));
    s.dtype = RNGTRK_DTYPE_F32;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dropout_f32(&st, &s, 0, 8, nullptr, out));
    ASSERT_OK(rngtrk_dropout_f32(&st, &s, 0, 8, out, out));
    // Slices.
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    const uint64_t g[2] = {4, 4}, st0[2] = {3, 0}, l[2] = {2, 4}, ok_l[2] = {1, 4};
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample_slice(&st, &s, 2, g, st0, l, out, sizeof out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample_slice(&st, &s, 0, g, st0, ok_l, out, sizeof out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample_slice(&st, &s, 17, g, st0, ok_l, out, sizeof out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample_slice(&st, &s, 2, nullptr, st0, ok_l, out, sizeof out));
    EXPECT_STATUS(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_sample_slice(&st, &s, 2, g, st0, ok_l, out, 15));
    ASSERT_OK(rngtrk_sample_slice(&st, &s, 2, g, st0, ok_l, out, 16));
    const uint64_t huge[2] = {uint64_t{1} << 40, uint64_t{1} << 40}, zero[2] = {0, 0}, one[2] = {1, 1};
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_sample_slice(&st, &s, 2, huge, zero, one, out, sizeof out));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample_offset_increment(&s, 5, nullptr));
}

TEST(Sample, TrackerDrawsAdvanceByWhatTheLayoutConsumes) {
    for (rngtrk_layout layout : kLayouts) {
        for (Kind k : kKinds) {
            TrackerPtr t = new_tracker();
            ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 555));
            ASSERT_OK(rngtrk_tracker_add(t.get(), "model-parallel-rng", 3));
            ASSERT_OK(rngtrk_tracker_fork(t.get(), "model-parallel-rng"));
            const rngtrk_sample_spec s = make_spec(layout, k);
            const uint64_t count = 1001;
            std::vector<uint8_t> got(count * bytes_of(k.dtype));
            rngtrk_philox_state before, after;
            ASSERT_OK(rngtrk_tracker_sample(t.get(), &s, count, got.data(), got.size(), &before));
            EXPECT_EQ(3u, before.seed);
            EXPECT_EQ(0u, before.offset);
            rngtrk_sample_spec fixed = s;
            fixed.numel = count;
            EXPECT_EQ(sample(before, fixed, 0, count), got);
            uint64_t inc;
            ASSERT_OK(rngtrk_sample_offset_increment(&s, count, &inc));
            ASSERT_OK(rngtrk_tracker_active_state(t.get(), &after));
            EXPECT_EQ(inc, after.offset);
            // A buffer that is too small changes nothing.
            const Snapshot snap = snapshot(t.get());
            EXPECT_STATUS(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_tracker_sample(t.get(), &s, count, got.data(), got.size() - 1, nullptr));
            EXPECT_TRUE(snap == snapshot(t.get()));
        }
    }
}

TEST(Sample, TrackerSlicesAdvanceEveryRankAlikeAndRebuildTheTensor) {
    // Four "ranks" hold the four 3x5 quadrants of a 6x10 tensor.
    for (rngtrk_layout layout : kLayouts) {
        const rngtrk_sample_spec s = make_spec(layout, {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32});
        const uint64_t global[2] = {6, 10}, local[2] = {3, 5};
        rngtrk_sample_spec whole_spec = s;
        whole_spec.numel = 60;
        const std::vector<float> whole = sample_as<float>({9, 0}, whole_spec, 0, 60);
        rngtrk_philox_state end{};
        for (uint64_t r = 0; r < 4; ++r) {
            TrackerPtr t = new_tracker();
            ASSERT_OK(rngtrk_tracker_manual_seed(t.get(), 9));
            const uint64_t start[2] = {3 * (r / 2), 5 * (r % 2)};
            float box[15];
            ASSERT_OK(rngtrk_tracker_sample_slice(t.get(), &s, 2, global, start, local, box, sizeof box, nullptr));
            for (uint64_t i = 0; i < 15; ++i)
                ASSERT_EQ(whole[(start[0] + i / 5) * 10 + start[1] + i % 5], box[i]) << "rank " << r;
            rngtrk_philox_state a;
            ASSERT_OK(rngtrk_tracker_active_state(t.get(), &a));
            if (r > 0) {
                EXPECT_TRUE(a.offset == end.offset && a.seed == end.seed);
            }
            end = a;
        }
        uint64_t inc;
        ASSERT_OK(rngtrk_sample_offset_increment(&s, 60, &inc));
        EXPECT_EQ(inc, end.offset);
    }
}

TEST(Sample, TrackerDropoutAndOverflowLeaveNothingHalfDone) {
    TrackerPtr t = new_tracker();
    const rngtrk_philox_state near_end{4, ~uint64_t{0} - 7};
    ASSERT_OK(rngtrk_tracker_set_default(t.get(), &near_end));
    rngtrk_sample_spec s;
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
    s.dtype = RNGTRK_DTYPE_F32;
    std::vector<float> in(100, 1.0f), out(100, -1.0f);
    const Snapshot snap = snapshot(t.get());
    EXPECT_STATUS(RNGTRK_E_OVERFLOW, rngtrk_tracker_dropout_f32(t.get(), &s, 100, in.data(), out.data(), nullptr));
    EXPECT_TRUE(snap == snapshot(t.get()));
    EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](float v) { return v == -1.0f; }));
    rngtrk_philox_state before;
    ASSERT_OK(rngtrk_tracker_dropout_f32(t.get(), &s, 4, in.data(), out.data(), &before));  // the last 4 left
    EXPECT_EQ(near_end.offset, before.offset);
    std::vector<float> again(4);
    ASSERT_OK(rngtrk_dropout_f32(&before, &s, 0, 4, in.data(), again.data()));
    EXPECT_TRUE(std::equal(again.begin(), again.end(), out.begin()));
}

TEST(Sample, CpuPathHonoursTheEnvironment) {
    const char *forced = std::getenv("RNGTRK_CPU");
    const std::string path = rngtrk_cpu_path();
    EXPECT_TRUE(path == "scalar" || path == "avx2" || path == "avx512") << path;
    if (forced != nullptr && std::string(forced) == "scalar") {
        EXPECT_EQ("scalar", path);
    }
    std::cout << "[ INFO     ] CPU path: " << path << (forced ? std::string(" (RNGTRK_CPU=") + forced + ")" : "") << "\n";
}

TEST(Sample, TorchEagerCudaReproducesPublishedTorchRandOutputs) {
    // What torch.manual_seed(0); torch.rand(...) prints on NVIDIA GPUs (4
    // decimals), as published in public code and docs.
    rngtrk_sample_spec s = make_spec(RNGTRK_LAYOUT_TORCH_EAGER_CUDA, {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32});
    const auto near4 = [](const std::vector<float> &got, const std::vector<double> &printed) {
        ASSERT_EQ(printed.size(), got.size());
        for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(printed[i], got[i], 0.00005) << "element " << i;
    };
    // torch.rand(8, device="cuda")
    near4(sample_as<float>({0, 0}, s, 0, 8), {0.3990, 0.5167, 0.0249, 0.9401, 0.9459, 0.7967, 0.4150, 0.8203});
    // torch.rand(3, 3) twice: the first call of 9 elements consumed offset 4.
    uint64_t inc = 0;
    ASSERT_OK(rngtrk_sample_offset_increment(&s, 9, &inc));
    EXPECT_EQ(4u, inc);
    near4(sample_as<float>({0, inc}, s, 0, 3), {0.9722, 0.7910, 0.4690});
    // torch.rand(10000, 10000): the end of row 0 and the start of row 1
    // (threads 9997..10002 of the first slab on any recent GPU).
    s.numel = 100000000;
    near4(sample_as<float>({0, 0}, s, 9997, 6), {0.9971, 0.8137, 0.0429, 0.1117, 0.5124, 0.6413});
}

TEST(Sample, ThreadsGiveTheSameBits) {
    for (rngtrk_layout layout : kLayouts) {
        for (Kind k : {Kind{RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32}, Kind{RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F64},
                       Kind{RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F16}}) {
            rngtrk_sample_spec one = make_spec(layout, k), many = one;
            EXPECT_EQ(1u, one.threads);
            many.threads = 3;
            const uint64_t n = (uint64_t{1} << 20) + 12345;  // above the threshold, uneven parts
            one.numel = many.numel = n + 7;
            const rngtrk_philox_state st{17, 400};
            EXPECT_EQ(sample(st, one, 7, n), sample(st, many, 7, n)) << "layout " << layout;
        }
        // Slices split their rows; dropout its range.
        rngtrk_sample_spec s = make_spec(layout, {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32}), s4 = s;
        s4.threads = 4;
        const uint64_t global[2] = {3000, 700}, start[2] = {11, 5}, local[2] = {2000, 600};
        std::vector<float> a(2000 * 600), b(a.size());
        ASSERT_OK(rngtrk_sample_slice(&st_zero(), &s, 2, global, start, local, a.data(), a.size() * 4));
        ASSERT_OK(rngtrk_sample_slice(&st_zero(), &s4, 2, global, start, local, b.data(), b.size() * 4));
        EXPECT_EQ(a, b);
        rngtrk_sample_spec d = make_spec(layout, {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8});
        d.dtype = RNGTRK_DTYPE_F32, d.numel = a.size() + 3;
        rngtrk_sample_spec d2 = d;
        d2.threads = 2;
        std::vector<float> x(a.size()), y(a.size());
        ASSERT_OK(rngtrk_dropout_f32(&st_zero(), &d, 3, a.size(), a.data(), x.data()));
        ASSERT_OK(rngtrk_dropout_f32(&st_zero(), &d2, 3, a.size(), a.data(), y.data()));
        EXPECT_EQ(x, y);
    }
    rngtrk_sample_spec bad = make_spec(RNGTRK_LAYOUT_STATELESS, kKinds[0]);
    bad.threads = 65;
    uint32_t out[4];
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st_zero(), &bad, 0, 4, out, sizeof out));
}

TEST(Sample, AnOlderSmallerSpecTakesTheDefaultsOfLaterFields) {
    // A caller compiled before `threads` existed passes a shorter struct.
    rngtrk_sample_spec s = make_spec(RNGTRK_LAYOUT_STATELESS, kKinds[0]);
    s.threads = 9999;  // beyond what the old struct_size covers: must be ignored
    s.struct_size = offsetof(rngtrk_sample_spec, threads);
    std::vector<uint32_t> a(100), b(100);
    ASSERT_OK(rngtrk_sample(&st_zero(), &s, 0, 100, a.data(), 400));
    ASSERT_OK(rngtrk_random_u32(&st_zero(), 0, 100, b.data()));
    EXPECT_EQ(a, b);
}
