// Uniform floats from Philox words: the one definition used by the scalar
// transforms (sample_engine.inc) and by the fused SIMD kernels
// (philox_simd.h).  Formulas: docs/streams.md.
#pragma once

#include <cstdint>

#include "hd.h"

namespace rngtrk {
// Internal linkage: see det_math.h (each CPU target keeps its own copy).
namespace {

// -- uniforms in [0, 1) from words ------------------------------------------

// Conversions written with signed 32-bit conversions, which every SIMD
// target has (AVX2 has no unsigned one); the results are the same values.
RNGTRK_HD inline float small_to_f32(uint32_t v) { return static_cast<float>(static_cast<int32_t>(v)); }  // v < 2^31
// (float)w rounded to nearest even: the two exact halves, added once.
RNGTRK_HD inline float u32_to_f32(uint32_t w) {
    return small_to_f32(w >> 16) * 65536.0f + small_to_f32(w & 0xFFFFu);
}

// Stateless: the low d bits scaled by 2^-d (exact).
RNGTRK_HD inline float u_mask_f32(uint32_t w) { return small_to_f32(w & 0xFFFFFFu) * 0x1p-24f; }
RNGTRK_HD inline float u_mask_f16(uint32_t w) { return small_to_f32(w & 0x7FFu) * 0x1p-11f; }
RNGTRK_HD inline float u_mask_bf16(uint32_t w) { return small_to_f32(w & 0xFFu) * 0x1p-8f; }
RNGTRK_HD inline double u_mask_f64(uint32_t hi, uint32_t lo) {
    const uint64_t v = (uint64_t{hi} << 32 | lo) & ((uint64_t{1} << 53) - 1);
    return static_cast<double>(v) * 0x1p-53;
}
// cuRAND's curand_uniform: (float)w * 2^-32 + 2^-33, in (0, 1].
RNGTRK_HD inline float u_curand_f32(uint32_t w) { return u32_to_f32(w) * 0x1p-32f + 0x1p-33f; }
// cuRAND's curand_uniform2_double element from two words, in (0, 1].
RNGTRK_HD inline double u_curand_f64(uint32_t a, uint32_t b) {
    const uint64_t z = uint64_t{a} ^ (uint64_t{b} << 21);
    return static_cast<double>(z) * 0x1p-53 + 0x1p-54;
}
// Triton's uint_to_uniform_float (python/triton/language/random.py): the
// word as int32, a negative x mapped to -x - 1 (~w, the same bits), then
// converted to float and multiplied by the float 4.6566127342e-10 (which
// rounds to 2^-31 (1 - 2^-24)), so the result lies in [0, 1).
RNGTRK_HD inline float u_triton_f32(uint32_t w) {
    const uint32_t m = (w & 0x80000000u) != 0 ? ~w : w;
    return small_to_f32(m) * static_cast<float>(4.6566127342e-10);
}
// nvFuser folds 1.0 to 0.0 so the result lies in [0, 1).
RNGTRK_HD inline float fold_one(float u) { return u == 1.0f ? 0.0f : u; }
RNGTRK_HD inline double fold_one(double u) { return u == 1.0 ? 0.0 : u; }

}  // namespace
}  // namespace rngtrk
