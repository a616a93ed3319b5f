/* SPDX-License-Identifier: Apache-2.0 */
// Portable 128-bit lane types for det_math.h's templates (4 floats or 2
// doubles), written with the vector extensions GCC and Clang share
// (vector_size, __builtin_convertvector): the baseline engine's normal
// transform (sample_scalar.cpp), which compiles to SSE2 on any x86-64 and
// to NEON on aarch64.  Each type offers what the scalar lanes offer in
// det_math.h, with the same values: +, - and * are one IEEE rounding per
// lane (never fused: -ffp-contract=off), the integer conversions are exact
// where they are used, and selects are bit masks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "det_math.h"

namespace rngtrk {
namespace vec {

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));
typedef uint32_t v4u __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));
typedef int64_t v2i __attribute__((vector_size(16)));
typedef uint64_t v2u __attribute__((vector_size(16)));

// x in every lane, bit for bit.  (Not `Vector{} + x`: 0.0 + -0.0 is +0.0,
// which turned a mean of -0.0 into +0.0 on this engine alone, and a
// signalling NaN would come out quiet.)
template <class Vector, class Element>
inline Vector splat(Element x) {
    Vector v{};
    for (size_t i = 0; i < sizeof(Vector) / sizeof(Element); ++i) v[i] = x;
    return v;
}

// A 128-bit value of element type E (its lanes), one struct per use so
// that overloads tell them apart.
#define RNGTRK_VEC_TYPE(Name, Vector, Element)                          \
    struct Name {                                                        \
        Vector v;                                                        \
        Name() = default;                                                \
        explicit Name(Element x) : v(splat<Vector>(x)) {}                \
        explicit Name(Vector x) : v(x) {}                                \
    };
RNGTRK_VEC_TYPE(F32x4, v4f, float)
RNGTRK_VEC_TYPE(U32x4, v4u, uint32_t)
RNGTRK_VEC_TYPE(F64x2, v2d, double)
RNGTRK_VEC_TYPE(U64x2, v2u, uint64_t)
#undef RNGTRK_VEC_TYPE
struct M32x4 {  // all-ones lanes where true
    v4u v;
};
struct M64x2 {
    v2u v;
};

#define RNGTRK_VEC_INT_OPS(U, M, Signed)                                                         \
    inline U operator&(U a, U b) { return U(a.v & b.v); }                                         \
    inline U operator|(U a, U b) { return U(a.v | b.v); }                                         \
    inline U operator^(U a, U b) { return U(a.v ^ b.v); }                                         \
    inline U operator+(U a, U b) { return U(a.v + b.v); }                                         \
    inline U operator-(U a, U b) { return U(a.v - b.v); }                                         \
    inline U operator<<(U a, int n) { return U(a.v << n); }                                       \
    inline U operator>>(U a, int n) { return U(a.v >> n); }                                       \
    inline M operator==(U a, U b) { return M{reinterpret_cast<decltype(a.v)>(a.v == b.v)}; }    \
    /* signed, as the SIMD types compare: the callers' values stay below 2^31 (2^63) */          \
    inline M operator>(U a, U b) {                                                               \
        return M{reinterpret_cast<decltype(a.v)>(reinterpret_cast<Signed>(a.v) > reinterpret_cast<Signed>(b.v))}; \
    }                                                                                             \
    inline M operator<(U a, U b) { return b > a; }
RNGTRK_VEC_INT_OPS(U32x4, M32x4, v4i)
RNGTRK_VEC_INT_OPS(U64x2, M64x2, v2i)
#undef RNGTRK_VEC_INT_OPS

#define RNGTRK_VEC_FLOAT_OPS(F, U, M)                                                          \
    inline F operator+(F a, F b) { return F(a.v + b.v); }                                       \
    inline F operator-(F a, F b) { return F(a.v - b.v); }                                       \
    inline F operator*(F a, F b) { return F(a.v * b.v); }                                       \
    inline M operator>(F a, F b) { return M{reinterpret_cast<decltype(U().v)>(a.v > b.v)}; }  \
    inline M operator==(F a, F b) { return M{reinterpret_cast<decltype(U().v)>(a.v == b.v)}; } \
    inline U bits(F a) { return U(reinterpret_cast<decltype(U().v)>(a.v)); }                   \
    inline F from_bits(U a) { return F(reinterpret_cast<decltype(F().v)>(a.v)); }              \
    inline F select(M m, F a, F b) { return from_bits(U((m.v & bits(a).v) | (~m.v & bits(b).v))); } \
    inline U select(M m, U a, U b) { return U((m.v & a.v) | (~m.v & b.v)); }                    \
    inline M mask_xor(M a, M b) { return M{a.v ^ b.v}; }                                         \
    inline F mul_add_exact(F a, F b, F c) { return a * b + c; }
RNGTRK_VEC_FLOAT_OPS(F32x4, U32x4, M32x4)
RNGTRK_VEC_FLOAT_OPS(F64x2, U64x2, M64x2)
#undef RNGTRK_VEC_FLOAT_OPS

inline F32x4 int_to_float(U32x4 a) { return F32x4(__builtin_convertvector(reinterpret_cast<v4i>(a.v), v4f)); }
// Any uint32_t: the exact 16-bit halves, added once (rounded once).
inline F32x4 uint_to_float(U32x4 a) {
    return int_to_float(a >> 16) * F32x4(65536.0f) + int_to_float(a & U32x4(0xFFFFu));
}
// |n| < 2^51: n added into the mantissa of 1.5 * 2^52, which then comes off (both exact).
inline F64x2 int_to_float(U64x2 a) { return from_bits(a + U64x2(0x4338000000000000ull)) - F64x2(0x1.8p52); }
// n < 2^53: the high 21 and low 32 bits in the mantissas of 2^84 and 2^52 (exact), then added (exact).
inline F64x2 uint_to_float(U64x2 a) {
    const F64x2 hi = from_bits((a >> 32) | U64x2(0x4530000000000000ull)) - F64x2(0x1p84);
    const F64x2 lo = from_bits((a & U64x2(0xFFFFFFFFull)) | U64x2(0x4330000000000000ull)) - F64x2(0x1p52);
    return hi + lo;
}
// 0 <= t < 2^22: the truncation (C's float -> integer conversion) and back, both exact.
inline void split_floor(F32x4 t, F32x4 *whole, U32x4 *q) {
    *q = U32x4(reinterpret_cast<v4u>(__builtin_convertvector(t.v, v4i)));
    *whole = int_to_float(*q);
}
inline void split_floor(F64x2 t, F64x2 *whole, U64x2 *q) {
    *q = U64x2(reinterpret_cast<v2u>(__builtin_convertvector(t.v, v2i)));
    *whole = int_to_float(*q);
}

// The normal transform's groups (normal_groups.h) on 4 Philox blocks.
struct Vec4Lanes {
    using U32 = U32x4;
    using F32 = F32x4;
    using U64 = U64x2;
    using F64 = F64x2;
    static constexpr size_t kBlocks = 4;
    static constexpr size_t kWide = 2;

    // x[j] lane i = word j of block i (the 16 words at w, 4 per block).
    static void load_blocks(const uint32_t *w, U32 x[4]) {
        for (int j = 0; j < 4; ++j) x[j] = U32(v4u{w[j], w[4 + j], w[8 + j], w[12 + j]});
    }
    // out[4i + j] = y[j] lane i.
    static void store_blocks(uint32_t *out, const U32 y[4]) {
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) out[4 * i + j] = y[j].v[i];
    }
    static void store_blocks16(uint16_t *out, const U32 y[4]) {
        for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint16_t>(y[j].v[i]);
    }
    static void store(uint32_t *out, U32 y) { std::memcpy(out, &y.v, sizeof y.v); }
    static void store16(uint16_t *out, U32 y) {
        for (int i = 0; i < 4; ++i) out[i] = static_cast<uint16_t>(y.v[i]);
    }
    // (hi << 32 | lo) of lanes 0-1 in out[0], of lanes 2-3 in out[1].
    static void widen(U32 hi, U32 lo, U64 out[2]) {
        for (int k = 0; k < 2; ++k)
            out[k] = U64(v2u{uint64_t{hi.v[2 * k]} << 32 | lo.v[2 * k], uint64_t{hi.v[2 * k + 1]} << 32 | lo.v[2 * k + 1]});
    }
    static void store64(double *out, const F64 v[2]) {
        std::memcpy(out, &v[0].v, sizeof v[0].v), std::memcpy(out + 2, &v[1].v, sizeof v[1].v);
    }
    static void store_pairs64(double *out, const F64 a[2], const F64 b[2]) {
        for (int k = 0; k < 2; ++k)
            for (int i = 0; i < 2; ++i) out[4 * k + 2 * i] = a[k].v[i], out[4 * k + 2 * i + 1] = b[k].v[i];
    }
};

}  // namespace vec

// The vectors' element, bit and mask types, for det_math.h's templates.
namespace det {
namespace {
template <>
struct Lanes<vec::F32x4> {
    using F = float;
    using U = vec::U32x4;
    using M = vec::M32x4;
};
template <>
struct Lanes<vec::F64x2> {
    using F = double;
    using U = vec::U64x2;
    using M = vec::M64x2;
};
}  // namespace
}  // namespace det
}  // namespace rngtrk
