/* SPDX-License-Identifier: Apache-2.0 */
// How the CUDA backend shapes its launches, apart from the CUDA runtime so
// that the host tests can run it: the grid size, and the arguments of each
// kernel body (kernel_bodies.h) for a checked request.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernel_bodies.h"
#include "philox_state.h"
#include "sample.h"
#include "sample_spec.h"

namespace rngtrk {
namespace kernels {

constexpr uint32_t kBlockThreads = 256;
// At most 2^22 blocks: item strides stay below 2^30, which the 32-bit
// (narrow) eager body relies on.
constexpr uint64_t kMaxGrid = uint64_t{1} << 22;

// The grid for `items` independent work items: one item per thread while
// they fit in one wave of resident blocks (sm_count * blocks_per_sm, from
// the device and the kernel's occupancy), grid-stride loops beyond it.  A
// wider grid would only queue blocks behind the first wave.
inline uint32_t grid_for(uint64_t items, uint32_t sm_count, uint32_t blocks_per_sm) {
    const uint64_t needed = items / kBlockThreads + (items % kBlockThreads != 0);
    const uint64_t wave = uint64_t{sm_count == 0 ? 1 : sm_count} * (blocks_per_sm == 0 ? 1 : blocks_per_sm);
    uint64_t grid = needed < wave ? needed : wave;
    grid = grid < kMaxGrid ? grid : kMaxGrid;
    return grid == 0 ? 1 : static_cast<uint32_t>(grid);
}

// Whether the whole Philox blocks of elements [first, ...) start, in `p`,
// at addresses aligned to a block's bytes (E elements of `bytes` each):
// then each can be one vector store (or load).
inline bool whole_blocks_aligned(const void *p, uint64_t first, uint64_t E, size_t bytes) {
    if (p == nullptr) return true;
    const uint64_t lead = (E - first % E) % E;  // elements before the first whole block
    return (reinterpret_cast<uintptr_t>(p) + lead * bytes) % (E * bytes) == 0;
}

// The data bytes of one output element (a bernoulli mask: 1; dropout: its
// data's dtype, which its input shares).
inline size_t output_bytes(const SampleSpec &s) { return element_bytes(s.dtype); }

// Stateless, nvfuser and triton: elements [first, first + count), count > 0.
inline InOrderArgs plan_in_order(const SampleSpec &s, const PhiloxState &st, const uint64_t *device_state,
                                 uint64_t first, uint64_t count, void *out, const void *in) {
    const uint64_t E = elements_per_block(s);
    InOrderArgs a{};
    a.spec = s, a.seed = st.seed, a.base = st.offset / 4, a.device_state = device_state;
    a.first = first, a.count = count, a.out = out, a.in = in;
    // A per-element walk (triton): one item per element, its own block.
    a.blocks = layout_row(s.layout).walk == Walk::per_element ? count : (first + (count - 1)) / E - first / E + 1;
    a.whole_blocks_aligned = whole_blocks_aligned(out, first, E, output_bytes(s)) &&
                             whole_blocks_aligned(in, first, E, output_bytes(s));
    return a;
}

// torch-eager-cuda: elements [first, first + count) of a `numel`-element
// tensor, count > 0.  The items are the (slab, thread) pairs from the
// first slab's thread 0 to the last slab's end.
inline EagerArgs plan_eager(const SampleSpec &s, const PhiloxState &st, const uint64_t *device_state, uint64_t numel,
                            uint64_t first, uint64_t count, void *out, const void *in) {
    const EagerLaunch launch = eager_launch(s, numel);
    const uint64_t slab = launch.threads * launch.unroll, last = first + (count - 1);
    EagerArgs a{};
    a.spec = s, a.seed = st.seed, a.base = st.offset / 4, a.device_state = device_state;
    a.first = first, a.count = count, a.out = out, a.in = in;
    a.T = launch.threads;
    a.k_first = first / slab;
    a.pairs = (last / slab - a.k_first + 1) * launch.threads;
    // Narrow: the last slab's end, the pair count and a step of the largest
    // grid stay below 2^30, so 32-bit sums of them cannot wrap.
    const uint64_t limit = uint64_t{1} << 30;
    a.narrow = last / slab + 1 <= limit / slab && a.pairs < limit && launch.threads < limit;
    return a;
}

// A checked n-d box.
inline SliceArgs plan_slice(const SliceRequest &r, const PhiloxState &st) {
    SliceArgs a{};
    a.spec = r.spec, a.seed = st.seed, a.offset = st.offset, a.ndim = r.ndim, a.out = r.out, a.in = r.in;
    a.box = 1;
    for (size_t d = 0; d < r.ndim; ++d) {
        a.global[d] = r.global[d], a.start[d] = r.start[d], a.local[d] = r.local[d];
        a.box *= r.local[d];
    }
    a.T = r.spec.layout == Layout::eager_cuda ? eager_launch(r.spec, r.numel).threads : 0;
    return a;
}

template <class I>
struct IndexC {
    using type = I;
};

// Plans a checked range request (count > 0) and calls
// run(args, LayoutC, DistC, DTypeC, IndexC) with the specialisation to use:
// in_order_body<L, D, T> for InOrderArgs, eager_body<D, T, I> for
// EagerArgs.  The backend launches that body's kernel; the host tests run
// the body itself, so both take the same decisions.
template <class Run>
void plan_range(const SampleSpec &s, const PhiloxState &st, const uint64_t *device_state, uint64_t numel,
                uint64_t first, uint64_t count, void *out, const void *in, Run &&run) {
    with_kind(s, [&](auto l, auto d, auto t) {
        if constexpr (decltype(l)::value == Layout::eager_cuda) {
            const EagerArgs a = plan_eager(s, st, device_state, numel, first, count, out, in);
            if (a.narrow) run(a, l, d, t, IndexC<uint32_t>{});
            else run(a, l, d, t, IndexC<uint64_t>{});
        } else {
            run(plan_in_order(s, st, device_state, first, count, out, in), l, d, t, IndexC<uint64_t>{});
        }
    });
}

// The work items of each body.
inline uint64_t items(const InOrderArgs &a) { return a.blocks; }
inline uint64_t items(const EagerArgs &a) { return a.pairs; }
inline uint64_t items(const SliceArgs &a) { return a.box; }

// What rngtrk_cuda_advance_graphsafe adds to the device offset: the
// increment rounded up to a whole block (the caller checked it fits).
inline uint64_t graphsafe_increment(uint64_t increment) { return blocks_for(increment) * kWordsPerBlock; }

}  // namespace kernels
}  // namespace rngtrk
