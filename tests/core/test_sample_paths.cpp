// The three sampling engines (scalar, AVX2, AVX-512) give the same bits for
// every layout, distribution and dtype, on odd lengths and unaligned starts;
// and the deterministic math stays close to <cmath>.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "det_math.h"
#include "sample_engines.h"
#include "sample_spec.h"

using namespace rngtrk;

namespace {

std::vector<SampleSpec> all_specs() {
    std::vector<SampleSpec> specs;
    const Layout layouts[] = {Layout::stateless, Layout::nvfuser, Layout::eager_cuda};
    struct K {
        Dist d;
        DType t;
    };
    const K kinds[] = {{Dist::bits, DType::u32},     {Dist::bits, DType::u64},     {Dist::uniform, DType::f32},
                       {Dist::uniform, DType::f64},  {Dist::uniform, DType::f16},  {Dist::uniform, DType::bf16},
                       {Dist::normal, DType::f32},   {Dist::normal, DType::f64},   {Dist::bernoulli, DType::u8},
                       {Dist::dropout, DType::f32}};
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
