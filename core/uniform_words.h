/* SPDX-License-Identifier: Apache-2.0 */
// Uniform floats from Philox words: the one definition used by the scalar
// transforms (sample_engine.inc), the fused SIMD kernels (philox_simd.h),
// the normal transform on every path (elements.h, normal_groups.h) and the
// CUDA kernels.  Formulas: docs/streams.md.  Each function takes words in
// any lane type of det_math.h (uint32_t, or a SIMD vector of words) and
// gives the matching float lanes; 64-bit units come as one 64-bit lane,
// (w[2c] << 32) | w[2c+1].
#pragma once

#include <cstdint>

#include "det_math.h"
#include "hd.h"

namespace rngtrk {
// Internal linkage: see det_math.h (each CPU target keeps its own copy).
namespace {

// The float lanes of word lanes U.
template <class U>
using FloatOf = det::FloatLanes<U>;

// -- uniforms in [0, 1) from words ------------------------------------------

// Stateless: the low d bits scaled by 2^-d (exact).
template <class U>
RNGTRK_HD RNGTRK_FLATTEN FloatOf<U> u_mask_f32(U w) {
    using det::int_to_float;  // and, by argument-dependent lookup, the vectors' own
    return int_to_float(w & U(0xFFFFFFu)) * FloatOf<U>(0x1p-24f);
}
RNGTRK_HD inline float u_mask_f16(uint32_t w) { return det::int_to_float(w & 0x7FFu) * 0x1p-11f; }
RNGTRK_HD inline float u_mask_bf16(uint32_t w) { return det::int_to_float(w & 0xFFu) * 0x1p-8f; }
template <class U>
RNGTRK_HD RNGTRK_FLATTEN FloatOf<U> u_mask_f64_of(U v) {
    using det::uint_to_float;
    return uint_to_float(v & U((uint64_t{1} << 53) - 1)) * FloatOf<U>(0x1p-53);
}
RNGTRK_HD inline double u_mask_f64(uint32_t hi, uint32_t lo) { return u_mask_f64_of(uint64_t{hi} << 32 | lo); }
// cuRAND's curand_uniform: (float)w * 2^-32 + 2^-33, in (0, 1]; (float)w
// rounded to nearest even.
template <class U>
RNGTRK_HD RNGTRK_FLATTEN FloatOf<U> u_curand_f32(U w) {
    using V = FloatOf<U>;
    using det::uint_to_float;
    return uint_to_float(w) * V(0x1p-32f) + V(0x1p-33f);
}
// cuRAND's curand_uniform2_double element from words a, b in (0, 1]:
// z = a ^ (b << 21), z * 2^-53 + 2^-54.
template <class U>
RNGTRK_HD RNGTRK_FLATTEN FloatOf<U> u_curand_f64_of(U v) {
    using V = FloatOf<U>;
    using det::uint_to_float;
    const U z = (v >> 32) ^ ((v & U(0xFFFFFFFFull)) << 21);  // below 2^53
    return uint_to_float(z) * V(0x1p-53) + V(0x1p-54);
}
RNGTRK_HD inline double u_curand_f64(uint32_t a, uint32_t b) { return u_curand_f64_of(uint64_t{a} << 32 | b); }
// Triton's uint_to_uniform_float (python/triton/language/random.py): the
// word as int32, a negative x mapped to -x - 1 (~w, the same bits), then
// converted to float and multiplied by the float 4.6566127342e-10 (which
// rounds to 2^-31 (1 - 2^-24)), so the result lies in [0, 1).
template <class U>
RNGTRK_HD RNGTRK_FLATTEN FloatOf<U> u_triton_f32(U w) {
    using det::int_to_float;
    const U m = w ^ (U(0u) - (w >> 31));  // ~w where the sign bit is set
    return int_to_float(m) * FloatOf<U>(static_cast<float>(4.6566127342e-10));
}
// nvFuser folds 1.0 to 0.0 so the result lies in [0, 1).
template <class V>
RNGTRK_HD RNGTRK_FLATTEN V fold_one(V u) {
    using F = typename det::Lanes<V>::F;
    using det::select;
    return select(u == V(F(1)), V(F(0)), u);
}

}  // namespace
}  // namespace rngtrk
