// Where element g of a tensor comes from, per layout (docs/streams.md): the
// Philox counter and the unit of its output.  Used by the CUDA kernels and
// by users' own kernels through rngtrk_device.cuh; the CPU engines walk the
// same counters in batches.
#pragma once

#include <cstdint>

#include "hd.h"
#include "philox.h"
#include "sample_kinds.h"

namespace rngtrk {
// Internal linkage: see det_math.h.
namespace {

// Block b of the in-order layouts, for a state whose offset is 4 * base:
// stateless counter (base + b, 0), nvfuser counter (base, b).
template <Layout L>
RNGTRK_HD inline PhiloxBlock in_order_block(uint64_t base, uint64_t b, uint32_t k0, uint32_t k1) {
    if (L == Layout::stateless) {
        const uint64_t c = base + b;
        return philox4x32_10(static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0, k0, k1);
    }
    return philox4x32_10(static_cast<uint32_t>(base), static_cast<uint32_t>(base >> 32), static_cast<uint32_t>(b),
                         static_cast<uint32_t>(b >> 32), k0, k1);
}

// Block (k, t) of torch-eager-cuda, given base + k: counter (base + k, t).
RNGTRK_HD inline PhiloxBlock eager_block(uint64_t base_plus_k, uint64_t t, uint32_t k0, uint32_t k1) {
    return philox4x32_10(static_cast<uint32_t>(base_plus_k), static_cast<uint32_t>(base_plus_k >> 32),
                         static_cast<uint32_t>(t), static_cast<uint32_t>(t >> 32), k0, k1);
}

// Block of the triton layout: counter (lo32(c), hi32(c), 0, 0) with c =
// offset + g, as Triton kernels pass PyTorch's offset to tl.rand.
RNGTRK_HD inline PhiloxBlock triton_block(uint64_t c, uint32_t k0, uint32_t k1) {
    return philox4x32_10(static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0, k0, k1);
}

// The block that element g of a tensor draws from, and its unit c.
//   E: units per block (4, or 2 for 64-bit dtypes);
//   T: torch-eager-cuda threads (256 * grid), only for that layout.
template <Layout L>
RNGTRK_HD inline PhiloxBlock element_block(uint64_t seed, uint64_t offset, uint64_t g, uint64_t E, uint64_t T,
                                           unsigned *c) {
    const uint64_t base = offset / 4;
    const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    if (L == Layout::triton) {  // one block per element, its unit 0
        *c = 0;
        return triton_block(offset + g, k0, k1);
    }
    if (L != Layout::eager_cuda) {
        *c = static_cast<unsigned>(g % E);
        return in_order_block<L>(base, g / E, k0, k1);
    }
    const uint64_t U = E, k = g / (T * U), t = g % T;
    *c = static_cast<unsigned>((g % (T * U)) / T);
    return eager_block(base + k, t, k0, k1);
}

}  // namespace
}  // namespace rngtrk
