// SPDX-License-Identifier: Apache-2.0
// The sampling engine for any x86-64 (or other) CPU: one Philox block at a
// time; normal on portable 128-bit lanes (vec_lanes.h: SSE2, or NEON on
// aarch64), in groups of 8 blocks.
#include <cstddef>
#include <cstdint>

#include "elements.h"
#include "normal_groups.h"
#include "philox.h"
#include "vec_lanes.h"

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

// The lane set of the normal transform (normal_groups.h).
using Lanes = DoubleLanes<vec::Vec4Lanes>;

// Normal of an in-order layout: the words of a group of blocks, then their
// elements.
template <Layout L>
void philox_batch_seq_normal(const uint32_t start[4], int inc_word, size_t n, uint32_t k0, uint32_t k1, void *out,
                             const SampleSpec &s) {
    const size_t block_bytes = units_per_block(Dist::normal, s.dtype) * element_bytes(s.dtype);
    uint32_t words[4 * Lanes::kBlocks];
    for (size_t i = 0; i < n; i += Lanes::kBlocks) {
        const size_t part = n - i < Lanes::kBlocks ? n - i : Lanes::kBlocks;
        uint32_t c[4] = {start[0], start[1], start[2], start[3]};
        c[inc_word] += static_cast<uint32_t>(i);
        philox_batch_seq(c, inc_word, part, k0, k1, words);
        normal_in_order<L, Lanes>(s, words, part, static_cast<unsigned char *>(out) + i * block_bytes);
    }
}

}  // namespace
}  // namespace engine_scalar
}  // namespace rngtrk

#define RNGTRK_ENGINE_NS engine_scalar
#define RNGTRK_ENGINE_LANES Lanes
#include "sample_engine.inc"
