/* SPDX-License-Identifier: Apache-2.0 */
// Deterministic math for the distributions: natural log, square root,
// sin/cos of 2*pi*v, Box-Muller and the half-precision roundings, written
// with nothing but +, -, *, comparisons, selects and exact bit
// manipulation.  No division, no library call, no fma that could change a
// rounding: every operation is a single IEEE-754 rounding that every path
// performs alike, so they produce the same bits.  The library builds with
// -ffp-contract=off (nvcc: --fmad=false) so the compiler cannot fuse a
// multiply and an add behind our back.
//
// Written once, for every path: each function is a template over a *lane
// type* V -- float or double for the scalar engine and the CUDA kernels
// (one element per call), or a SIMD vector of them for the AVX2 and
// AVX-512 engines (core/simd_lanes.h: 8 or 16 elements per call).  A lane
// type offers +, - and * (each one IEEE rounding per lane), comparisons
// giving a mask, and the handful of exact primitives declared below for the
// scalars (select, bit casts, integer conversions that are exact where they
// are used); simd_lanes.h gives the vectors the same set.  The sequence of
// roundings is fixed by this file alone; how a primitive is evaluated (a
// conversion instruction or a bit trick, a branch or a blend) is the lane
// type's business and never changes a value.
//
// Accuracy (checked in the tests against <cmath>): within a few units in the
// last place on the ranges used here; they are not correctly rounded.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

// Full unrolling of the short fixed loops below keeps them free of branches.
#if defined(__CUDACC__) || defined(__clang__)
#define RNGTRK_UNROLL _Pragma("unroll")
#elif defined(__GNUC__)
#define RNGTRK_UNROLL _Pragma("GCC unroll 32")
#else
#define RNGTRK_UNROLL
#endif
#include <cstring>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

#include "hd.h"

// The functions below are inlined whole into the caller's loop, where a
// vector lane type's values stay in registers (an out-of-line call would
// pass them through memory).
#if defined(__CUDA_ARCH__) || !defined(__GNUC__)
#define RNGTRK_FLATTEN inline
#else
#define RNGTRK_FLATTEN inline __attribute__((always_inline))
#endif

namespace rngtrk {
namespace det {
// Internal linkage on purpose: the sampling engines include this header in
// files compiled for different CPUs (AVX2, AVX-512); each must keep its own
// copy, never share one the linker picked from another target's file.
namespace {

// -- the scalar lanes: float and double, one element ----------------------------

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
// The float lanes whose bits these are (overloaded on the bit type, so the
// templates below say from_bits(u) for any lane type).
RNGTRK_HD inline float from_bits(uint32_t u) { return from_bits32(u); }
RNGTRK_HD inline double from_bits(uint64_t u) { return from_bits64(u); }

// The float lanes of bit lanes U (float for uint32_t, a vector for a vector).
template <class U>
using FloatLanes = decltype(from_bits(std::declval<U>()));

// A lane type's element type F, its same-width bit type U and its mask type
// M.  The scalars are their own lanes; simd_lanes.h adds the vectors.
template <class V>
struct Lanes {
    using F = V;
    using U = typename std::conditional<sizeof(V) == 4, uint32_t, uint64_t>::type;
    using M = bool;
};

// m ? a : b, lane by lane.
template <class T>
RNGTRK_HD inline T select(bool m, T a, T b) {
    return m ? a : b;
}
// The mask where exactly one of a and b holds.
RNGTRK_HD inline bool mask_xor(bool a, bool b) { return a != b; }

// The bits as a two's complement integer, converted to float, rounded to
// nearest even (exact for the values the functions below convert).
RNGTRK_HD inline float int_to_float(uint32_t u) { return static_cast<float>(static_cast<int32_t>(u)); }
RNGTRK_HD inline double int_to_float(uint64_t u) { return static_cast<double>(static_cast<int64_t>(u)); }
// The bits as an unsigned integer, converted, rounded to nearest even: any
// uint32_t to float; to double only below 2^53 (exact), all that is used.
RNGTRK_HD inline float uint_to_float(uint32_t u) { return static_cast<float>(u); }
RNGTRK_HD inline double uint_to_float(uint64_t u) { return static_cast<double>(u); }

// For 0 <= t < 2^22: *whole = floor(t) as a float (exact) and *q the same
// integer in the bit type.
RNGTRK_HD inline void split_floor(float t, float *whole, uint32_t *q) {
    *q = static_cast<uint32_t>(static_cast<int32_t>(t));
    *whole = int_to_float(*q);
}
RNGTRK_HD inline void split_floor(double t, double *whole, uint64_t *q) {
    *q = static_cast<uint64_t>(static_cast<int64_t>(t));
    *whole = int_to_float(*q);
}

// a * b + c where the product a * b is exact: one rounding either way, so
// the device's fused multiply-add gives the same bits in one instruction.
RNGTRK_HD inline float mul_add_exact(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(a, b, c);
#else
    return a * b + c;
#endif
}
RNGTRK_HD inline double mul_add_exact(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
    return __fma_rn(a, b, c);
#else
    return a * b + c;
#endif
}

// -- per-precision constants: IEEE layout, Newton step counts, series lengths --

template <class F>
struct Traits;

template <>
struct Traits<float> {
    using U = uint32_t;
    static constexpr int kMantissaBits = 23;
    static constexpr int kBias = 127;
    static constexpr U kMantissaMask = 0x7FFFFFu;
    static constexpr U kOneBits = 0x3F800000u;
    static constexpr U kSignBit = 0x80000000u;
    static constexpr U kRsqrtMagic = 0x5F3759DFu;
    static constexpr int kRecipSteps = 3;
    static constexpr int kRsqrtSteps = 3;
    static constexpr int kLogTerms = 4;   // 2s * (1 + s^2/3 + ... + s^8/9)
    static constexpr int kSinTerms = 4;   // x - x^3/3! ... up to x^9/9!
    static constexpr int kCosTerms = 5;   // 1 - x^2/2! ... up to x^10/10!
};

template <>
struct Traits<double> {
    using U = uint64_t;
    static constexpr int kMantissaBits = 52;
    static constexpr int kBias = 1023;
    static constexpr U kMantissaMask = 0xFFFFFFFFFFFFFull;
    static constexpr U kOneBits = 0x3FF0000000000000ull;
    static constexpr U kSignBit = 0x8000000000000000ull;
    static constexpr U kRsqrtMagic = 0x5FE6EB50C7B537A9ull;
    static constexpr int kRecipSteps = 4;
    static constexpr int kRsqrtSteps = 4;
    static constexpr int kLogTerms = 10;  // up to s^20/21
    static constexpr int kSinTerms = 8;   // up to x^17/17!
    static constexpr int kCosTerms = 9;   // up to x^18/18!
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

// -- the functions, for any lane type -----------------------------------------

// ln(x) for a positive normal x.  x = m * 2^e with m in [sqrt(1/2), sqrt(2));
// ln(m) = 2 atanh(s), s = (m - 1) / (m + 1), with the reciprocal taken by
// Newton steps from a linear first guess and atanh by its odd series.
template <class V>
RNGTRK_HD RNGTRK_FLATTEN V ln(V x) {
    using F = typename Lanes<V>::F;
    using U = typename Lanes<V>::U;
    using T = Traits<F>;
    const U xb = bits(x);
    V m = from_bits((xb & U(T::kMantissaMask)) | U(T::kOneBits));  // [1, 2)
    const auto big = m > V(F(1.4142135623730950488));
    m = select(big, m * V(F(0.5)), m);  // exact
    // e = biased exponent - bias (+ 1 where m was halved), in two's complement.
    const U e = (xb >> T::kMantissaBits) + select(big, U(1 - T::kBias), U(0 - T::kBias));
    const V f = m - V(F(1));  // exact (Sterbenz)
    const V d = V(F(2)) + f;  // in [1.707, 2.415)
    // 1/d: the chord of 1/d over the range, then quadratic Newton steps.
    V y = V(F(0.5858)) - V(F(0.2427)) * (d - V(F(1.7071)));
    RNGTRK_UNROLL
    for (int i = 0; i < T::kRecipSteps; ++i) y = y * (V(F(2)) - d * y);
    const V s = f * y;
    const V s2 = s * s;
    constexpr double odd_reciprocal[] = RNGTRK_ODD_RECIPROCALS;
    V series = V(F(odd_reciprocal[T::kLogTerms - 1]));
    RNGTRK_UNROLL
    for (int i = T::kLogTerms - 2; i >= 0; --i) series = V(F(odd_reciprocal[i])) + s2 * series;
    const V ln_m = (s + s) + (s + s) * (s2 * series);
    const V ef = int_to_float(e);  // exact
    return mul_add_exact(ef, V(kLn2Hi<F>), ln_m + ef * V(kLn2Lo<F>));
}

// sqrt(x) for x >= 0 (0 gives 0): reciprocal square root from the classic
// bit-level first guess, Newton steps, then one correction of x * rsqrt(x).
template <class V>
RNGTRK_HD RNGTRK_FLATTEN V sqrt(V x) {
    using F = typename Lanes<V>::F;
    using U = typename Lanes<V>::U;
    using T = Traits<F>;
    V y = from_bits(U(T::kRsqrtMagic) - (bits(x) >> 1));
    const V half_x = V(F(0.5)) * x;
    RNGTRK_UNROLL
    for (int i = 0; i < T::kRsqrtSteps; ++i) y = y * (V(F(1.5)) - half_x * y * y);
    const V s = x * y;
    return s + (x - s * s) * (V(F(0.5)) * y);
}

// An angle of 2*pi*v for v in [0, 1), held as 4v = q + f: the quadrant q
// (0..3, in the bit type) and the fraction f in [0, 1), both exact.
template <class V>
struct Quarters {
    typename Lanes<V>::U q;
    V f;
};

// 4v splits exactly into the quadrant and the fraction.
template <class V>
RNGTRK_HD RNGTRK_FLATTEN Quarters<V> quarters_of(V v) {
    using F = typename Lanes<V>::F;
    const V t = V(F(4)) * v;  // exact
    V whole;
    Quarters<V> a;
    split_floor(t, &whole, &a.q);
    a.f = t - whole;  // exact
    return a;
}

// sin and cos of 2*pi*v from its quarters: the fraction is folded into
// [0, 1/2] so the series run on [0, pi/4]; the quadrant then rotates the
// result.
template <class V>
RNGTRK_HD RNGTRK_FLATTEN void sincos_quarters(Quarters<V> a, V *sin_out, V *cos_out) {
    using F = typename Lanes<V>::F;
    using U = typename Lanes<V>::U;
    using T = Traits<F>;
    const auto fold = a.f > V(F(0.5));
    const V g = select(fold, V(F(1)) - a.f, a.f);  // exact
    const V x = g * V(kHalfPi<F>);
    const V x2 = x * x;
    constexpr double inv_factorial[] = RNGTRK_INV_FACTORIALS;
    // sin x = x (1 - x^2/3! + x^4/5! - ...), cos x = 1 - x^2/2! + ..., by
    // Horner from the highest coefficient (which c + x^2 * 0 would equal).
    constexpr F sin_top = static_cast<F>(inv_factorial[2 * T::kSinTerms + 1]);
    V sp = V(T::kSinTerms % 2 == 0 ? sin_top : -sin_top);
    RNGTRK_UNROLL
    for (int k = T::kSinTerms - 1; k >= 0; --k) {
        const F c = static_cast<F>(inv_factorial[2 * k + 1]);
        sp = V(k % 2 == 0 ? c : -c) + x2 * sp;
    }
    sp = x * sp;
    constexpr F cos_top = static_cast<F>(inv_factorial[2 * T::kCosTerms]);
    V cp = V(T::kCosTerms % 2 == 0 ? cos_top : -cos_top);
    RNGTRK_UNROLL
    for (int k = T::kCosTerms - 1; k >= 0; --k) {
        const F c = static_cast<F>(inv_factorial[2 * k]);
        cp = V(k % 2 == 0 ? c : -c) + x2 * cp;
    }
    // Folding swaps sin and cos of (pi/2) f, and so does an odd quadrant.
    const auto swap = mask_xor(fold, (a.q & U(1)) == U(1));
    const V s1 = select(swap, cp, sp);
    const V c1 = select(swap, sp, cp);
    // Quadrants 2 and 3 negate sin, 1 and 2 cos: bit 1 of q and of q + 1,
    // moved to the sign bit (negation is exact).
    constexpr int kToSign = 8 * sizeof(F) - 2;
    *sin_out = from_bits(bits(s1) ^ ((a.q << kToSign) & U(T::kSignBit)));
    *cos_out = from_bits(bits(c1) ^ (((a.q + U(1)) << kToSign) & U(T::kSignBit)));
}

// sin and cos of 2*pi*v for v in [0, 1).
template <class V>
RNGTRK_HD inline void sincos_2pi(V v, V *sin_out, V *cos_out) {
    sincos_quarters(quarters_of(v), sin_out, cos_out);
}

// Box-Muller from the logarithm's argument x in (0, 1] and the angle:
// z0 = sqrt(-2 ln x) cos(angle), z1 the same with sin.
template <class V>
RNGTRK_HD RNGTRK_FLATTEN void box_muller_quarters(V x, Quarters<V> angle, V *z0, V *z1) {
    using F = typename Lanes<V>::F;
    const V r = sqrt(V(F(-2)) * ln(x));
    V s, c;
    sincos_quarters(angle, &s, &c);
    *z0 = r * c;
    *z1 = r * s;
}

// float -> IEEE half (binary16) bits in the low 16 bits of each lane, round
// to nearest even, with overflow to infinity and NaN kept quiet.  Integer
// operations plus, for results below half's normal range, one float
// addition that aligns the bits; every case is computed and the right one
// selected (no branch, so vectors take it too).
template <class V>
RNGTRK_HD RNGTRK_FLATTEN typename Lanes<V>::U half_bits(V value) {
    using U = typename Lanes<V>::U;
    static_assert(sizeof(typename Lanes<V>::F) == 4, "half_bits converts float lanes");
    const U x = bits(value);
    const U sign = (x >> 16) & U(0x8000u);
    const U a = x & U(0x7FFFFFFFu);  // below 2^31: signed and unsigned compares agree
    // >= 65536, inf or NaN: infinity, or a quiet NaN.
    const U huge = select(a > U(0x7F800000u), U(0x7E00u), U(0x7C00u));
    // Below 2^-14 (half subnormal or zero): adding 0.5 puts the half's bits
    // at the bottom of the mantissa, rounded to nearest even by the addition.
    const U tiny = bits(from_bits(a) + V(0.5f)) - U(0x3F000000u);
    // Normal: rebias the exponent (127 -> 15) and round; past the largest
    // half it rounds to infinity.
    U normal = (a + U(0xC8000FFFu) + ((a >> 13) & U(1u))) >> 13;
    normal = select(normal > U(0x7C00u), U(0x7C00u), normal);
    const U h = select(a > U(0x477FFFFFu), huge, select(a < U(0x38800000u), tiny, normal));
    return h | sign;
}

// float -> bfloat16 bits in the low 16 bits of each lane, round to nearest
// even; NaN stays NaN (quiet).
template <class V>
RNGTRK_HD RNGTRK_FLATTEN typename Lanes<V>::U bfloat_bits(V value) {
    using U = typename Lanes<V>::U;
    static_assert(sizeof(typename Lanes<V>::F) == 4, "bfloat_bits converts float lanes");
    const U x = bits(value);
    const U rounded = (x + U(0x7FFFu) + ((x >> 16) & U(1u))) >> 16;
    return select((x & U(0x7FFFFFFFu)) > U(0x7F800000u), (x >> 16) | U(0x0040u), rounded);
}

// The two roundings as the paths use them: the definitions above, on every
// lane type; on the GPU, whose cvt.rn.f16.f32 and cvt.rn.bf16.f32 round the
// same way (to nearest even, overflowing to infinity, subnormal halves
// kept), one instruction instead, for every value but NaN (whose payload
// the instructions drop: it takes the definition).
template <class V>
RNGTRK_HD RNGTRK_FLATTEN typename Lanes<V>::U round_to_f16(V value) {
    return half_bits(value);
}
template <class V>
RNGTRK_HD RNGTRK_FLATTEN typename Lanes<V>::U round_to_bf16(V value) {
    return bfloat_bits(value);
}
#if defined(__CUDA_ARCH__)
__device__ inline uint32_t round_to_f16(float value) {
    return value != value ? half_bits(value) : __half_as_ushort(__float2half_rn(value));
}
__device__ inline uint32_t round_to_bf16(float value) {
    return value != value ? bfloat_bits(value) : __bfloat16_as_ushort(__float2bfloat16_rn(value));
}
#endif

RNGTRK_HD inline uint16_t to_f16_bits(float value) { return static_cast<uint16_t>(round_to_f16(value)); }
RNGTRK_HD inline uint16_t to_bf16_bits(float value) { return static_cast<uint16_t>(round_to_bf16(value)); }

// The other way: the float value of f16 or bf16 bits, exact (every half and
// bfloat16 is a float).  A NaN keeps its sign and payload (shifted into the
// float's mantissa).  Bit operations and one exact conversion, the same on
// every path.
RNGTRK_HD inline float from_f16_bits(uint16_t h) {
    const uint32_t sign = uint32_t{h & 0x8000u} << 16, exponent = (h >> 10) & 0x1Fu, mantissa = h & 0x3FFu;
    if (exponent == 0x1F) return from_bits32(sign | 0x7F800000u | mantissa << 13);  // inf or NaN
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
        return sign != 0 ? -magnitude : magnitude;
    }
    return from_bits32(sign | (exponent + 112) << 23 | mantissa << 13);  // rebias 15 -> 127
}
RNGTRK_HD inline float from_bf16_bits(uint16_t h) { return from_bits32(uint32_t{h} << 16); }

}  // namespace
}  // namespace det
}  // namespace rngtrk
