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

// The [0, 1) uniform a layout gives normal, bernoulli and dropout.
// (triton: Triton's uniform in f32; in f64, which Triton lacks, the
// stateless 53 bits.)
template <Layout L>
RNGTRK_HD inline float u01_f32(uint32_t w) {
    if (L == Layout::triton) return u_triton_f32(w);
    return L == Layout::stateless ? u_mask_f32(w) : fold_one(u_curand_f32(w));
}
template <Layout L>
RNGTRK_HD inline double u01_f64(uint32_t a, uint32_t b) {
    return L == Layout::stateless || L == Layout::triton ? u_mask_f64(a, b) : fold_one(u_curand_f64(a, b));
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

// Normal pairs: units a and b of one block give z0 and z1 (Box-Muller).
template <Layout L>
RNGTRK_HD inline void normal_f32(uint32_t a, uint32_t b, float mean, float sd, float *out0, float *out1) {
    float z0, z1;
    det::box_muller(u01_f32<L>(a), u01_f32<L>(b), &z0, &z1);
    *out0 = mean + sd * z0;
    *out1 = mean + sd * z1;
}

template <Layout L>
RNGTRK_HD inline void normal_f64(uint32_t a0, uint32_t b0, uint32_t a1, uint32_t b1, double mean, double sd,
                                 double *out0, double *out1) {
    double z0, z1;
    det::box_muller(u01_f64<L>(a0, b0), u01_f64<L>(a1, b1), &z0, &z1);
    *out0 = mean + sd * z0;
    *out1 = mean + sd * z1;
}

// The triton layout's normal: one element per block.  f32 takes Triton's
// inputs — u1 = max(1e-7, uniform(w0)) as the logarithm's argument, u2 =
// uniform(w1) as the angle — through rngtrk's deterministic Box-Muller, and
// keeps z0 (Triton's randn uses fast-math sqrt/log/cos: the inputs are the
// same, the values differ in the last bits).  f64 takes the stateless 53-bit
// uniforms of (w0, w1) and (w2, w3).
RNGTRK_HD inline float normal_f32_triton(uint32_t w0, uint32_t w1, float mean, float sd) {
    const float u1 = u_triton_f32(w0);
    float z0, z1;
    det::box_muller_from(u1 > 1.0e-7f ? u1 : 1.0e-7f, u_triton_f32(w1), &z0, &z1);
    return mean + sd * z0;
}
RNGTRK_HD inline double normal_f64_triton(uint32_t w0, uint32_t w1, uint32_t w2, uint32_t w3, double mean,
                                          double sd) {
    double z0, z1;
    det::box_muller(u_mask_f64(w0, w1), u_mask_f64(w2, w3), &z0, &z1);
    return mean + sd * z0;
}

}  // namespace
}  // namespace rngtrk
