// Deterministic math for the distributions: natural log, square root and
// sin/cos of 2*pi*v, written with nothing but +, -, *, comparisons, selects
// and exact bit manipulation.  No division, no library call, no fma: every
// operation is a single IEEE-754 rounding that the scalar path, the SIMD
// paths (auto-vectorised from this same code) and CUDA all perform alike,
// so they produce the same bits.  The library builds with -ffp-contract=off
// so the compiler cannot fuse a multiply and an add behind our back.
//
// Accuracy (checked in the tests against <cmath>): within a few units in the
// last place on the ranges used here; they are not correctly rounded.
#pragma once

#include <cstdint>

// Full unrolling of the short fixed loops below keeps them free of branches,
// so the compiler can vectorise whole Box-Muller transforms.
#if defined(__CUDACC__) || defined(__clang__)
#define RNGTRK_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define RNGTRK_UNROLL _Pragma("GCC unroll 32")
#else
#define RNGTRK_UNROLL
#endif
#include <cstring>

#include "hd.h"

namespace rngtrk {
namespace det {
// Internal linkage on purpose: the sampling engines include this header in
// files compiled for different CPUs (AVX2, AVX-512); each must keep its own
// copy, never share one the linker picked from another target's file.
namespace {

// Bit casts: memcpy on the host, the CUDA intrinsics on the device.
#if defined(__CUDA_ARCH__)
RNGTRK_HD inline uint32_t bits(float x) { return __float_as_uint(x); }
RNGTRK_HD inline float from_bits32(uint32_t u) { return __uint_as_float(u); }
RNGTRK_HD inline uint64_t bits(double x) { return static_cast<uint64_t>(__double_as_longlong(x)); }
RNGTRK_HD inline double from_bits64(uint64_t u) { return __longlong_as_double(static_cast<long long>(u)); }
#else
RNGTRK_HD inline uint32_t bits(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
RNGTRK_HD inline float from_bits32(uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}
RNGTRK_HD inline uint64_t bits(double x) {
    uint64_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
RNGTRK_HD inline double from_bits64(uint64_t u) {
    double x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}
#endif

// Per-precision constants: IEEE layout, Newton step counts and series lengths.
template <class F>
struct Traits;

template <>
struct Traits<float> {
    using U = uint32_t;
    using I = int32_t;
    static constexpr int kMantissaBits = 23;
    static constexpr I kBias = 127;
    static constexpr U kMantissaMask = 0x7FFFFFu;
    static constexpr U kOneBits = 0x3F800000u;
    static constexpr U kRsqrtMagic = 0x5F3759DFu;
    static constexpr int kRecipSteps = 3;
    static constexpr int kRsqrtSteps = 3;
    static constexpr int kLogTerms = 4;   // 2s * (1 + s^2/3 + ... + s^8/9)
    static constexpr int kSinTerms = 4;   // x - x^3/3! ... up to x^9/9!
    static constexpr int kCosTerms = 5;   // 1 - x^2/2! ... up to x^10/10!
    RNGTRK_HD static float from(U u) { return from_bits32(u); }
};

template <>
struct Traits<double> {
    using U = uint64_t;
    using I = int64_t;
    static constexpr int kMantissaBits = 52;
    static constexpr I kBias = 1023;
    static constexpr U kMantissaMask = 0xFFFFFFFFFFFFFull;
    static constexpr U kOneBits = 0x3FF0000000000000ull;
    static constexpr U kRsqrtMagic = 0x5FE6EB50C7B537A9ull;
    static constexpr int kRecipSteps = 4;
    static constexpr int kRsqrtSteps = 4;
    static constexpr int kLogTerms = 10;  // up to s^20/21
    static constexpr int kSinTerms = 8;   // up to x^17/17!
    static constexpr int kCosTerms = 9;   // up to x^18/18!
    RNGTRK_HD static double from(U u) { return from_bits64(u); }
};

// The series coefficients, 1/(2i+3) for atanh and 1/n! for sin and cos, are
// tables local to the functions below (a namespace-scope table would be
// host memory, out of reach of CUDA device code), written as exact decimal
// quotients rounded once by the compiler.
#define RNGTRK_ODD_RECIPROCALS                                                                  \
    { 1.0 / 3, 1.0 / 5, 1.0 / 7, 1.0 / 9, 1.0 / 11, 1.0 / 13, 1.0 / 15, 1.0 / 17, 1.0 / 19, 1.0 / 21 }
#define RNGTRK_INV_FACTORIALS                                                                   \
    { 1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,        \
      1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800.0,           \
      1.0 / 87178291200.0, 1.0 / 1307674368000.0, 1.0 / 20922789888000.0,                         \
      1.0 / 355687428096000.0, 1.0 / 6402373705728000.0 }

// ln(2) split so that e * kLn2Hi is exact for |e| < 2^11.
template <class F>
constexpr F kLn2Hi = static_cast<F>(0.693145751953125);  // 0x1.62e4p-1
template <class F>
constexpr F kLn2Lo = static_cast<F>(1.4286068203094172321e-06);
template <class F>
constexpr F kHalfPi = static_cast<F>(1.5707963267948966192);

// ln(x) for a positive normal x.  x = m * 2^e with m in [sqrt(1/2), sqrt(2));
// ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), with the reciprocal taken by
// Newton steps from a linear first guess and atanh by its odd series.
template <class F>
RNGTRK_HD inline F ln(F x) {
    using T = Traits<F>;
    using U = typename T::U;
    using I = typename T::I;
    const U xb = bits(x);
    I e = static_cast<I>(xb >> T::kMantissaBits) - T::kBias;
    F m = T::from((xb & T::kMantissaMask) | T::kOneBits);  // [1, 2)
    const bool big = m > static_cast<F>(1.4142135623730950488);
    m = big ? m * static_cast<F>(0.5) : m;  // exact
    e = big ? e + 1 : e;
    const F f = m - static_cast<F>(1);  // exact (Sterbenz)
    const F d = static_cast<F>(2) + f;  // in [1.707, 2.415)
    // 1/d: the chord of 1/d over the range, then quadratic Newton steps.
    F y = static_cast<F>(0.5858) - static_cast<F>(0.2427) * (d - static_cast<F>(1.7071));
    RNGTRK_UNROLL
    for (int i = 0; i < T::kRecipSteps; ++i) y = y * (static_cast<F>(2) - d * y);
    const F s = f * y;
    const F s2 = s * s;
    constexpr double odd_reciprocal[] = RNGTRK_ODD_RECIPROCALS;
    F series = static_cast<F>(odd_reciprocal[T::kLogTerms - 1]);
    RNGTRK_UNROLL
    for (int i = T::kLogTerms - 2; i >= 0; --i) series = static_cast<F>(odd_reciprocal[i]) + s2 * series;
    const F ln_m = (s + s) + (s + s) * (s2 * series);
    const F ef = static_cast<F>(e);
    return ef * kLn2Hi<F> + (ln_m + ef * kLn2Lo<F>);
}

// sqrt(x) for x >= 0 (0 gives 0): reciprocal square root from the classic
// bit-level first guess, Newton steps, then one correction of x * rsqrt(x).
template <class F>
RNGTRK_HD inline F sqrt(F x) {
    using T = Traits<F>;
    F y = T::from(T::kRsqrtMagic - (bits(x) >> 1));
    const F half_x = static_cast<F>(0.5) * x;
    RNGTRK_UNROLL
    for (int i = 0; i < T::kRsqrtSteps; ++i) y = y * (static_cast<F>(1.5) - half_x * y * y);
    const F s = x * y;
    return s + (x - s * s) * (static_cast<F>(0.5) * y);
}

// sin and cos of 2*pi*v for v in [0, 1).  4v splits exactly into a quadrant
// q and a fraction f; the fraction is folded into [0, 1/2] so the series
// run on [0, pi/4]; the quadrant then rotates the result.
template <class F>
RNGTRK_HD inline void sincos_2pi(F v, F *sin_out, F *cos_out) {
    using T = Traits<F>;
    using I = typename T::I;
    const F t = static_cast<F>(4) * v;  // exact
    const I q = static_cast<I>(t);      // truncation: 0..3
    const F f = t - static_cast<F>(q);  // exact
    const bool fold = f > static_cast<F>(0.5);
    const F g = fold ? static_cast<F>(1) - f : f;  // exact
    const F x = g * kHalfPi<F>;
    const F x2 = x * x;
    constexpr double inv_factorial[] = RNGTRK_INV_FACTORIALS;
    // sin x = x (1 - x^2/3! + x^4/5! - ...), cos x = 1 - x^2/2! + ..., by Horner.
    F sp = static_cast<F>(0);
    RNGTRK_UNROLL
    for (int k = T::kSinTerms; k >= 0; --k) {
        const F c = static_cast<F>(inv_factorial[2 * k + 1]);
        sp = (k % 2 == 0 ? c : -c) + x2 * sp;
    }
    sp = x * sp;
    F cp = static_cast<F>(0);
    RNGTRK_UNROLL
    for (int k = T::kCosTerms; k >= 0; --k) {
        const F c = static_cast<F>(inv_factorial[2 * k]);
        cp = (k % 2 == 0 ? c : -c) + x2 * cp;
    }
    // (s0, c0) = (sin, cos) of (pi/2) f.
    const F s0 = fold ? cp : sp;
    const F c0 = fold ? sp : cp;
    // Rotate by q quarter turns.
    const bool odd = (q & 1) != 0;
    const F s1 = odd ? c0 : s0;
    const F c1 = odd ? s0 : c0;
    const bool neg_sin = q >= 2;
    const bool neg_cos = q == 1 || q == 2;
    *sin_out = neg_sin ? -s1 : s1;
    *cos_out = neg_cos ? -c1 : c1;
}

// Box-Muller from the logarithm's argument x in (0, 1] and ub in [0, 1):
// z0 = sqrt(-2 ln x) cos(2 pi ub), z1 the same with sin.
template <class F>
RNGTRK_HD inline void box_muller_from(F x, F ub, F *z0, F *z1) {
    const F r = sqrt(static_cast<F>(-2) * ln(x));
    F s, c;
    sincos_2pi(ub, &s, &c);
    *z0 = r * c;
    *z1 = r * s;
}

// Box-Muller: two normals from two uniforms in [0, 1).  ln takes 1 - ua,
// which lies in (0, 1], so there is never a log of 0.
template <class F>
RNGTRK_HD inline void box_muller(F ua, F ub, F *z0, F *z1) {
    box_muller_from(static_cast<F>(1) - ua, ub, z0, z1);
}

// float -> IEEE half (binary16) bits, round to nearest even, with overflow
// to infinity and NaN kept quiet.  Integer operations plus, for results
// below half's normal range, one float addition that aligns the bits.
RNGTRK_HD inline uint16_t to_f16_bits(float value) {
    const uint32_t x = bits(value);
    const uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t a = x & 0x7FFFFFFFu;
    uint16_t h;
    if (a >= 0x47800000u) {  // >= 65536, inf or NaN
        h = a > 0x7F800000u ? 0x7E00u : 0x7C00u;
    } else if (a < 0x38800000u) {  // below 2^-14: half subnormal (or zero)
        // Adding 0.5 puts the half subnormal's bits at the bottom of the
        // mantissa, rounded to nearest even by the addition itself.
        const float shifted = from_bits32(a) + 0.5f;
        h = static_cast<uint16_t>(bits(shifted) - 0x3F000000u);
    } else {
        const uint32_t odd = (a >> 13) & 1u;
        a += 0xC8000FFFu + odd;  // rebias exponent (127 -> 15) and round
        h = static_cast<uint16_t>(a >> 13);
        if (h > 0x7C00u) h = 0x7C00u;  // rounded past the largest half
    }
    return static_cast<uint16_t>(h | sign);
}

// float -> bfloat16 bits, round to nearest even; NaN stays NaN.
RNGTRK_HD inline uint16_t to_bf16_bits(float value) {
    const uint32_t x = bits(value);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
    return static_cast<uint16_t>((x + 0x7FFFu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace
}  // namespace det
}  // namespace rngtrk
