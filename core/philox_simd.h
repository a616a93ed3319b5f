/* SPDX-License-Identifier: Apache-2.0 */
// Philox4x32-10 on many blocks at once with x86 SIMD intrinsics, for the
// AVX2 and AVX-512 engines.  Lane l of x0..x3 holds word 0..3 of block l;
// each round is the scalar round of philox.h (same constants), done with
// 32x32->64-bit multiplies of the even and odd lanes.  Included only by
// files compiled for the matching target.
#pragma once

#include <immintrin.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "philox.h"
#include "elements.h"
#include "uniform_words.h"

namespace rngtrk {
namespace simd {

#if defined(__AVX2__)
struct Avx2 {
    using V = __m256i;
    static constexpr size_t kLanes = 8;
    static V load(const uint32_t *p) { return _mm256_loadu_si256(reinterpret_cast<const V *>(p)); }
    static V set1(uint32_t x) { return _mm256_set1_epi32(static_cast<int>(x)); }
    static V add(V a, V b) { return _mm256_add_epi32(a, b); }
    static V iota() { return _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); }
    using F = __m256;
    static V and_(V a, uint32_t m) { return _mm256_and_si256(a, set1(m)); }
    static V shr(V a, int n) { return _mm256_srli_epi32(a, n); }
    static F cvt(V a) { return _mm256_cvtepi32_ps(a); }  // signed: values < 2^31 here
    // (float)w for any u32, rounded once: AVX2 has no unsigned conversion,
    // so the two exact 16-bit halves are added (one rounding, same result).
    static F cvt_u32(V a) { return addf(mulf(cvt(shr(a, 16)), setf(65536.0f)), cvt(and_(a, 0xFFFFu))); }
    static F setf(float x) { return _mm256_set1_ps(x); }
    static F mulf(F a, F b) { return _mm256_mul_ps(a, b); }
    static F addf(F a, F b) { return _mm256_add_ps(a, b); }
    static F zero_where(F u, float x) {  // u == x ? 0 : u
        return _mm256_andnot_ps(_mm256_cmp_ps(u, setf(x), _CMP_EQ_OQ), u);
    }
    static V bits(F a) { return _mm256_castps_si256(a); }
    static V xor3(V a, V b, V c) { return _mm256_xor_si256(_mm256_xor_si256(a, b), c); }
    // hi and lo halves of the 64-bit products a * m, lane by lane.
    static void mulhilo(V a, V m, V *hi, V *lo) {
        const V even = _mm256_mul_epu32(a, m);
        const V odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
        *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
        *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
    }
    // Writes 8 blocks as 32 words, block by block, each vector of 8
    // consecutive words passed through `epi` first.
    template <class Epi>
    static void store_aos(uint32_t *out, V x0, V x1, V x2, V x3, const Epi &epi) {
        const V t0 = _mm256_unpacklo_epi32(x0, x1), t1 = _mm256_unpackhi_epi32(x0, x1);
        const V t2 = _mm256_unpacklo_epi32(x2, x3), t3 = _mm256_unpackhi_epi32(x2, x3);
        const V b04 = _mm256_unpacklo_epi64(t0, t2), b15 = _mm256_unpackhi_epi64(t0, t2);
        const V b26 = _mm256_unpacklo_epi64(t1, t3), b37 = _mm256_unpackhi_epi64(t1, t3);
        V *o = reinterpret_cast<V *>(out);
        _mm256_storeu_si256(o + 0, epi(_mm256_permute2x128_si256(b04, b15, 0x20)));
        _mm256_storeu_si256(o + 1, epi(_mm256_permute2x128_si256(b26, b37, 0x20)));
        _mm256_storeu_si256(o + 2, epi(_mm256_permute2x128_si256(b04, b15, 0x31)));
        _mm256_storeu_si256(o + 3, epi(_mm256_permute2x128_si256(b26, b37, 0x31)));
    }
};
#endif

#if defined(__AVX512F__)
struct Avx512 {
    using V = __m512i;
    static constexpr size_t kLanes = 16;
    static V load(const uint32_t *p) { return _mm512_loadu_si512(p); }
    static V set1(uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }
    static V add(V a, V b) { return _mm512_add_epi32(a, b); }
    static V iota() { return _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15); }
    using F = __m512;
    static V and_(V a, uint32_t m) { return _mm512_and_si512(a, set1(m)); }
    static V shr(V a, int n) { return _mm512_srli_epi32(a, static_cast<unsigned>(n)); }
    static F cvt(V a) { return _mm512_cvtepi32_ps(a); }
    static F cvt_u32(V a) { return _mm512_cvtepu32_ps(a); }  // rounded once, like the scalar split
    static F setf(float x) { return _mm512_set1_ps(x); }
    static F mulf(F a, F b) { return _mm512_mul_ps(a, b); }
    static F addf(F a, F b) { return _mm512_add_ps(a, b); }
    static F zero_where(F u, float x) {
        return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(u, setf(x), _CMP_NEQ_UQ), u);
    }
    static V bits(F a) { return _mm512_castps_si512(a); }
    static V xor3(V a, V b, V c) { return _mm512_ternarylogic_epi32(a, b, c, 0x96); }
    static void mulhilo(V a, V m, V *hi, V *lo) {
        const V even = _mm512_mul_epu32(a, m);
        const V odd = _mm512_mul_epu32(_mm512_srli_epi64(a, 32), m);
        *hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64(even, 32), odd);
        *lo = _mm512_mask_blend_epi32(0xAAAA, even, _mm512_slli_epi64(odd, 32));
    }
    template <class Epi>
    static void store_aos(uint32_t *out, V x0, V x1, V x2, V x3, const Epi &epi) {
        const V t0 = _mm512_unpacklo_epi32(x0, x1), t1 = _mm512_unpackhi_epi32(x0, x1);
        const V t2 = _mm512_unpacklo_epi32(x2, x3), t3 = _mm512_unpackhi_epi32(x2, x3);
        // 128-bit lane L of u_k holds block 4L + k.
        const V u0 = _mm512_unpacklo_epi64(t0, t2), u1 = _mm512_unpackhi_epi64(t0, t2);
        const V u2 = _mm512_unpacklo_epi64(t1, t3), u3 = _mm512_unpackhi_epi64(t1, t3);
        const V v0 = _mm512_shuffle_i32x4(u0, u1, 0x44), v1 = _mm512_shuffle_i32x4(u2, u3, 0x44);
        const V v2 = _mm512_shuffle_i32x4(u0, u1, 0xEE), v3 = _mm512_shuffle_i32x4(u2, u3, 0xEE);
        _mm512_storeu_si512(out + 0, epi(_mm512_shuffle_i32x4(v0, v1, 0x88)));
        _mm512_storeu_si512(out + 16, epi(_mm512_shuffle_i32x4(v0, v1, 0xDD)));
        _mm512_storeu_si512(out + 32, epi(_mm512_shuffle_i32x4(v2, v3, 0x88)));
        _mm512_storeu_si512(out + 48, epi(_mm512_shuffle_i32x4(v2, v3, 0xDD)));
    }
};
#endif

// Epilogues applied to each vector of consecutive output words before it is
// stored, with a scalar twin for the tail.  The uniform ones repeat, op for
// op, the scalar transforms of uniform_words.h and sample_engine.inc
// (low + u * range, no fused multiply-add), so the bits are the same.
struct KeepWords {
    template <class V>
    V operator()(V w) const { return w; }
    uint32_t scalar(uint32_t w) const { return w; }
};

template <class Isa>
struct UniformF32 {
    // Whose uniform: nvfuser's (float)w * 2^-32 + 2^-33 with 1 -> 0, or
    // stateless's (w & 0xFFFFFF) * 2^-24.
    Layout layout;
    float low, range;
    typename Isa::V operator()(typename Isa::V w) const {
        typename Isa::F u;
        if (layout == Layout::nvfuser) {
            u = Isa::cvt_u32(w);
            u = Isa::zero_where(Isa::addf(Isa::mulf(u, Isa::setf(0x1p-32f)), Isa::setf(0x1p-33f)), 1.0f);
        } else {
            u = Isa::mulf(Isa::cvt(Isa::and_(w, 0xFFFFFFu)), Isa::setf(0x1p-24f));
        }
        return Isa::bits(Isa::addf(Isa::setf(low), Isa::mulf(u, Isa::setf(range))));
    }
    uint32_t scalar(uint32_t w) const {
        // high is not used by these two layouts.
        const float v = layout == Layout::nvfuser ? uniform_f32<Layout::nvfuser>(w, low, range, 0.0f)
                                                  : uniform_f32<Layout::stateless>(w, low, range, 0.0f);
        uint32_t b;
        std::memcpy(&b, &v, sizeof b);
        return b;
    }
};

// Philox4x32-10 of the n blocks whose counters are `start` with word
// `inc_word` (0 or 2) increased by 0, 1, ..., n - 1 (the caller guarantees
// that this word does not wrap).  Each 2 * Isa::kLanes blocks from i on go
// to on_lanes(i, a, b) as lanes: a[j] lane l = word j of block i + l, b[j]
// the same for block i + kLanes + l (two independent vector chains hide the
// multiply latency); each block of the tail, by the scalar round, to
// on_block(i, block).
template <class Isa, class OnLanes, class OnBlock>
void philox_blocks(const uint32_t start[4], int inc_word, size_t n, uint32_t k0, uint32_t k1,
                   const OnLanes &on_lanes, const OnBlock &on_block) {
    using V = typename Isa::V;
    using namespace philox_detail;
    constexpr size_t L = Isa::kLanes;
    const V m0 = Isa::set1(kMul0), m1 = Isa::set1(kMul1);
    const V iota = Isa::iota();
    size_t i = 0;
    for (; i + 2 * L <= n; i += 2 * L) {
        const V base = Isa::add(Isa::set1(start[inc_word] + static_cast<uint32_t>(i)), iota);
        const V next = Isa::add(base, Isa::set1(static_cast<uint32_t>(L)));
        V a[4] = {Isa::set1(start[0]), Isa::set1(start[1]), Isa::set1(start[2]), Isa::set1(start[3])};
        V b[4] = {a[0], a[1], a[2], a[3]};
        a[inc_word] = base, b[inc_word] = next;
        uint32_t key0 = k0, key1 = k1;
        for (int r = 0; r < kRounds; ++r) {
            const V kk0 = Isa::set1(key0), kk1 = Isa::set1(key1);
            V ahi0, alo0, ahi1, alo1, bhi0, blo0, bhi1, blo1;
            Isa::mulhilo(a[0], m0, &ahi0, &alo0);
            Isa::mulhilo(a[2], m1, &ahi1, &alo1);
            Isa::mulhilo(b[0], m0, &bhi0, &blo0);
            Isa::mulhilo(b[2], m1, &bhi1, &blo1);
            a[0] = Isa::xor3(ahi1, a[1], kk0), a[1] = alo1, a[2] = Isa::xor3(ahi0, a[3], kk1), a[3] = alo0;
            b[0] = Isa::xor3(bhi1, b[1], kk0), b[1] = blo1, b[2] = Isa::xor3(bhi0, b[3], kk1), b[3] = blo0;
            key0 += kWeyl0, key1 += kWeyl1;
        }
        on_lanes(i, a, b);
    }
    for (; i < n; ++i) {
        uint32_t c[4] = {start[0], start[1], start[2], start[3]};
        c[inc_word] += static_cast<uint32_t>(i);
        on_block(i, philox4x32_10(c[0], c[1], c[2], c[3], k0, k1));
    }
}

// The words of those blocks, block by block, each vector of consecutive
// output words passed through `epi` first.
template <class Isa, class Epi = KeepWords>
void philox_batch_seq(const uint32_t start[4], int inc_word, size_t n, uint32_t k0, uint32_t k1,
                      uint32_t *words, const Epi &epi = Epi()) {
    using V = typename Isa::V;
    philox_blocks<Isa>(
        start, inc_word, n, k0, k1,
        [&](size_t i, const V a[4], const V b[4]) {
            Isa::store_aos(words + 4 * i, a[0], a[1], a[2], a[3], epi);
            Isa::store_aos(words + 4 * (i + Isa::kLanes), b[0], b[1], b[2], b[3], epi);
        },
        [&](size_t i, const PhiloxBlock &b) {
            for (int j = 0; j < 4; ++j) words[4 * i + j] = epi.scalar(b.w[j]);
        });
}

}  // namespace simd
}  // namespace rngtrk
