// The sampling engine built for AVX-512 (F, BW, DQ, VL; compiled with those
// flags; run only where cpuid says they are all there).
#include "philox_simd.h"

namespace rngtrk {
namespace engine_avx512 {
namespace {
void philox_batch(const uint32_t *c0, const uint32_t *c1, const uint32_t *c2, const uint32_t *c3, size_t n,
                  uint32_t k0, uint32_t k1, uint32_t *words) {
    simd::philox_batch<simd::Avx512>(c0, c1, c2, c3, n, k0, k1, words);
}
}  // namespace
}  // namespace engine_avx512
}  // namespace rngtrk

#define RNGTRK_ENGINE_NS engine_avx512
#include "sample_engine.inc"
