// SPDX-License-Identifier: Apache-2.0
// The three sampling engines (scalar, AVX2, AVX-512) give the same bits for
// every layout, distribution and dtype, on odd lengths and unaligned starts;
// the SIMD normal transform (normal_groups.h) in particular, over ranges,
// slices and thread splits, with each engine forced through RNGTRK_CPU; and
// the deterministic math stays close to <cmath>.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "det_math.h"
#include "elements.h"
#include "layouts.h"
#include "sample.h"
#include "sample_engines.h"
#include "sample_spec.h"

using namespace rngtrk;

namespace {

std::vector<SampleSpec> all_specs() {
    std::vector<SampleSpec> specs;
    const Layout layouts[] = {Layout::stateless, Layout::nvfuser, Layout::eager_cuda, Layout::triton};
    struct K {
        Dist d;
        DType t;
    };
    const K kinds[] = {{Dist::bits, DType::u32},     {Dist::bits, DType::u64},     {Dist::uniform, DType::f32},
                       {Dist::uniform, DType::f64},  {Dist::uniform, DType::f16},  {Dist::uniform, DType::bf16},
                       {Dist::normal, DType::f32},   {Dist::normal, DType::f64},   {Dist::normal, DType::f16},
                       {Dist::normal, DType::bf16},  {Dist::bernoulli, DType::u8},  {Dist::dropout, DType::f32},
                       {Dist::dropout, DType::f16},  {Dist::dropout, DType::bf16}};  // dropout: its mask
    for (Layout l : layouts) {
        for (K k : kinds) {
            SampleSpec s;
            s.layout = l, s.dist = k.d, s.dtype = k.t;
            s.low32 = -1.5f, s.high32 = 2.25f, s.range32 = s.high32 - s.low32;
            s.low64 = -1.5, s.high64 = 2.25, s.range64 = 3.75;
            s.mean32 = 0.5f, s.std32 = 2.0f, s.mean64 = 0.5, s.std64 = 2.0, s.p32 = 0.7f;
            s.low16 = k.t == DType::f16 ? det::to_f16_bits(s.low32) : det::to_bf16_bits(s.low32);
            s.high16 = k.t == DType::f16 ? det::to_f16_bits(s.high32) : det::to_bf16_bits(s.high32);
            s.sm_count = 2, s.max_threads_per_sm = 512;  // T = 1024: several slabs below
            specs.push_back(s);
        }
    }
    return specs;
}

size_t width(const SampleSpec &s) { return s.dist == Dist::dropout || s.dist == Dist::bernoulli ? 1 : element_bytes(s.dtype); }

}  // namespace

TEST(SamplePaths, EveryPathGivesTheScalarBits) {
    const CpuPath *scalar = cpu_path_named("scalar");
    ASSERT_NE(nullptr, scalar);
    std::vector<const CpuPath *> others;
    for (const char *name : {"avx2", "avx512"}) {
        if (const CpuPath *p = cpu_path_named(name)) others.push_back(p);
        else std::cout << "[ INFO     ] " << name << " not available on this CPU: not compared\n";
    }
    std::mt19937_64 rng(3);
    for (const SampleSpec &s : all_specs()) {
        for (int trial = 0; trial < 8; ++trial) {
            const PhiloxState st{rng(), 4 * (rng() % 100000)};
            const uint64_t first = trial < 2 ? trial : rng() % 5000;
            const uint64_t count = trial == 0 ? 1 : 1 + rng() % 9000;  // odd lengths, unaligned starts
            const uint64_t numel = first + count + rng() % 3000;
            std::vector<unsigned char> want(count * width(s)), got(count * width(s) + 1, 0xAB);
            scalar->generate(s, st, numel, first, count, want.data());
            for (const CpuPath *p : others) {
                std::fill(got.begin(), got.end(), 0xAB);
                p->generate(s, st, numel, first, count, got.data());
                ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size()))
                    << p->name << " layout " << int(s.layout) << " dist " << int(s.dist) << " dtype " << int(s.dtype)
                    << " first " << first << " count " << count;
                ASSERT_EQ(0xAB, got.back()) << p->name << " wrote past the end";
            }
        }
    }
}

// -- the normal transform on the SIMD engines ---------------------------------

namespace {

// A checked normal spec, as the C API makes it.
SampleSpec normal_spec(Layout layout, DType dtype, double mean, double sd, uint32_t sm_count) {
    SpecFields f;
    f.layout = static_cast<uint32_t>(layout), f.distribution = static_cast<uint32_t>(Dist::normal);
    f.dtype = static_cast<uint32_t>(dtype), f.param_a = mean, f.param_b = sd;
    f.sm_count = sm_count, f.max_threads_per_sm = 512;
    return checked_spec(f, SpecUse::sample);
}

std::vector<SampleSpec> normal_specs() {
    std::vector<SampleSpec> specs;
    const double params[][2] = {{0, 1}, {0.5, 2}, {-3, 0.02}, {1e3, 7.5}};
    int i = 0;
    for (Layout l : {Layout::stateless, Layout::nvfuser, Layout::eager_cuda, Layout::triton})
        for (DType t : {DType::f32, DType::f64, DType::f16, DType::bf16})
            for (const auto &p : params) specs.push_back(normal_spec(l, t, p[0], p[1], 1 + (i++ % 3)));
    return specs;
}

std::string describe(const SampleSpec &s) {
    return "layout " + std::to_string(int(s.layout)) + " dtype " + std::to_string(int(s.dtype)) + " mean " +
           std::to_string(s.mean64) + " std " + std::to_string(s.std64);
}

// Counts around the SIMD group sizes (8, 16, 32 blocks, Philox's 2 chains),
// the engine's batches of 256 blocks, and tails of every length.
const uint64_t kCounts[] = {1, 2, 3, 5, 7, 9, 15, 17, 31, 33, 63, 65, 127, 129, 255, 257, 511, 1023, 1025, 2049, 4095, 4097, 9001, 70001};
const uint64_t kFirsts[] = {0, 1, 2, 3, 5, 127, 1024, 4099, (uint64_t{1} << 33) + 1};

}  // namespace

// Item 4 of issue 30: each SIMD engine's normal output equals the scalar
// engine's, byte for byte, in every layout and dtype, over odd counts,
// unaligned firsts and states whose block counter crosses 2^32.
TEST(NormalPaths, EverySimdEngineGivesTheScalarBits) {
    const CpuPath *scalar = cpu_path_named("scalar");
    ASSERT_NE(nullptr, scalar);
    int engines = 0;
    std::mt19937_64 rng(30);
    for (const char *name : {"avx2", "avx512"}) {
        const CpuPath *p = cpu_path_named(name);
        if (p == nullptr) {
            std::cout << "[ INFO     ] " << name << " not available on this CPU: not compared\n";
            continue;
        }
        ++engines;
        for (const SampleSpec &s : normal_specs()) {
            for (uint64_t count : kCounts) {
                const uint64_t first = kFirsts[rng() % (sizeof kFirsts / sizeof kFirsts[0])];
                // Offsets near 2^34 put the stateless block counter across 2^32 within the range.
                const uint64_t offset = rng() % 3 == 0 ? 4 * ((uint64_t{1} << 32) - 1 - rng() % 64) : 4 * (rng() % 100000);
                const PhiloxState st{rng(), offset};
                const uint64_t numel = first + count + rng() % 3000;
                const size_t w = element_bytes(s.dtype);
                std::vector<unsigned char> want(count * w), got(count * w + 16, 0xAB);
                scalar->generate(s, st, numel, first, count, want.data());
                p->generate(s, st, numel, first, count, got.data());
                ASSERT_EQ(0, std::memcmp(want.data(), got.data(), want.size()))
                    << name << " " << describe(s) << " first " << first << " count " << count << " offset " << offset;
                for (size_t i = want.size(); i < got.size(); ++i) ASSERT_EQ(0xAB, got[i]) << name << " wrote past the end";
            }
        }
    }
    if (engines == 0) GTEST_SKIP() << "this CPU has neither AVX2 nor AVX-512: only the scalar engine exists";
}

// The reference: the baseline engine (whose normal runs on portable
// 4-lane vectors, vec_lanes.h) gives, element by element, what elements.h's
// functions give on plain float and double lanes -- the instantiation the
// CUDA kernels run -- for each element's own block (layouts.h).
TEST(NormalPaths, BaselineEngineGivesTheScalarLanesValues) {
    const CpuPath *scalar = cpu_path_named("scalar");
    std::mt19937_64 rng(32);
    for (const SampleSpec &s : normal_specs()) {
        const uint64_t first = rng() % 50, count = 1 + rng() % 3000, numel = first + count + rng() % 100;
        const PhiloxState st{rng(), 4 * (rng() % 100000)};
        const size_t w = element_bytes(s.dtype);
        std::vector<unsigned char> got(count * w);
        scalar->generate(s, st, numel, first, count, got.data());
        const uint64_t E = elements_per_block(s);
        const uint64_t T = s.layout == Layout::eager_cuda ? eager_launch(s, numel).threads : 0;
        for (uint64_t i = 0; i < count; ++i) {
            unsigned c = 0;
            PhiloxBlock b{};
            switch (s.layout) {
                case Layout::stateless: b = element_block<Layout::stateless>(st.seed, st.offset, first + i, E, T, &c); break;
                case Layout::nvfuser: b = element_block<Layout::nvfuser>(st.seed, st.offset, first + i, E, T, &c); break;
                case Layout::eager_cuda: b = element_block<Layout::eager_cuda>(st.seed, st.offset, first + i, E, T, &c); break;
                case Layout::triton: b = element_block<Layout::triton>(st.seed, st.offset, first + i, E, T, &c); break;
            }
            const uint32_t *v = b.w;
            unsigned char want[8];
            if (s.layout == Layout::triton) {
                if (s.dtype == DType::f64) {
                    const double x = normal_f64_triton(v[0], v[1], v[2], v[3], s.mean64, s.std64);
                    std::memcpy(want, &x, 8);
                } else {
                    const float x = normal_f32_triton(v[0], v[1], s.mean32, s.std32);
                    const uint16_t h = s.dtype == DType::f16 ? det::to_f16_bits(x) : det::to_bf16_bits(x);
                    std::memcpy(want, s.dtype == DType::f32 ? static_cast<const void *>(&x) : &h, w);
                }
            } else {
                const auto pair = [&](auto fn) {  // z0 for an even unit, z1 for an odd one
                    if (s.layout == Layout::stateless) fn(std::integral_constant<Layout, Layout::stateless>());
                    else if (s.layout == Layout::nvfuser) fn(std::integral_constant<Layout, Layout::nvfuser>());
                    else fn(std::integral_constant<Layout, Layout::eager_cuda>());
                };
                pair([&](auto l) {
                    constexpr Layout L = decltype(l)::value;
                    if (s.dtype == DType::f64) {
                        double z[2];
                        normal_f64<L>(v[0], v[1], v[2], v[3], s.mean64, s.std64, &z[0], &z[1]);
                        std::memcpy(want, &z[c], 8);
                    } else if (s.dtype == DType::f32) {
                        float z[2];
                        normal_f32<L>(v[c & ~1u], v[c | 1u], s.mean32, s.std32, &z[0], &z[1]);
                        std::memcpy(want, &z[c & 1], 4);
                    } else {
                        uint16_t z[2];
                        if (s.dtype == DType::f16) normal_16<L, DType::f16>(v[c & ~1u], v[c | 1u], s.mean32, s.std32, &z[0], &z[1]);
                        else normal_16<L, DType::bf16>(v[c & ~1u], v[c | 1u], s.mean32, s.std32, &z[0], &z[1]);
                        std::memcpy(want, &z[c & 1], 2);
                    }
                });
            }
            ASSERT_EQ(0, std::memcmp(want, got.data() + i * w, w)) << describe(s) << " element " << first + i;
        }
    }
}

// The same through the library's entry points (ranges split over threads,
// n-d slices row by row), on the engine RNGTRK_CPU forces: run_all.sh runs
// this once with RNGTRK_CPU=avx2 and once with avx512.
TEST(NormalPaths, ForcedEngineGivesTheScalarBitsForRangesAndSlices) {
    const char *forced = std::getenv("RNGTRK_CPU");
    if (forced == nullptr || std::string(forced) == "scalar")
        GTEST_SKIP() << "RNGTRK_CPU does not force a SIMD engine here (run_all.sh sets it to avx2, then avx512)";
    if (std::string(cpu_path().name) != forced)
        GTEST_SKIP() << "RNGTRK_CPU=" << forced << ", but this CPU lacks it (the library uses " << cpu_path().name << ")";
    const CpuPath *scalar = cpu_path_named("scalar");
    std::mt19937_64 rng(31);
    for (SampleSpec s : normal_specs()) {
        const size_t w = element_bytes(s.dtype);
        // A range of over 2^20 elements on 3 threads, cut at block boundaries.
        s.threads = 3;
        const uint64_t first = rng() % 7, count = (uint64_t{1} << 20) + 1 + rng() % 1000;
        const PhiloxState st{rng(), 4 * (rng() % 1000)};
        std::vector<unsigned char> want(count * w), got(count * w);
        scalar->generate(s, st, first + count, first, count, want.data());
        run_range(check_range(s, first + count, first, count, got.data(), got.size()), st);
        ASSERT_EQ(want, got) << forced << " range " << describe(s);
        // A 3-d box of a tensor.
        s.threads = 2;
        const uint64_t global[3] = {7, 33, 1 + rng() % 70}, start[3] = {1, 2, rng() % global[2]};
        const uint64_t local[3] = {5, 29, 1 + rng() % (global[2] - start[2])};
        const uint64_t numel = global[0] * global[1] * global[2], box = local[0] * local[1] * local[2];
        std::vector<unsigned char> whole(numel * w), slice(box * w);
        scalar->generate(s, st, numel, 0, numel, whole.data());
        run_slice(check_slice(s, 3, global, start, local, slice.data(), slice.size()), st);
        for (uint64_t i = 0; i < box; ++i) {
            const uint64_t a = i / (local[1] * local[2]), b = i / local[2] % local[1], c = i % local[2];
            const uint64_t g = ((start[0] + a) * global[1] + start[1] + b) * global[2] + start[2] + c;
            ASSERT_EQ(0, std::memcmp(slice.data() + i * w, whole.data() + g * w, w))
                << forced << " slice " << describe(s) << " element " << i;
        }
    }
}

TEST(DeterministicMath, CloseToTheStandardLibrary) {
    std::mt19937_64 rng(8);
    double worst_ln = 0, worst_sqrt = 0, worst_sin = 0;
    for (int i = 0; i < 200000; ++i) {
        const float x = std::ldexp(float(rng() % (1u << 24) + 1), -24 - int(rng() % 10));  // (0, 1]
        worst_ln = std::max(worst_ln, std::fabs(double(det::ln(x)) - std::log(double(x))) /
                                          std::max(1e-30, std::fabs(std::log(double(x)))));
        const float y = float(rng() % 1000000) / 1000.0f;
        worst_sqrt = std::max(worst_sqrt, std::fabs(double(det::sqrt(y)) - std::sqrt(double(y))) /
                                              std::max(1e-30, std::sqrt(double(y))));
        const float v = float(rng() % (1u << 24)) * 0x1p-24f;
        float s, c;
        det::sincos_2pi(v, &s, &c);
        const double a = 2 * M_PI * double(v);
        worst_sin = std::max(worst_sin, std::max(std::fabs(s - std::sin(a)), std::fabs(c - std::cos(a))));
    }
    EXPECT_LT(worst_ln, 4e-7);     // a few float ulps
    EXPECT_LT(worst_sqrt, 2e-7);
    EXPECT_LT(worst_sin, 4e-7);    // absolute, on [-1, 1]
    double worst64 = 0;
    for (int i = 0; i < 100000; ++i) {
        const double x = std::ldexp(double(rng() % (uint64_t{1} << 53) + 1), -53);
        worst64 = std::max(worst64, std::fabs(det::ln(x) - std::log(x)) / std::max(1e-300, std::fabs(std::log(x))));
        double s, c;
        const double v = double(rng() % (uint64_t{1} << 53)) * 0x1p-53;
        det::sincos_2pi(v, &s, &c);
        worst64 = std::max(worst64, std::fabs(s - std::sin(2 * M_PI * v)));
        worst64 = std::max(worst64, std::fabs(det::sqrt(x) - std::sqrt(x)) / std::sqrt(x));
    }
    EXPECT_LT(worst64, 1e-15);
    std::cout << "[ INFO     ] worst relative error: ln " << worst_ln << ", sqrt " << worst_sqrt << ", |sincos| "
              << worst_sin << "; double " << worst64 << "\n";
}

TEST(DeterministicMath, HalfAndBfloatBitsWidenExactlyAndRoundTrip) {
    // Every f16 and bf16 pattern: its value (decoded here with ldexp), and
    // back to the same bits (a NaN stays a NaN of the same sign, quieted).
    for (uint32_t h = 0; h <= 0xFFFF; ++h) {
        const uint16_t bits = static_cast<uint16_t>(h);
        const int e = (h >> 10) & 0x1F, m = h & 0x3FF;
        const float sign = h & 0x8000 ? -1.0f : 1.0f;
        const float f16 = det::from_f16_bits(bits), bf16 = det::from_bf16_bits(bits);
        if (e == 0x1F && m != 0) {
            ASSERT_TRUE(std::isnan(f16)) << h;
            ASSERT_EQ(std::signbit(sign), std::signbit(f16)) << h;
            ASSERT_EQ((h & 0x8000u) | 0x7E00u, det::to_f16_bits(f16)) << h;
        } else {
            const float want = e == 0x1F ? sign * INFINITY
                               : e == 0  ? sign * std::ldexp(float(m), -24)
                                         : sign * std::ldexp(float(m | 0x400), e - 25);
            ASSERT_EQ(0, std::memcmp(&want, &f16, 4)) << h;  // -0 included
            ASSERT_EQ(bits, det::to_f16_bits(f16)) << h;
        }
        uint32_t b;
        std::memcpy(&b, &bf16, 4);
        ASSERT_EQ(h << 16, b) << h;
        ASSERT_EQ(std::isnan(bf16) ? (bits | 0x40u) : bits, det::to_bf16_bits(bf16)) << h;
    }
}

TEST(DeterministicMath, HalfConversionsRoundToNearestEven) {
    // Every float that is a half value, and the midpoints between halves.
    for (uint32_t h = 0; h < 0x7C00; ++h) {
        const int e = h >> 10, m = h & 0x3FF;
        const float v = e == 0 ? std::ldexp(float(m), -24) : std::ldexp(float(m | 0x400), e - 25);
        ASSERT_EQ(h, det::to_f16_bits(v)) << h;
        ASSERT_EQ(h | 0x8000u, det::to_f16_bits(-v)) << h;
        if (h + 1 < 0x7C00) {
            const int e2 = (h + 1) >> 10, m2 = (h + 1) & 0x3FF;
            const float next = e2 == 0 ? std::ldexp(float(m2), -24) : std::ldexp(float(m2 | 0x400), e2 - 25);
            const float mid = (v + next) / 2;  // exact in float
            ASSERT_EQ((h & 1) ? h + 1 : h, det::to_f16_bits(mid)) << "midpoint after " << h;
        }
    }
    EXPECT_EQ(0x7C00, det::to_f16_bits(65520.0f));
    EXPECT_EQ(0x7BFF, det::to_f16_bits(65519.0f));
    EXPECT_EQ(0x7E00, det::to_f16_bits(NAN) & 0x7FFF);
    EXPECT_EQ(0x3F80, det::to_bf16_bits(1.0f));
    EXPECT_EQ(0x3F80, det::to_bf16_bits(1.0039062f));  // halfway to 0x3F81: even
    EXPECT_EQ(0x3F82, det::to_bf16_bits(1.01171875f)); // halfway between 0x3F81 and 0x3F82: even
}
