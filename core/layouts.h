/* SPDX-License-Identifier: Apache-2.0 */
// The layout table: every stream layout rngtrk knows, in one place (the
// code form of docs/streams.md's table).  Per layout: its name, how its
// elements walk the Philox stream (the counter of element g and its unit,
// the functions below), how far a draw moves the offset, and the counters it
// may reach.  The CPU engines, the CUDA bodies and their launch plans, spec
// checks, offset increments and the C API's names all ask this file; a new
// layout is a row here, its counter function below, and its per-layout code
// in the engines and kernels.  The CUDA kernels and users' own kernels
// (rngtrk_device.cuh) read the counter functions.
#pragma once

#include <cstdint>

#include "hd.h"
#include "philox.h"
#include "sample_kinds.h"

namespace rngtrk {

// How a layout's elements walk the stream.
enum class Walk {
    in_order,     // element g is unit g % E of block g / E, blocks in counter order (in_order_block)
    eager_slabs,  // torch-eager-cuda's grid-stride loop: element k*T*U + i*T + t is unit i of block (B + k, t)
    per_element,  // one block per element, its unit 0 (triton_block)
};

// How far a draw of a whole tensor of n elements moves the offset, counted
// in blocks of 4 offset units.
enum class Increment {
    blocks_drawn,  // ceil(n / E): every block the tensor used
    one_block,     // 1, whatever n: the tensor is one counter's subsequence
    elements,      // ceil(n / 4): the offset counts elements (one counter each)
    eager_slabs,   // (n - 1) / (T * U) + 1 slabs of T threads; 0 for n = 0
};

struct LayoutRow {
    Layout layout;
    const char *name;       // the spelling of every tool and binding (rngtrk_layout_name)
    Walk walk;
    int run_word;           // in_order: the counter word the block index runs in (0 or 2)
    Increment increment;
    uint64_t counter_limit; // counters offset + g must stay below this (0: none, they wrap mod 2^64)
    const char *limit_why;  // why the limit exists, for the error message
};

// Indexed by the enum's value (= rngtrk_layout), numbered from 0 without gaps.
constexpr LayoutRow kLayoutTable[] = {
    {Layout::stateless, "stateless", Walk::in_order, 0, Increment::blocks_drawn, 0, nullptr},
    {Layout::nvfuser, "nvfuser", Walk::in_order, 2, Increment::one_block, 0, nullptr},
    {Layout::eager_cuda, "torch-eager-cuda", Walk::eager_slabs, 2, Increment::eager_slabs, 0, nullptr},
    {Layout::triton, "triton", Walk::per_element, 0, Increment::elements, uint64_t{1} << 63,
     "past Triton's int64 offsets"},
};
constexpr unsigned kLayoutCount = sizeof kLayoutTable / sizeof kLayoutTable[0];

constexpr bool table_in_enum_order() {
    for (unsigned i = 0; i < kLayoutCount; ++i)
        if (static_cast<unsigned>(kLayoutTable[i].layout) != i) return false;
    return true;
}
static_assert(table_in_enum_order(), "kLayoutTable rows must follow the Layout enum");
constexpr bool limits_are_powers_of_two() {
    for (const LayoutRow &r : kLayoutTable)
        if ((r.counter_limit & (r.counter_limit - 1)) != 0) return false;
    return true;
}
static_assert(limits_are_powers_of_two(), "messages write counter limits as 2^k");

constexpr const LayoutRow &layout_row(Layout l) { return kLayoutTable[static_cast<unsigned>(l)]; }

// in_order_block (below, also compiled for the GPU, where the table is not
// read) runs stateless's block index in counter word 0 and nvfuser's in
// word 2: the rows must say the same, as the CPU engine reads them.
static_assert(layout_row(Layout::stateless).walk == Walk::in_order && layout_row(Layout::stateless).run_word == 0 &&
                  layout_row(Layout::nvfuser).walk == Walk::in_order && layout_row(Layout::nvfuser).run_word == 2,
              "in_order_block and the table disagree");
static_assert(layout_row(Layout::triton).walk == Walk::per_element &&
                  layout_row(Layout::eager_cuda).walk == Walk::eager_slabs,
              "element_block and the kernel bodies walk triton per element and eager in slabs");

// The row of a public value, or nullptr for a value that is not a layout.
constexpr const LayoutRow *layout_row_of(uint32_t value) { return value < kLayoutCount ? &kLayoutTable[value] : nullptr; }

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
