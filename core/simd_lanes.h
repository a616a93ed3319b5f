/* SPDX-License-Identifier: Apache-2.0 */
// SIMD lane types for det_math.h's templates, and the block-group loads and
// stores the normal transform needs (normal_groups.h): AVX2 (8 floats or 4
// doubles per vector) and AVX-512 (16 or 8).  Each type offers what the
// scalar lanes offer in det_math.h -- +, - and * (one IEEE rounding per
// lane, never fused: -ffp-contract=off), comparisons giving a mask,
// select, bit casts and the exact integer conversions -- so the same
// template source gives the same bits on 1, 8 or 16 lanes.  Included only
// by files compiled for the matching target (sample_avx2.cpp,
// sample_avx512.cpp).
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "det_math.h"

namespace rngtrk {
namespace simd {

#if defined(__AVX2__)
// -- AVX2: 8 x 32-bit, 4 x 64-bit lanes ---------------------------------------

struct U32x8 {
    __m256i v;
    U32x8() = default;
    explicit U32x8(uint32_t x) : v(_mm256_set1_epi32(static_cast<int>(x))) {}
    explicit U32x8(__m256i x) : v(x) {}
};
struct M32x8 {  // all-ones lanes where true
    __m256i v;
};
struct F32x8 {
    __m256 v;
    F32x8() = default;
    explicit F32x8(float x) : v(_mm256_set1_ps(x)) {}
    explicit F32x8(__m256 x) : v(x) {}
};
struct U64x4 {
    __m256i v;
    U64x4() = default;
    explicit U64x4(uint64_t x) : v(_mm256_set1_epi64x(static_cast<long long>(x))) {}
    explicit U64x4(__m256i x) : v(x) {}
};
struct M64x4 {
    __m256i v;
};
struct F64x4 {
    __m256d v;
    F64x4() = default;
    explicit F64x4(double x) : v(_mm256_set1_pd(x)) {}
    explicit F64x4(__m256d x) : v(x) {}
};

inline U32x8 operator&(U32x8 a, U32x8 b) { return U32x8(_mm256_and_si256(a.v, b.v)); }
inline U32x8 operator|(U32x8 a, U32x8 b) { return U32x8(_mm256_or_si256(a.v, b.v)); }
inline U32x8 operator^(U32x8 a, U32x8 b) { return U32x8(_mm256_xor_si256(a.v, b.v)); }
inline U32x8 operator+(U32x8 a, U32x8 b) { return U32x8(_mm256_add_epi32(a.v, b.v)); }
inline U32x8 operator-(U32x8 a, U32x8 b) { return U32x8(_mm256_sub_epi32(a.v, b.v)); }
inline U32x8 operator<<(U32x8 a, int n) { return U32x8(_mm256_slli_epi32(a.v, n)); }
inline U32x8 operator>>(U32x8 a, int n) { return U32x8(_mm256_srli_epi32(a.v, n)); }
// Integer comparisons are signed: the callers' values stay below 2^31.
inline M32x8 operator==(U32x8 a, U32x8 b) { return M32x8{_mm256_cmpeq_epi32(a.v, b.v)}; }
inline M32x8 operator>(U32x8 a, U32x8 b) { return M32x8{_mm256_cmpgt_epi32(a.v, b.v)}; }
inline M32x8 operator<(U32x8 a, U32x8 b) { return M32x8{_mm256_cmpgt_epi32(b.v, a.v)}; }

inline F32x8 operator+(F32x8 a, F32x8 b) { return F32x8(_mm256_add_ps(a.v, b.v)); }
inline F32x8 operator-(F32x8 a, F32x8 b) { return F32x8(_mm256_sub_ps(a.v, b.v)); }
inline F32x8 operator*(F32x8 a, F32x8 b) { return F32x8(_mm256_mul_ps(a.v, b.v)); }
inline M32x8 operator>(F32x8 a, F32x8 b) { return M32x8{_mm256_castps_si256(_mm256_cmp_ps(a.v, b.v, _CMP_GT_OQ))}; }
inline M32x8 operator==(F32x8 a, F32x8 b) { return M32x8{_mm256_castps_si256(_mm256_cmp_ps(a.v, b.v, _CMP_EQ_OQ))}; }

inline U64x4 operator&(U64x4 a, U64x4 b) { return U64x4(_mm256_and_si256(a.v, b.v)); }
inline U64x4 operator|(U64x4 a, U64x4 b) { return U64x4(_mm256_or_si256(a.v, b.v)); }
inline U64x4 operator^(U64x4 a, U64x4 b) { return U64x4(_mm256_xor_si256(a.v, b.v)); }
inline U64x4 operator+(U64x4 a, U64x4 b) { return U64x4(_mm256_add_epi64(a.v, b.v)); }
inline U64x4 operator-(U64x4 a, U64x4 b) { return U64x4(_mm256_sub_epi64(a.v, b.v)); }
inline U64x4 operator<<(U64x4 a, int n) { return U64x4(_mm256_slli_epi64(a.v, n)); }
inline U64x4 operator>>(U64x4 a, int n) { return U64x4(_mm256_srli_epi64(a.v, n)); }
inline M64x4 operator==(U64x4 a, U64x4 b) { return M64x4{_mm256_cmpeq_epi64(a.v, b.v)}; }
inline M64x4 operator>(U64x4 a, U64x4 b) { return M64x4{_mm256_cmpgt_epi64(a.v, b.v)}; }

inline F64x4 operator+(F64x4 a, F64x4 b) { return F64x4(_mm256_add_pd(a.v, b.v)); }
inline F64x4 operator-(F64x4 a, F64x4 b) { return F64x4(_mm256_sub_pd(a.v, b.v)); }
inline F64x4 operator*(F64x4 a, F64x4 b) { return F64x4(_mm256_mul_pd(a.v, b.v)); }
inline M64x4 operator>(F64x4 a, F64x4 b) { return M64x4{_mm256_castpd_si256(_mm256_cmp_pd(a.v, b.v, _CMP_GT_OQ))}; }
inline M64x4 operator==(F64x4 a, F64x4 b) { return M64x4{_mm256_castpd_si256(_mm256_cmp_pd(a.v, b.v, _CMP_EQ_OQ))}; }

inline U32x8 bits(F32x8 a) { return U32x8(_mm256_castps_si256(a.v)); }
inline F32x8 from_bits(U32x8 a) { return F32x8(_mm256_castsi256_ps(a.v)); }
inline U64x4 bits(F64x4 a) { return U64x4(_mm256_castpd_si256(a.v)); }
inline F64x4 from_bits(U64x4 a) { return F64x4(_mm256_castsi256_pd(a.v)); }

inline F32x8 select(M32x8 m, F32x8 a, F32x8 b) { return F32x8(_mm256_blendv_ps(b.v, a.v, _mm256_castsi256_ps(m.v))); }
inline U32x8 select(M32x8 m, U32x8 a, U32x8 b) { return U32x8(_mm256_blendv_epi8(b.v, a.v, m.v)); }
inline F64x4 select(M64x4 m, F64x4 a, F64x4 b) { return F64x4(_mm256_blendv_pd(b.v, a.v, _mm256_castsi256_pd(m.v))); }
inline U64x4 select(M64x4 m, U64x4 a, U64x4 b) { return U64x4(_mm256_blendv_epi8(b.v, a.v, m.v)); }
inline M32x8 mask_xor(M32x8 a, M32x8 b) { return M32x8{_mm256_xor_si256(a.v, b.v)}; }
inline M64x4 mask_xor(M64x4 a, M64x4 b) { return M64x4{_mm256_xor_si256(a.v, b.v)}; }

inline F32x8 int_to_float(U32x8 a) { return F32x8(_mm256_cvtepi32_ps(a.v)); }
// AVX2 converts no unsigned or 64-bit integers: the exact 16-bit halves,
// added once (rounded once, as the scalar conversion is).
inline F32x8 uint_to_float(U32x8 a) {
    return int_to_float(a >> 16) * F32x8(65536.0f) + int_to_float(a & U32x8(0xFFFFu));
}
// |n| < 2^51: n added into the mantissa of 1.5 * 2^52, which then comes off (both exact).
inline F64x4 int_to_float(U64x4 a) {
    return from_bits(a + U64x4(0x4338000000000000ull)) - F64x4(0x1.8p52);
}
// n < 2^53: the high 21 and low 32 bits in the mantissas of 2^84 and 2^52 (exact), then added (exact).
inline F64x4 uint_to_float(U64x4 a) {
    const F64x4 hi = from_bits((a >> 32) | U64x4(0x4530000000000000ull)) - F64x4(0x1p84);
    const F64x4 lo = from_bits((a & U64x4(0xFFFFFFFFull)) | U64x4(0x4330000000000000ull)) - F64x4(0x1p52);
    return hi + lo;
}
inline void split_floor(F32x8 t, F32x8 *whole, U32x8 *q) {
    *whole = F32x8(_mm256_round_ps(t.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    *q = U32x8(_mm256_cvttps_epi32(t.v));
}
inline void split_floor(F64x4 t, F64x4 *whole, U64x4 *q) {
    *whole = F64x4(_mm256_round_pd(t.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    *q = bits(*whole + F64x4(0x1.8p52)) - U64x4(0x4338000000000000ull);
}
// No FMA in the AVX2 build (cpuid checks AVX2 only): the two roundings, of
// which the first is exact.
inline F32x8 mul_add_exact(F32x8 a, F32x8 b, F32x8 c) { return a * b + c; }
inline F64x4 mul_add_exact(F64x4 a, F64x4 b, F64x4 c) { return a * b + c; }

// The normal transform's groups on AVX2: 8 Philox blocks.
struct Avx2Lanes {
    using U32 = U32x8;
    using F32 = F32x8;
    using U64 = U64x4;
    using F64 = F64x4;
    static constexpr size_t kBlocks = 8;  // lanes of U32: one block each
    static constexpr size_t kWide = 2;    // U64 vectors per U32 vector

    // x[j] lane i = word j of block i (the 32 words at w, 4 per block).
    static void load_blocks(const uint32_t *w, U32 x[4]) {
        const __m128i *p = reinterpret_cast<const __m128i *>(w);
        const __m256i b04 = _mm256_loadu2_m128i(p + 4, p + 0), b15 = _mm256_loadu2_m128i(p + 5, p + 1);
        const __m256i b26 = _mm256_loadu2_m128i(p + 6, p + 2), b37 = _mm256_loadu2_m128i(p + 7, p + 3);
        const __m256i t0 = _mm256_unpacklo_epi32(b04, b15), t1 = _mm256_unpackhi_epi32(b04, b15);
        const __m256i t2 = _mm256_unpacklo_epi32(b26, b37), t3 = _mm256_unpackhi_epi32(b26, b37);
        x[0] = U32(_mm256_unpacklo_epi64(t0, t2)), x[1] = U32(_mm256_unpackhi_epi64(t0, t2));
        x[2] = U32(_mm256_unpacklo_epi64(t1, t3)), x[3] = U32(_mm256_unpackhi_epi64(t1, t3));
    }
    // The inverse, as four vectors of four words per 128-bit half: blocks (0|4), (1|5), (2|6), (3|7).
    static void to_blocks(const U32 y[4], __m256i q[4]) {
        const __m256i t0 = _mm256_unpacklo_epi32(y[0].v, y[1].v), t1 = _mm256_unpackhi_epi32(y[0].v, y[1].v);
        const __m256i t2 = _mm256_unpacklo_epi32(y[2].v, y[3].v), t3 = _mm256_unpackhi_epi32(y[2].v, y[3].v);
        q[0] = _mm256_unpacklo_epi64(t0, t2), q[1] = _mm256_unpackhi_epi64(t0, t2);
        q[2] = _mm256_unpacklo_epi64(t1, t3), q[3] = _mm256_unpackhi_epi64(t1, t3);
    }
    // out[4i + j] = y[j] lane i.
    static void store_blocks(uint32_t *out, const U32 y[4]) {
        __m256i q[4];
        to_blocks(y, q);
        __m256i *o = reinterpret_cast<__m256i *>(out);
        _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(q[0], q[1], 0x20));
        _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(q[2], q[3], 0x20));
        _mm256_storeu_si256(o + 2, _mm256_permute2x128_si256(q[0], q[1], 0x31));
        _mm256_storeu_si256(o + 3, _mm256_permute2x128_si256(q[2], q[3], 0x31));
    }
    // The same for lanes holding 16-bit values.
    static void store_blocks16(uint16_t *out, const U32 y[4]) {
        __m256i q[4];
        to_blocks(y, q);
        const __m256i r0 = _mm256_packus_epi32(q[0], q[1]);  // blocks 0, 1 | 4, 5
        const __m256i r1 = _mm256_packus_epi32(q[2], q[3]);  // blocks 2, 3 | 6, 7
        __m256i *o = reinterpret_cast<__m256i *>(out);
        _mm256_storeu_si256(o + 0, _mm256_permute2x128_si256(r0, r1, 0x20));
        _mm256_storeu_si256(o + 1, _mm256_permute2x128_si256(r0, r1, 0x31));
    }
    // out[i] = y lane i.
    static void store(uint32_t *out, U32 y) { _mm256_storeu_si256(reinterpret_cast<__m256i *>(out), y.v); }
    static void store16(uint16_t *out, U32 y) {
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(y.v, y.v), 0x08);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out), _mm256_castsi256_si128(p));
    }
    // (hi << 32 | lo) of lanes 0-3 in out[0], of lanes 4-7 in out[1].
    static void widen(U32 hi, U32 lo, U64 out[2]) {
        const auto part = [](__m128i h, __m128i l) {
            return U64(_mm256_or_si256(_mm256_slli_epi64(_mm256_cvtepu32_epi64(h), 32), _mm256_cvtepu32_epi64(l)));
        };
        out[0] = part(_mm256_castsi256_si128(hi.v), _mm256_castsi256_si128(lo.v));
        out[1] = part(_mm256_extracti128_si256(hi.v, 1), _mm256_extracti128_si256(lo.v, 1));
    }
    // out[i] = lane i of v[0] then v[1] (the group's 8 blocks).
    static void store64(double *out, const F64 v[2]) { _mm256_storeu_pd(out, v[0].v), _mm256_storeu_pd(out + 4, v[1].v); }
    // out[2i] = a lane i, out[2i + 1] = b lane i, over the group's blocks.
    static void store_pairs64(double *out, const F64 a[2], const F64 b[2]) {
        for (int k = 0; k < 2; ++k) {
            const __m256d lo = _mm256_unpacklo_pd(a[k].v, b[k].v), hi = _mm256_unpackhi_pd(a[k].v, b[k].v);
            _mm256_storeu_pd(out + 8 * k, _mm256_permute2f128_pd(lo, hi, 0x20));
            _mm256_storeu_pd(out + 8 * k + 4, _mm256_permute2f128_pd(lo, hi, 0x31));
        }
    }
};
#endif

#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__)
// -- AVX-512: 16 x 32-bit, 8 x 64-bit lanes; masks in k registers -------------

struct U32x16 {
    __m512i v;
    U32x16() = default;
    explicit U32x16(uint32_t x) : v(_mm512_set1_epi32(static_cast<int>(x))) {}
    explicit U32x16(__m512i x) : v(x) {}
};
struct M32x16 {
    __mmask16 k;
};
struct F32x16 {
    __m512 v;
    F32x16() = default;
    explicit F32x16(float x) : v(_mm512_set1_ps(x)) {}
    explicit F32x16(__m512 x) : v(x) {}
};
struct U64x8 {
    __m512i v;
    U64x8() = default;
    explicit U64x8(uint64_t x) : v(_mm512_set1_epi64(static_cast<long long>(x))) {}
    explicit U64x8(__m512i x) : v(x) {}
};
struct M64x8 {
    __mmask8 k;
};
struct F64x8 {
    __m512d v;
    F64x8() = default;
    explicit F64x8(double x) : v(_mm512_set1_pd(x)) {}
    explicit F64x8(__m512d x) : v(x) {}
};

inline U32x16 operator&(U32x16 a, U32x16 b) { return U32x16(_mm512_and_si512(a.v, b.v)); }
inline U32x16 operator|(U32x16 a, U32x16 b) { return U32x16(_mm512_or_si512(a.v, b.v)); }
inline U32x16 operator^(U32x16 a, U32x16 b) { return U32x16(_mm512_xor_si512(a.v, b.v)); }
inline U32x16 operator+(U32x16 a, U32x16 b) { return U32x16(_mm512_add_epi32(a.v, b.v)); }
inline U32x16 operator-(U32x16 a, U32x16 b) { return U32x16(_mm512_sub_epi32(a.v, b.v)); }
inline U32x16 operator<<(U32x16 a, int n) { return U32x16(_mm512_slli_epi32(a.v, static_cast<unsigned>(n))); }
inline U32x16 operator>>(U32x16 a, int n) { return U32x16(_mm512_srli_epi32(a.v, static_cast<unsigned>(n))); }
inline M32x16 operator==(U32x16 a, U32x16 b) { return M32x16{_mm512_cmpeq_epi32_mask(a.v, b.v)}; }
inline M32x16 operator>(U32x16 a, U32x16 b) { return M32x16{_mm512_cmpgt_epi32_mask(a.v, b.v)}; }
inline M32x16 operator<(U32x16 a, U32x16 b) { return M32x16{_mm512_cmplt_epi32_mask(a.v, b.v)}; }

inline F32x16 operator+(F32x16 a, F32x16 b) { return F32x16(_mm512_add_ps(a.v, b.v)); }
inline F32x16 operator-(F32x16 a, F32x16 b) { return F32x16(_mm512_sub_ps(a.v, b.v)); }
inline F32x16 operator*(F32x16 a, F32x16 b) { return F32x16(_mm512_mul_ps(a.v, b.v)); }
inline M32x16 operator>(F32x16 a, F32x16 b) { return M32x16{_mm512_cmp_ps_mask(a.v, b.v, _CMP_GT_OQ)}; }
inline M32x16 operator==(F32x16 a, F32x16 b) { return M32x16{_mm512_cmp_ps_mask(a.v, b.v, _CMP_EQ_OQ)}; }

inline U64x8 operator&(U64x8 a, U64x8 b) { return U64x8(_mm512_and_si512(a.v, b.v)); }
inline U64x8 operator|(U64x8 a, U64x8 b) { return U64x8(_mm512_or_si512(a.v, b.v)); }
inline U64x8 operator^(U64x8 a, U64x8 b) { return U64x8(_mm512_xor_si512(a.v, b.v)); }
inline U64x8 operator+(U64x8 a, U64x8 b) { return U64x8(_mm512_add_epi64(a.v, b.v)); }
inline U64x8 operator-(U64x8 a, U64x8 b) { return U64x8(_mm512_sub_epi64(a.v, b.v)); }
inline U64x8 operator<<(U64x8 a, int n) { return U64x8(_mm512_slli_epi64(a.v, static_cast<unsigned>(n))); }
inline U64x8 operator>>(U64x8 a, int n) { return U64x8(_mm512_srli_epi64(a.v, static_cast<unsigned>(n))); }
inline M64x8 operator==(U64x8 a, U64x8 b) { return M64x8{_mm512_cmpeq_epi64_mask(a.v, b.v)}; }
inline M64x8 operator>(U64x8 a, U64x8 b) { return M64x8{_mm512_cmpgt_epi64_mask(a.v, b.v)}; }

inline F64x8 operator+(F64x8 a, F64x8 b) { return F64x8(_mm512_add_pd(a.v, b.v)); }
inline F64x8 operator-(F64x8 a, F64x8 b) { return F64x8(_mm512_sub_pd(a.v, b.v)); }
inline F64x8 operator*(F64x8 a, F64x8 b) { return F64x8(_mm512_mul_pd(a.v, b.v)); }
inline M64x8 operator>(F64x8 a, F64x8 b) { return M64x8{_mm512_cmp_pd_mask(a.v, b.v, _CMP_GT_OQ)}; }
inline M64x8 operator==(F64x8 a, F64x8 b) { return M64x8{_mm512_cmp_pd_mask(a.v, b.v, _CMP_EQ_OQ)}; }

inline U32x16 bits(F32x16 a) { return U32x16(_mm512_castps_si512(a.v)); }
inline F32x16 from_bits(U32x16 a) { return F32x16(_mm512_castsi512_ps(a.v)); }
inline U64x8 bits(F64x8 a) { return U64x8(_mm512_castpd_si512(a.v)); }
inline F64x8 from_bits(U64x8 a) { return F64x8(_mm512_castsi512_pd(a.v)); }

inline F32x16 select(M32x16 m, F32x16 a, F32x16 b) { return F32x16(_mm512_mask_blend_ps(m.k, b.v, a.v)); }
inline U32x16 select(M32x16 m, U32x16 a, U32x16 b) { return U32x16(_mm512_mask_blend_epi32(m.k, b.v, a.v)); }
inline F64x8 select(M64x8 m, F64x8 a, F64x8 b) { return F64x8(_mm512_mask_blend_pd(m.k, b.v, a.v)); }
inline U64x8 select(M64x8 m, U64x8 a, U64x8 b) { return U64x8(_mm512_mask_blend_epi64(m.k, b.v, a.v)); }
inline M32x16 mask_xor(M32x16 a, M32x16 b) { return M32x16{static_cast<__mmask16>(a.k ^ b.k)}; }
inline M64x8 mask_xor(M64x8 a, M64x8 b) { return M64x8{static_cast<__mmask8>(a.k ^ b.k)}; }

inline F32x16 int_to_float(U32x16 a) { return F32x16(_mm512_cvtepi32_ps(a.v)); }
inline F32x16 uint_to_float(U32x16 a) { return F32x16(_mm512_cvtepu32_ps(a.v)); }
inline F64x8 int_to_float(U64x8 a) { return F64x8(_mm512_cvtepi64_pd(a.v)); }
inline F64x8 uint_to_float(U64x8 a) { return F64x8(_mm512_cvtepu64_pd(a.v)); }
inline void split_floor(F32x16 t, F32x16 *whole, U32x16 *q) {
    *whole = F32x16(_mm512_roundscale_ps(t.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    *q = U32x16(_mm512_cvttps_epi32(t.v));
}
inline void split_floor(F64x8 t, F64x8 *whole, U64x8 *q) {
    *whole = F64x8(_mm512_roundscale_pd(t.v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC));
    *q = U64x8(_mm512_cvttpd_epi64(t.v));
}
// AVX-512F has FMA: the exact product and the sum in one instruction, one rounding as before.
inline F32x16 mul_add_exact(F32x16 a, F32x16 b, F32x16 c) { return F32x16(_mm512_fmadd_ps(a.v, b.v, c.v)); }
inline F64x8 mul_add_exact(F64x8 a, F64x8 b, F64x8 c) { return F64x8(_mm512_fmadd_pd(a.v, b.v, c.v)); }

// The normal transform's groups on AVX-512: 16 Philox blocks.
struct Avx512Lanes {
    using U32 = U32x16;
    using F32 = F32x16;
    using U64 = U64x8;
    using F64 = F64x8;
    static constexpr size_t kBlocks = 16;
    static constexpr size_t kWide = 2;

    // x[j] lane i = word j of block i (the 64 words at w, 4 per block).
    static void load_blocks(const uint32_t *w, U32 x[4]) {
        // r_m: blocks 4m .. 4m+3, one per 128-bit group; q_k: blocks k, 4+k, 8+k, 12+k.
        const __m512i r0 = _mm512_loadu_si512(w), r1 = _mm512_loadu_si512(w + 16);
        const __m512i r2 = _mm512_loadu_si512(w + 32), r3 = _mm512_loadu_si512(w + 48);
        const __m512i s0 = _mm512_shuffle_i32x4(r0, r1, 0x44), s1 = _mm512_shuffle_i32x4(r0, r1, 0xEE);
        const __m512i s2 = _mm512_shuffle_i32x4(r2, r3, 0x44), s3 = _mm512_shuffle_i32x4(r2, r3, 0xEE);
        const __m512i q0 = _mm512_shuffle_i32x4(s0, s2, 0x88), q1 = _mm512_shuffle_i32x4(s0, s2, 0xDD);
        const __m512i q2 = _mm512_shuffle_i32x4(s1, s3, 0x88), q3 = _mm512_shuffle_i32x4(s1, s3, 0xDD);
        const __m512i t0 = _mm512_unpacklo_epi32(q0, q1), t1 = _mm512_unpackhi_epi32(q0, q1);
        const __m512i t2 = _mm512_unpacklo_epi32(q2, q3), t3 = _mm512_unpackhi_epi32(q2, q3);
        x[0] = U32(_mm512_unpacklo_epi64(t0, t2)), x[1] = U32(_mm512_unpackhi_epi64(t0, t2));
        x[2] = U32(_mm512_unpacklo_epi64(t1, t3)), x[3] = U32(_mm512_unpackhi_epi64(t1, t3));
    }
    // The inverse: four vectors of four whole blocks each, blocks 0-3, 4-7, 8-11, 12-15.
    static void to_blocks(const U32 y[4], __m512i o[4]) {
        const __m512i t0 = _mm512_unpacklo_epi32(y[0].v, y[1].v), t1 = _mm512_unpackhi_epi32(y[0].v, y[1].v);
        const __m512i t2 = _mm512_unpacklo_epi32(y[2].v, y[3].v), t3 = _mm512_unpackhi_epi32(y[2].v, y[3].v);
        // 128-bit group g of u_k holds block 4g + k.
        const __m512i u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
        const __m512i u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
        const __m512i v0 = _mm512_shuffle_i32x4(u0, u1, 0x44), v1 = _mm512_shuffle_i32x4(u2, u3, 0x44);
        const __m512i v2 = _mm512_shuffle_i32x4(u0, u1, 0xEE), v3 = _mm512_shuffle_i32x4(u2, u3, 0xEE);
        o[0] = _mm512_shuffle_i32x4(v0, v1, 0x88), o[1] = _mm512_shuffle_i32x4(v0, v1, 0xDD);
        o[2] = _mm512_shuffle_i32x4(v2, v3, 0x88), o[3] = _mm512_shuffle_i32x4(v2, v3, 0xDD);
    }
    static void store_blocks(uint32_t *out, const U32 y[4]) {
        __m512i o[4];
        to_blocks(y, o);
        for (int k = 0; k < 4; ++k) _mm512_storeu_si512(out + 16 * k, o[k]);
    }
    static void store_blocks16(uint16_t *out, const U32 y[4]) {
        __m512i o[4];
        to_blocks(y, o);
        for (int k = 0; k < 4; ++k)
            _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + 16 * k), _mm512_cvtepi32_epi16(o[k]));
    }
    static void store(uint32_t *out, U32 y) { _mm512_storeu_si512(out, y.v); }
    static void store16(uint16_t *out, U32 y) {
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(out), _mm512_cvtepi32_epi16(y.v));
    }
    static void widen(U32 hi, U32 lo, U64 out[2]) {
        const auto part = [](__m256i h, __m256i l) {
            return U64(_mm512_or_si512(_mm512_slli_epi64(_mm512_cvtepu32_epi64(h), 32), _mm512_cvtepu32_epi64(l)));
        };
        out[0] = part(_mm512_castsi512_si256(hi.v), _mm512_castsi512_si256(lo.v));
        out[1] = part(_mm512_extracti64x4_epi64(hi.v, 1), _mm512_extracti64x4_epi64(lo.v, 1));
    }
    static void store64(double *out, const F64 v[2]) { _mm512_storeu_pd(out, v[0].v), _mm512_storeu_pd(out + 8, v[1].v); }
    static void store_pairs64(double *out, const F64 a[2], const F64 b[2]) {
        const __m512i first = _mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), second = _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15);
        for (int k = 0; k < 2; ++k) {
            _mm512_storeu_pd(out + 16 * k, _mm512_permutex2var_pd(a[k].v, first, b[k].v));
            _mm512_storeu_pd(out + 16 * k + 8, _mm512_permutex2var_pd(a[k].v, second, b[k].v));
        }
    }
};
#endif

}  // namespace simd

// The vectors' element, bit and mask types, for det_math.h's templates.
namespace det {
namespace {
#if defined(__AVX2__)
template <>
struct Lanes<simd::F32x8> {
    using F = float;
    using U = simd::U32x8;
    using M = simd::M32x8;
};
template <>
struct Lanes<simd::F64x4> {
    using F = double;
    using U = simd::U64x4;
    using M = simd::M64x4;
};
#endif
#if defined(__AVX512F__) && defined(__AVX512DQ__) && defined(__AVX512BW__)
template <>
struct Lanes<simd::F32x16> {
    using F = float;
    using U = simd::U32x16;
    using M = simd::M32x16;
};
template <>
struct Lanes<simd::F64x8> {
    using F = double;
    using U = simd::U64x8;
    using M = simd::M64x8;
};
#endif
}  // namespace
}  // namespace det
}  // namespace rngtrk
