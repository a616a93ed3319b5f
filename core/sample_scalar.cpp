// The sampling engine for any x86-64 (or other) CPU: one Philox block at a time.
#include <cstddef>
#include <cstdint>


#include "philox.h"
#include "elements.h"

namespace rngtrk {
namespace engine_scalar {
namespace {

void philox_batch_seq(const uint32_t start[4], int inc_word, size_t n, uint32_t k0, uint32_t k1,
                      uint32_t *words) {
    for (size_t i = 0; i < n; ++i) {
        uint32_t c[4] = {start[0], start[1], start[2], start[3]};
        c[inc_word] += static_cast<uint32_t>(i);
        const PhiloxBlock b = philox4x32_10(c[0], c[1], c[2], c[3], k0, k1);
        for (int j = 0; j < 4; ++j) words[4 * i + j] = b.w[j];
    }
}

// Uniform f32 block by block (the SIMD engines fuse this into their kernel).
void philox_batch_seq_uniform(const uint32_t start[4], int inc_word, size_t n, uint32_t k0, uint32_t k1,
                              float *out, Layout layout, float low, float range) {
    for (size_t i = 0; i < n; ++i) {
        uint32_t c[4] = {start[0], start[1], start[2], start[3]};
        c[inc_word] += static_cast<uint32_t>(i);
        const PhiloxBlock b = philox4x32_10(c[0], c[1], c[2], c[3], k0, k1);
        for (int j = 0; j < 4; ++j)
            out[4 * i + j] = layout == Layout::nvfuser ? uniform_f32<Layout::nvfuser>(b.w[j], low, range, 0.0f)
                                                       : uniform_f32<Layout::stateless>(b.w[j], low, range, 0.0f);
    }
}

}  // namespace
}  // namespace engine_scalar
}  // namespace rngtrk

#define RNGTRK_ENGINE_NS engine_scalar
#include "sample_engine.inc"
