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

// The block that element g of a tensor draws from, and its unit c.
//   E: units per block (4, or 2 for 64-bit dtypes);
//   T: torch-eager-cuda threads (256 * grid), only for that layout.
template <Layout L>
RNGTRK_HD inline PhiloxBlock element_block(uint64_t seed, uint64_t offset, uint64_t g, uint64_t E, uint64_t T,
                                           unsigned *c) {
    const uint64_t base = offset / 4;
    const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    if (L == Layout::stateless) {
        const uint64_t b = base + g / E;
        *c = static_cast<unsigned>(g % E);
        return philox4x32_10(static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0, k0, k1);
    }
    if (L == Layout::nvfuser) {
        const uint64_t n = g / E;
        *c = static_cast<unsigned>(g % E);
        return philox4x32_10(static_cast<uint32_t>(base), static_cast<uint32_t>(base >> 32), static_cast<uint32_t>(n),
                             static_cast<uint32_t>(n >> 32), k0, k1);
    }
    const uint64_t U = E, k = g / (T * U), t = g % T, b = base + k;
    *c = static_cast<unsigned>((g % (T * U)) / T);
    return philox4x32_10(static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), static_cast<uint32_t>(t),
                         static_cast<uint32_t>(t >> 32), k0, k1);
}

}  // namespace
}  // namespace rngtrk
