/* SPDX-License-Identifier: Apache-2.0 */
// The normal transform of the CPU engines (sample_engine.inc): whole
// Philox blocks to elements, S::kBlocks blocks at a time.  S is a lane set:
// ScalarLanes below (one block), simd::Avx2Lanes (8) or simd::Avx512Lanes
// (16) from simd_lanes.h, or DoubleLanes of one of them (twice as many).
// A lane set loads the words of its blocks as lanes (lane i = block i), or
// takes them from the Philox registers (sample_simd_engine.inc), and
// stores lanes back in the layout's order; the element values come from
// elements.h's templates, the same source the scalar engine and the CUDA
// kernels instantiate, so every path gives the same bits.  Blocks left
// over after the last whole group take smaller groups, down to one block.
#pragma once

#include <cstddef>
#include <cstdint>

#include "det_math.h"
#include "elements.h"
#include "lane_twice.h"
#include "sample_kinds.h"
#include "sample_spec.h"

namespace rngtrk {
// Internal linkage: see det_math.h (each CPU target keeps its own copy).
namespace {

// One block as scalar lanes.
struct ScalarLanes {
    using U32 = uint32_t;
    using F32 = float;
    using U64 = uint64_t;
    using F64 = double;
    static constexpr size_t kBlocks = 1;  // blocks per group: the lanes of U32
    static constexpr size_t kWide = 1;    // U64 values per U32 value

    static void load_blocks(const uint32_t *w, U32 x[4]) {
        for (int j = 0; j < 4; ++j) x[j] = w[j];
    }
    static void store_blocks(uint32_t *out, const U32 y[4]) {
        for (int j = 0; j < 4; ++j) out[j] = y[j];
    }
    static void store_blocks16(uint16_t *out, const U32 y[4]) {
        for (int j = 0; j < 4; ++j) out[j] = static_cast<uint16_t>(y[j]);
    }
    static void store(uint32_t *out, U32 y) { *out = y; }
    static void store16(uint16_t *out, U32 y) { *out = static_cast<uint16_t>(y); }
    static void widen(U32 hi, U32 lo, U64 out[1]) { out[0] = uint64_t{hi} << 32 | lo; }
    static void store64(double *out, const F64 v[1]) { *out = v[0]; }
    static void store_pairs64(double *out, const F64 a[1], const F64 b[1]) { out[0] = a[0], out[1] = b[0]; }
};

// Two groups of S as one: lanes are det::Twice of S's, the first half of
// the blocks in .a, the second in .b.  The normal transform's dependency
// chains (Newton steps, series) then come twice as many, interleaved op by
// op, which a CPU needs to fill its pipelines: one Box-Muller has a long
// chain of ~155 cycles' latency (AVX-512 on Zen 4) for ~115 instructions.
template <class S>
struct DoubleLanes {
    using Half = S;
    using U32 = det::Twice<typename S::U32>;
    using F32 = det::Twice<typename S::F32>;
    using U64 = det::Twice<typename S::U64>;
    using F64 = det::Twice<typename S::F64>;
    static constexpr size_t kBlocks = 2 * S::kBlocks;
    static constexpr size_t kWide = S::kWide;

    static void load_blocks(const uint32_t *w, U32 x[4]) {
        typename S::U32 a[4], b[4];
        S::load_blocks(w, a);
        S::load_blocks(w + 4 * S::kBlocks, b);
        for (int j = 0; j < 4; ++j) x[j] = U32(a[j], b[j]);
    }
    template <class Store>
    static void halves(const U32 y[4], const Store &store) {
        typename S::U32 a[4], b[4];
        for (int j = 0; j < 4; ++j) a[j] = y[j].a, b[j] = y[j].b;
        store(a, 0), store(b, S::kBlocks);
    }
    static void store_blocks(uint32_t *out, const U32 y[4]) {
        halves(y, [&](const typename S::U32 *h, size_t at) { S::store_blocks(out + 4 * at, h); });
    }
    static void store_blocks16(uint16_t *out, const U32 y[4]) {
        halves(y, [&](const typename S::U32 *h, size_t at) { S::store_blocks16(out + 4 * at, h); });
    }
    static void store(uint32_t *out, U32 y) { S::store(out, y.a), S::store(out + S::kBlocks, y.b); }
    static void store16(uint16_t *out, U32 y) { S::store16(out, y.a), S::store16(out + S::kBlocks, y.b); }
    static void widen(U32 hi, U32 lo, U64 out[kWide]) {
        typename S::U64 a[kWide], b[kWide];
        S::widen(hi.a, lo.a, a);
        S::widen(hi.b, lo.b, b);
        for (size_t k = 0; k < kWide; ++k) out[k] = U64(a[k], b[k]);
    }
    static void store64(double *out, const F64 v[kWide]) {
        typename S::F64 a[kWide], b[kWide];
        for (size_t k = 0; k < kWide; ++k) a[k] = v[k].a, b[k] = v[k].b;
        S::store64(out, a), S::store64(out + S::kBlocks, b);
    }
    static void store_pairs64(double *out, const F64 z0[kWide], const F64 z1[kWide]) {
        typename S::F64 a0[kWide], a1[kWide], b0[kWide], b1[kWide];
        for (size_t k = 0; k < kWide; ++k) a0[k] = z0[k].a, a1[k] = z1[k].a, b0[k] = z0[k].b, b1[k] = z1[k].b;
        S::store_pairs64(out, a0, a1), S::store_pairs64(out + 2 * S::kBlocks, b0, b1);
    }
};

// The lane set for the blocks a group of S leaves over: S's half for a
// DoubleLanes, else the scalar lanes.
template <class S>
struct Smaller {
    using type = ScalarLanes;
};
template <class S>
struct Smaller<DoubleLanes<S>> {
    using type = S;
};

// Runs body(S(), i) for each whole group of blocks [i, i + S::kBlocks) of
// [0, n), then the blocks left in smaller groups, down to one block.
template <class S, class Body>
inline void in_groups(size_t n, const Body &body, size_t i = 0) {
    for (; i + S::kBlocks <= n; i += S::kBlocks) body(S(), i);
    if constexpr (S::kBlocks > 1) in_groups<typename Smaller<S>::type>(n, body, i);
}

// The float lanes' bits, for the integer stores.
template <class V>
inline typename det::Lanes<V>::U bits_of(V v) {
    using det::bits;
    return bits(v);
}

// The z0, z1 of both pairs of each block of the lanes x (x[j] lane i =
// word j of block i): z[0], z[1] from units (0, 1), z[2], z[3] from units
// (2, 3), scaled by the spec's mean and std.  The two pairs run as one
// det::Twice (lane_twice.h).
template <Layout L, class S>
RNGTRK_FLATTEN void normal_f32_group(const SampleSpec &s, const typename S::U32 x[4], typename S::F32 z[4]) {
    using F32 = typename S::F32;
    using U2 = det::Twice<typename S::U32>;
    det::Twice<F32> z0, z1;
    normal_z_f32<L>(U2(x[0], x[2]), U2(x[1], x[3]), &z0, &z1);
    const F32 mean(s.mean32), sd(s.std32);
    z[0] = scaled(z0.a, mean, sd), z[1] = scaled(z1.a, mean, sd);
    z[2] = scaled(z0.b, mean, sd), z[3] = scaled(z1.b, mean, sd);
}

// f64: units (w0, w1) and (w2, w3) of block i as the 64-bit lanes a[k], b[k]
// (k = i / (kBlocks / kWide)), their z0, z1 scaled.
template <Layout L, class S>
RNGTRK_FLATTEN void normal_f64_group(const SampleSpec &s, const typename S::U32 x[4], typename S::F64 z0[S::kWide],
                             typename S::F64 z1[S::kWide]) {
    using F64 = typename S::F64;
    typename S::U64 a[S::kWide], b[S::kWide];
    S::widen(x[0], x[1], a);
    S::widen(x[2], x[3], b);
    if constexpr (S::kWide == 2) {  // both halves as one det::Twice
        using U2 = det::Twice<typename S::U64>;
        det::Twice<F64> t0, t1;
        normal_z_f64<L>(U2(a[0], a[1]), U2(b[0], b[1]), &t0, &t1);
        z0[0] = t0.a, z0[1] = t0.b, z1[0] = t1.a, z1[1] = t1.b;
    } else {
        for (size_t k = 0; k < S::kWide; ++k) normal_z_f64<L>(a[k], b[k], &z0[k], &z1[k]);
    }
    const F64 mean(s.mean64), sd(s.std64);
    for (size_t k = 0; k < S::kWide; ++k) z0[k] = scaled(z0[k], mean, sd), z1[k] = scaled(z1[k], mean, sd);
}

// -- the layouts ------------------------------------------------------------------

// stateless and nvfuser: the elements of one group's blocks, given as lanes
// (straight from the Philox registers, or loaded), at `out`, block after
// block (E elements each).
template <Layout L, class S>
RNGTRK_FLATTEN void normal_in_order_lanes(const SampleSpec &s, const typename S::U32 x[4], void *out) {
    if (s.dtype == DType::f64) {
        typename S::F64 z0[S::kWide], z1[S::kWide];
        normal_f64_group<L, S>(s, x, z0, z1);
        S::store_pairs64(static_cast<double *>(out), z0, z1);
        return;
    }
    typename S::F32 z[4];
    normal_f32_group<L, S>(s, x, z);
    typename S::U32 y[4];
    if (s.dtype == DType::f32) {
        for (int j = 0; j < 4; ++j) y[j] = bits_of(z[j]);
        S::store_blocks(static_cast<uint32_t *>(out), y);
    } else {
        for (int j = 0; j < 4; ++j)
            y[j] = s.dtype == DType::f16 ? round_16<DType::f16>(z[j]) : round_16<DType::bf16>(z[j]);
        S::store_blocks16(static_cast<uint16_t *>(out), y);
    }
}

// The same for blocks [0, n) whose words are at `words`.
template <Layout L, class S>
void normal_in_order(const SampleSpec &s, const uint32_t *words, size_t n, void *out) {
    const size_t block_bytes = units_per_block(Dist::normal, s.dtype) * element_bytes(s.dtype);
    in_groups<S>(n, [&](auto lanes, size_t i) {
        using Ln = decltype(lanes);
        typename Ln::U32 x[4];
        Ln::load_blocks(words + 4 * i, x);
        normal_in_order_lanes<L, Ln>(s, x, static_cast<unsigned char *>(out) + i * block_bytes);
    });
}

// torch-eager-cuda: block t of [0, n) is thread t of a slab; its unit i
// goes to rows[i][t] (four rows, or two for f64).
template <class S>
void normal_eager(const SampleSpec &s, const uint32_t *words, size_t n, void *const rows[4]) {
    constexpr Layout L = Layout::eager_cuda;
    in_groups<S>(n, [&](auto lanes, size_t t) {
        using Ln = decltype(lanes);
        typename Ln::U32 x[4];
        Ln::load_blocks(words + 4 * t, x);
        if (s.dtype == DType::f64) {
            typename Ln::F64 z0[Ln::kWide], z1[Ln::kWide];
            normal_f64_group<L, Ln>(s, x, z0, z1);
            Ln::store64(static_cast<double *>(rows[0]) + t, z0);
            Ln::store64(static_cast<double *>(rows[1]) + t, z1);
            return;
        }
        typename Ln::F32 z[4];
        normal_f32_group<L, Ln>(s, x, z);
        for (int j = 0; j < 4; ++j) {
            if (s.dtype == DType::f32) Ln::store(static_cast<uint32_t *>(rows[j]) + t, bits_of(z[j]));
            else if (s.dtype == DType::f16) Ln::store16(static_cast<uint16_t *>(rows[j]) + t, round_16<DType::f16>(z[j]));
            else Ln::store16(static_cast<uint16_t *>(rows[j]) + t, round_16<DType::bf16>(z[j]));
        }
    });
}

// triton: one element per block, from its own words (elements.h).
template <class S>
void normal_triton(const SampleSpec &s, const uint32_t *words, size_t n, void *out) {
    in_groups<S>(n, [&](auto lanes, size_t i) {
        using Ln = decltype(lanes);
        typename Ln::U32 x[4];
        Ln::load_blocks(words + 4 * i, x);
        if (s.dtype == DType::f64) {
            typename Ln::U64 a[Ln::kWide], b[Ln::kWide];
            Ln::widen(x[0], x[1], a);
            Ln::widen(x[2], x[3], b);
            const typename Ln::F64 mean(s.mean64), sd(s.std64);
            typename Ln::F64 z[Ln::kWide];
            for (size_t k = 0; k < Ln::kWide; ++k) z[k] = scaled(normal_z_triton_f64(a[k], b[k]), mean, sd);
            Ln::store64(static_cast<double *>(out) + i, z);
            return;
        }
        const typename Ln::F32 mean(s.mean32), sd(s.std32);
        const typename Ln::F32 v = scaled(normal_z_triton_f32(x[0], x[1]), mean, sd);
        if (s.dtype == DType::f32) Ln::store(static_cast<uint32_t *>(out) + i, bits_of(v));
        else if (s.dtype == DType::f16) Ln::store16(static_cast<uint16_t *>(out) + i, round_16<DType::f16>(v));
        else Ln::store16(static_cast<uint16_t *>(out) + i, round_16<DType::bf16>(v));
    });
}

}  // namespace
}  // namespace rngtrk
