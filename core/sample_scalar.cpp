// The sampling engine for any x86-64 (or other) CPU: one Philox block at a time.
#include <cstddef>
#include <cstdint>

#include "philox.h"

namespace rngtrk {
namespace engine_scalar {
namespace {

void philox_batch(const uint32_t *c0, const uint32_t *c1, const uint32_t *c2, const uint32_t *c3, size_t n,
                  uint32_t k0, uint32_t k1, uint32_t *words) {
    for (size_t i = 0; i < n; ++i) {
        const PhiloxBlock b = philox4x32_10(c0[i], c1[i], c2[i], c3[i], k0, k1);
        for (int j = 0; j < 4; ++j) words[4 * i + j] = b.w[j];
    }
}

}  // namespace
}  // namespace engine_scalar
}  // namespace rngtrk

#define RNGTRK_ENGINE_NS engine_scalar
#include "sample_engine.inc"
