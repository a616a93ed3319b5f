// The sampling engine built for AVX-512 (F, BW, DQ, VL; compiled with those
// flags; run only where cpuid says they are all there).
#include "philox_simd.h"

namespace rngtrk {
namespace engine_avx512 {
namespace {
void philox_batch_seq(const uint32_t start[4], int inc_word, size_t n, uint32_t k0, uint32_t k1,
                      uint32_t *words) {
    simd::philox_batch_seq<simd::Avx512>(start, inc_word, n, k0, k1, words);
}

// Uniform f32 straight from the Philox registers (no pass over a scratch
// buffer): stateless if !curand, nvfuser's if curand.
void philox_batch_seq_uniform(const uint32_t start[4], int inc_word, size_t n, uint32_t k0, uint32_t k1,
                              float *out, bool curand, float low, float range) {
    simd::philox_batch_seq<simd::Avx512>(start, inc_word, n, k0, k1, reinterpret_cast<uint32_t *>(out),
                                     simd::UniformF32<simd::Avx512>{curand, low, range});
}
}  // namespace
}  // namespace engine_avx512
}  // namespace rngtrk

#define RNGTRK_ENGINE_NS engine_avx512
#include "sample_engine.inc"
