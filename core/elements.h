/* SPDX-License-Identifier: Apache-2.0 */
// One element from its Philox words, for every layout and distribution:
// the single definition that the CPU engines (sample_engine.inc) loop over
// and the CUDA kernels (cuda/) call per thread.  Formulas: docs/streams.md.
// Parameters come by value so loops can keep them in registers.
#pragma once

#include <cmath>
#include <cstdint>

#include "det_math.h"
#include "hd.h"
#include "sample_kinds.h"
#include "uniform_words.h"

namespace rngtrk {
// Internal linkage: see det_math.h (each CPU target keeps its own copy).
namespace {

// The [0, 1) uniform a layout gives normal, bernoulli and dropout, for any
// lanes of words (det_math.h).  (triton: Triton's uniform in f32; in f64,
// which Triton lacks, the stateless 53 bits.)
template <Layout L, class U>
RNGTRK_HD RNGTRK_FLATTEN FloatOf<U> u01_f32(U w) {
    if (L == Layout::triton) return u_triton_f32(w);
    return L == Layout::stateless ? u_mask_f32(w) : fold_one(u_curand_f32(w));
}
// 64-bit units as one lane, (w[2c] << 32) | w[2c+1].
template <Layout L, class U>
RNGTRK_HD RNGTRK_FLATTEN FloatOf<U> u01_f64_of(U v) {
    return L == Layout::stateless || L == Layout::triton ? u_mask_f64_of(v) : fold_one(u_curand_f64_of(v));
}

// u * range + low in one rounding.  PyTorch's CUDA uniform kernel writes
// `rand * range + from`, which nvcc contracts to a fused multiply-add, so
// the torch-eager-cuda layout fuses too (measured on an H100 with torch
// 2.11: docs/cuda.md).  std::fma is correctly rounded on every CPU, with or
// without an FMA unit, so every path gives the same bits.  The other
// layouts keep the product and the sum apart.
template <class F>
RNGTRK_HD inline F fused_scale(F u, F range, F low) {
#if defined(__CUDA_ARCH__)
    if constexpr (sizeof(F) == 4) return __fmaf_rn(u, range, low);
    else return __fma_rn(u, range, low);
#else
    return std::fma(u, range, low);
#endif
}

// Uniform f32 in [low, high): stateless masks 24 bits; nvfuser folds 1 to
// 0; torch-eager-cuda maps a result equal to high to low, as PyTorch does.
template <Layout L>
RNGTRK_HD inline float uniform_f32(uint32_t w, float low, float range, float high) {
    if (L == Layout::stateless) return low + u_mask_f32(w) * range;
    if (L == Layout::triton) return low + u_triton_f32(w) * range;  // tl.rand itself for [0, 1)
    if (L == Layout::nvfuser) return low + fold_one(u_curand_f32(w)) * range;
    const float v = fused_scale(u_curand_f32(w), range, low);
    return v == high ? low : v;
}

// Uniform f16 (half) or bf16 bits: computed in float, rounded to nearest even.
template <Layout L>
RNGTRK_HD inline uint16_t uniform_16(uint32_t w, float low, float range, bool half, uint16_t low16, uint16_t high16) {
    float u;
    if (L == Layout::stateless) u = half ? u_mask_f16(w) : u_mask_bf16(w);
    else if (L == Layout::nvfuser) u = fold_one(u_curand_f32(w));
    else if (L == Layout::triton) u = u_triton_f32(w);
    else u = u_curand_f32(w);
    const float v = L == Layout::eager_cuda ? fused_scale(u, range, low) : low + u * range;
    const uint16_t h = half ? det::to_f16_bits(v) : det::to_bf16_bits(v);
    // triton: Triton's f32 uniform rounded, and (as PyTorch does) high mapped to low.
    return (L == Layout::eager_cuda || L == Layout::triton) && h == high16 ? low16 : h;
}

template <Layout L>
RNGTRK_HD inline double uniform_f64(uint32_t a, uint32_t b, double low, double range, double high) {
    if (L == Layout::stateless || L == Layout::triton) return low + u_mask_f64(a, b) * range;
    if (L == Layout::nvfuser) return low + fold_one(u_curand_f64(a, b)) * range;
    const double v = fused_scale(u_curand_f64(a, b), range, low);
    return v == high ? low : v;
}

RNGTRK_HD inline uint64_t bits_u64(uint32_t a, uint32_t b) { return uint64_t{a} << 32 | b; }

// Bernoulli: kept (1) when the layout's uniform is below p.
template <Layout L>
RNGTRK_HD inline uint8_t keep(uint32_t w, float p) {
    return u01_f32<L>(w) < p ? 1 : 0;
}

// -- dropout: one element of f32, f16 or bf16 data ------------------------------

// The data as float (exact) and back (f16 and bf16 rounded to nearest even:
// det_math.h's conversions, the ones normal and uniform f16/bf16 use).
template <DType T>
struct DropoutData;
template <>
struct DropoutData<DType::f32> {
    using Storage = float;
    RNGTRK_HD static float load(float x) { return x; }
    RNGTRK_HD static float store(float v) { return v; }
};
template <>
struct DropoutData<DType::f16> {
    using Storage = uint16_t;  // the half's bits
    RNGTRK_HD static float load(uint16_t x) { return det::from_f16_bits(x); }
    RNGTRK_HD static uint16_t store(float v) { return det::to_f16_bits(v); }
};
template <>
struct DropoutData<DType::bf16> {
    using Storage = uint16_t;  // the bfloat16's bits
    RNGTRK_HD static float load(uint16_t x) { return det::from_bf16_bits(x); }
    RNGTRK_HD static uint16_t store(float v) { return det::to_bf16_bits(v); }
};

// Dropout of the data element x whose keep flag (keep<L>) is `kept`:
// computed in float and rounded once to T, x * scale when kept, else x * 0
// -- so a dropped NaN stays NaN and a dropped negative gives -0, as torch's
// x * mask * scale -- or +0 when `zero_dropped` (rngtrk_dropout_f32's rule).
// `scale` is the value of the dtype's 1/p (SampleSpec::scale32).
template <DType T>
RNGTRK_HD inline typename DropoutData<T>::Storage dropout_element(typename DropoutData<T>::Storage x, uint8_t kept,
                                                                  float scale, bool zero_dropped) {
    const float v = DropoutData<T>::load(x);
    return DropoutData<T>::store(kept ? v * scale : zero_dropped ? 0.0f : v * 0.0f);
}

// -- normal: Box-Muller on pairs of units (docs/streams.md) ------------------
// Written for any lanes of words: one element pair per call on the scalar
// engine and the GPU, 8 or 16 on the SIMD engines (normal_groups.h).

// The angle 2 pi u of a layout's uniform u, as det::Quarters: 4u = q + f.
// The stateless uniform is (w & 0xFFFFFF) * 2^-24 (f32) or the low 53 bits
// of the unit times 2^-53 (f64), so 4u's whole part and fraction are bit
// fields of the word, taken directly (the same exact values as splitting
// 4u, without the conversions).
template <Layout L, class U>
RNGTRK_HD RNGTRK_FLATTEN det::Quarters<FloatOf<U>> angle_f32(U w) {
    using det::int_to_float;
    if (L == Layout::stateless) return {(w >> 22) & U(3u), int_to_float(w & U(0x3FFFFFu)) * FloatOf<U>(0x1p-22f)};
    return det::quarters_of(u01_f32<L>(w));
}
template <Layout L, class U>
RNGTRK_HD RNGTRK_FLATTEN det::Quarters<FloatOf<U>> angle_f64(U v) {
    using det::uint_to_float;
    if (L == Layout::stateless || L == Layout::triton)
        return {(v >> 51) & U(uint64_t{3}), uint_to_float(v & U((uint64_t{1} << 51) - 1)) * FloatOf<U>(0x1p-51)};
    return det::quarters_of(u01_f64_of<L>(v));
}

// z0 and z1 of units a and b: x = 1 - u(a) into the logarithm (in (0, 1]:
// never a log of 0), the angle from u(b).
template <Layout L, class U, class V = FloatOf<U>>
RNGTRK_HD RNGTRK_FLATTEN void normal_z_f32(U a, U b, V *z0, V *z1) {
    det::box_muller_quarters(V(1.0f) - u01_f32<L>(a), angle_f32<L>(b), z0, z1);
}
template <Layout L, class U, class V = FloatOf<U>>
RNGTRK_HD RNGTRK_FLATTEN void normal_z_f64(U a, U b, V *z0, V *z1) {
    det::box_muller_quarters(V(1.0) - u01_f64_of<L>(a), angle_f64<L>(b), z0, z1);
}

// mean + std * z (two roundings).
template <class V>
RNGTRK_HD RNGTRK_FLATTEN V scaled(V z, V mean, V sd) {
    return mean + sd * z;
}

// Normal pairs: units a and b of one block give z0 and z1 (Box-Muller).
template <Layout L>
RNGTRK_HD inline void normal_f32(uint32_t a, uint32_t b, float mean, float sd, float *out0, float *out1) {
    float z0, z1;
    normal_z_f32<L>(a, b, &z0, &z1);
    *out0 = scaled(z0, mean, sd);
    *out1 = scaled(z1, mean, sd);
}

template <Layout L>
RNGTRK_HD inline void normal_f64(uint32_t a0, uint32_t b0, uint32_t a1, uint32_t b1, double mean, double sd,
                                 double *out0, double *out1) {
    double z0, z1;
    normal_z_f64<L>(uint64_t{a0} << 32 | b0, uint64_t{a1} << 32 | b1, &z0, &z1);
    *out0 = scaled(z0, mean, sd);
    *out1 = scaled(z1, mean, sd);
}

// f16 and bf16 normal: the f32 value, rounded to nearest even (the bits in
// the low half of each lane).
template <DType T, class V>
RNGTRK_HD RNGTRK_FLATTEN typename det::Lanes<V>::U round_16(V value) {
    static_assert(T == DType::f16 || T == DType::bf16, "f16 or bf16");
    return T == DType::f16 ? det::round_to_f16(value) : det::round_to_bf16(value);
}
template <Layout L, DType T>
RNGTRK_HD inline void normal_16(uint32_t a, uint32_t b, float mean, float sd, uint16_t *out0, uint16_t *out1) {
    float v0, v1;
    normal_f32<L>(a, b, mean, sd, &v0, &v1);
    *out0 = static_cast<uint16_t>(round_16<T>(v0));
    *out1 = static_cast<uint16_t>(round_16<T>(v1));
}

// The triton layout's normal: one element per block.  f32 takes Triton's
// inputs -- u1 = max(1e-7, uniform(w0)) as the logarithm's argument, u2 =
// uniform(w1) as the angle -- through rngtrk's deterministic Box-Muller, and
// keeps z0 (Triton's randn uses fast-math sqrt/log/cos: the inputs are the
// same, the values differ in the last bits).  f64 takes the stateless 53-bit
// uniforms of (w0, w1) and (w2, w3).
template <class U, class V = FloatOf<U>>
RNGTRK_HD RNGTRK_FLATTEN V normal_z_triton_f32(U w0, U w1) {
    using det::select;
    const V u1 = u_triton_f32(w0), tiny = V(1.0e-7f);
    V z0, z1;
    det::box_muller_quarters(select(u1 > tiny, u1, tiny), angle_f32<Layout::triton>(w1), &z0, &z1);
    return z0;
}
template <class U, class V = FloatOf<U>>
RNGTRK_HD RNGTRK_FLATTEN V normal_z_triton_f64(U v0, U v1) {
    V z0, z1;
    normal_z_f64<Layout::triton>(v0, v1, &z0, &z1);
    return z0;
}
RNGTRK_HD inline float normal_f32_triton(uint32_t w0, uint32_t w1, float mean, float sd) {
    return scaled(normal_z_triton_f32(w0, w1), mean, sd);
}
RNGTRK_HD inline double normal_f64_triton(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, double mean,
                                          double sd) {
    return scaled(normal_z_triton_f64(uint64_t{w0} << 32 | w1, uint64_t{w2} << 32 | w3), mean, sd);
}
template <DType T>
RNGTRK_HD inline uint16_t normal_16_triton(uint32_t w0, uint32_t w1, float mean, float sd) {
    return static_cast<uint16_t>(round_16<T>(normal_f32_triton(w0, w1, mean, sd)));
}

}  // namespace
}  // namespace rngtrk
