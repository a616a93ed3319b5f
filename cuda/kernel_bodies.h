/* SPDX-License-Identifier: Apache-2.0 */
// The bodies of the CUDA kernels, as host+device functions of the thread's
// position in the launch grid.  cuda_backend.cu's __global__ functions only
// call them with (blockIdx.x, threadIdx.x, gridDim.x, blockDim.x); the host
// tests (tests/core/test_kernel_bodies.cpp) call them for every block and
// thread of the grids launch_geometry.h computes, so every line of index
// arithmetic the GPU runs also runs, and is checked, without a GPU.
//
// Every kernel is specialised on (layout, distribution, dtype), so the
// number of elements per Philox block is a constant and the block's words
// stay in registers.  In the in-order layouts a thread owns whole Philox
// blocks and stores each one with a single 4-, 8- or 16-byte store when
// the block lies wholly inside the range and the output is aligned for it.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "elements.h"
#include "hd.h"
#include "layouts.h"
#include "philox.h"
#include "sample.h"
#include "sample_kinds.h"
#include "sample_spec.h"

namespace rngtrk {
namespace kernels {

// A thread's place in a 1-D launch: CUDA's blockIdx.x, threadIdx.x,
// gridDim.x and blockDim.x.
struct ThreadPos {
    uint32_t block, thread, grid, block_dim;
};
RNGTRK_HD inline uint64_t first_item(ThreadPos p) { return uint64_t{p.block} * p.block_dim + p.thread; }
RNGTRK_HD inline uint64_t item_stride(ThreadPos p) { return uint64_t{p.grid} * p.block_dim; }

// -- what one Philox block makes, per (distribution, dtype) -------------------

template <DType T>
struct StorageOf;
template <> struct StorageOf<DType::u8> { using type = uint8_t; };
template <> struct StorageOf<DType::u32> { using type = uint32_t; };
template <> struct StorageOf<DType::u64> { using type = uint64_t; };
template <> struct StorageOf<DType::f16> { using type = uint16_t; };
template <> struct StorageOf<DType::bf16> { using type = uint16_t; };
template <> struct StorageOf<DType::f32> { using type = float; };
template <> struct StorageOf<DType::f64> { using type = double; };

template <Dist D, DType T>
struct Kind {
    using Out = typename StorageOf<T>::type;  // the output element (dropout: its data, f32, f16 or bf16 bits)
    // What block_values makes per element: the element, or dropout's keep flag.
    using Value = typename std::conditional<D == Dist::dropout, uint8_t, Out>::type;
    static constexpr unsigned units = units_per_block(D, T);
};

// Element r of the output from its value (dropout: in[r] through
// dropout_element with its keep flag v; `in` has the output's type).
template <Dist D, DType T, class Out, class Value, class Index>
RNGTRK_HD inline void put(Out *out, const Out *in, Index r, Value v, const SampleSpec &s) {
    if constexpr (D == Dist::dropout) out[r] = dropout_element<T>(in[r], v, s.scale32, s.zero_dropped);
    else out[r] = v;
}

// The `units` values of one block: element c of the block is v[c].  For
// dropout, v[c] is the keep flag (1 or 0) of element c.
template <Layout L, Dist D, DType T, class V>
RNGTRK_HD inline void block_values(const SampleSpec &s, const PhiloxBlock &b, V *v) {
    const uint32_t *w = b.w;
    if constexpr (D == Dist::bits) {
        if constexpr (T == DType::u32) {
            for (unsigned c = 0; c < 4; ++c) v[c] = w[c];
        } else {
            v[0] = bits_u64(w[0], w[1]);
            v[1] = bits_u64(w[2], w[3]);
        }
    } else if constexpr (D == Dist::uniform) {
        if constexpr (T == DType::f32) {
            for (unsigned c = 0; c < 4; ++c) v[c] = uniform_f32<L>(w[c], s.low32, s.range32, s.high32);
        } else if constexpr (T == DType::f64) {
            v[0] = uniform_f64<L>(w[0], w[1], s.low64, s.range64, s.high64);
            v[1] = uniform_f64<L>(w[2], w[3], s.low64, s.range64, s.high64);
        } else {
            for (unsigned c = 0; c < 4; ++c)
                v[c] = uniform_16<L>(w[c], s.low32, s.range32, T == DType::f16, s.low16, s.high16);
        }
    } else if constexpr (D == Dist::normal) {
        // Units (0, 1) and (2, 3) pair up in f32 (and f16, bf16); f64 uses all four words.
        if constexpr (T == DType::f32) {
            normal_f32<L>(w[0], w[1], s.mean32, s.std32, &v[0], &v[1]);
            normal_f32<L>(w[2], w[3], s.mean32, s.std32, &v[2], &v[3]);
        } else if constexpr (T == DType::f64) {
            normal_f64<L>(w[0], w[1], w[2], w[3], s.mean64, s.std64, &v[0], &v[1]);
        } else {
            normal_16<L, T>(w[0], w[1], s.mean32, s.std32, &v[0], &v[1]);
            normal_16<L, T>(w[2], w[3], s.mean32, s.std32, &v[2], &v[3]);
        }
    } else {  // bernoulli, and dropout's keep flags
        for (unsigned c = 0; c < 4; ++c) v[c] = keep<L>(w[c], s.p32);
    }
}

// The triton layout's element from its own block: unit 0 (words 0 and 1
// for 64-bit dtypes), or for normal one value from the block's words.
template <Dist D, DType T>
RNGTRK_HD inline typename Kind<D, T>::Value triton_value(const SampleSpec &s, const PhiloxBlock &b) {
    if constexpr (D == Dist::normal) {
        if constexpr (T == DType::f32) return normal_f32_triton(b.w[0], b.w[1], s.mean32, s.std32);
        else if constexpr (T == DType::f64) return normal_f64_triton(b.w[0], b.w[1], b.w[2], b.w[3], s.mean64, s.std64);
        else return normal_16_triton<T>(b.w[0], b.w[1], s.mean32, s.std32);
    } else {
        typename Kind<D, T>::Value v[4];
        block_values<Layout::triton, D, T>(s, b, v);
        return v[0];
    }
}

// The graph-safe kernels read (seed, offset) from device memory when they
// run instead of taking them as arguments.
RNGTRK_HD inline void read_state(const uint64_t *device_state, uint64_t *seed, uint64_t *base) {
    if (device_state != nullptr) *seed = device_state[0], *base = device_state[1] / 4;
}

// -- whole-block loads and stores --------------------------------------------

// The host run of a body counts vector accesses at addresses the GPU could
// not use (it would fault); the tests require zero.  (A host variable in
// every pass: the host-side tests compiled by nvcc see it in its device
// passes too, tools/build_cuda12_inside.sh.)
inline unsigned long long host_misaligned_vector_accesses = 0;

// `n` bytes (4, 8 or 16) at `p`, which the caller has aligned to n.
template <unsigned n>
RNGTRK_HD inline void store_bytes(void *p, const void *bytes) {
#if defined(__CUDA_ARCH__)
    if constexpr (n == 16) {
        uint4 v;
        memcpy(&v, bytes, 16);
        *static_cast<uint4 *>(p) = v;
    } else if constexpr (n == 8) {
        uint2 v;
        memcpy(&v, bytes, 8);
        *static_cast<uint2 *>(p) = v;
    } else {
        uint32_t v;
        memcpy(&v, bytes, 4);
        *static_cast<uint32_t *>(p) = v;
    }
#else
    if (reinterpret_cast<uintptr_t>(p) % n != 0) ++host_misaligned_vector_accesses;
    std::memcpy(p, bytes, n);
#endif
}

template <unsigned n>
RNGTRK_HD inline void load_bytes(void *bytes, const void *p) {
#if defined(__CUDA_ARCH__)
    if constexpr (n == 16) {
        const uint4 v = *static_cast<const uint4 *>(p);
        memcpy(bytes, &v, 16);
    } else if constexpr (n == 8) {
        const uint2 v = *static_cast<const uint2 *>(p);
        memcpy(bytes, &v, 8);
    } else {
        const uint32_t v = *static_cast<const uint32_t *>(p);
        memcpy(bytes, &v, 4);
    }
#else
    if (reinterpret_cast<uintptr_t>(p) % n != 0) ++host_misaligned_vector_accesses;
    std::memcpy(bytes, p, n);
#endif
}

// -- stateless and nvfuser: element g is unit g % E of block g / E -------------

struct InOrderArgs {
    SampleSpec spec;
    uint64_t seed, base;           // key, offset / 4 (unless device_state)
    const uint64_t *device_state;  // graph-safe: (seed, offset) in device memory, or NULL
    uint64_t first, count;         // the elements [first, first + count)
    uint64_t blocks;               // Philox blocks they touch, from block first / E on
    bool whole_blocks_aligned;     // every whole block lands on out (and in) aligned to its size
    void *out;
    const void *in;                // dropout's input (the output's dtype), else NULL
};

// Thread item j computes block first / E + j and writes its elements that
// fall in the range, grid-stride.
template <Layout L, Dist D, DType T>
RNGTRK_HD inline void in_order_body(ThreadPos p, const InOrderArgs &a) {
    using K = Kind<D, T>;
    using Out = typename K::Out;
    constexpr unsigned E = K::units;
    using V = typename K::Value;
    uint64_t seed = a.seed, base = a.base;
    read_state(a.device_state, &seed, &base);
    const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    Out *out = static_cast<Out *>(a.out);
    const Out *in = static_cast<const Out *>(a.in);
    if constexpr (L == Layout::triton) {  // item j is element first + j, counter offset + first + j
        for (uint64_t j = first_item(p); j < a.count; j += item_stride(p))
            put<D, T>(out, in, j, triton_value<D, T>(a.spec, triton_block(4 * base + a.first + j, k0, k1)), a.spec);
        return;
    }
    const uint64_t b0 = a.first / E;
    for (uint64_t j = first_item(p); j < a.blocks; j += item_stride(p)) {
        const uint64_t g0 = (b0 + j) * E;  // the block's first element
        V v[E];
        block_values<L, D, T>(a.spec, in_order_block<L>(base, b0 + j, k0, k1), v);
        const bool whole = g0 >= a.first && a.count >= E && g0 - a.first <= a.count - E;
        if (whole && a.whole_blocks_aligned) {
            const uint64_t i0 = g0 - a.first;
            Out o[E];
            if constexpr (D == Dist::dropout) {
                Out x[E];
                load_bytes<sizeof x>(x, in + i0);
                for (unsigned c = 0; c < E; ++c)
                    o[c] = dropout_element<T>(x[c], v[c], a.spec.scale32, a.spec.zero_dropped);
            } else {
                for (unsigned c = 0; c < E; ++c) o[c] = v[c];
            }
            store_bytes<sizeof o>(out + i0, o);
            continue;
        }
        for (unsigned c = 0; c < E; ++c) {
            const uint64_t g = g0 + c;
            if (g >= a.first && g - a.first < a.count) put<D, T>(out, in, g - a.first, v[c], a.spec);
        }
    }
}

// -- torch-eager-cuda: element e = k*T*U + i*T + t is unit i of block (base + k, t)

struct EagerArgs {
    SampleSpec spec;
    uint64_t seed, base;
    const uint64_t *device_state;
    uint64_t first, count;
    uint64_t T;        // torch's threads for the whole tensor (eager_launch)
    uint64_t k_first;  // the first slab the range touches
    uint64_t pairs;    // (slab, thread) pairs from (k_first, 0) to the last slab's end
    bool narrow;       // every element index and item count below 2^30: 32-bit arithmetic suffices
    void *out;
    const void *in;
};

// Item j is the pair (k_first + j / T, j % T); a thread walks its items
// grid-stride, stepping (k, t) and the pair's first element without
// dividing or multiplying again.  Consecutive threads write consecutive
// elements of each unit row: coalesced.  Offsets from `first` are compared
// unsigned: an element before `first` wraps past 2^bits - first >= count.
// I is uint32_t for narrow requests (fewer instructions and registers: the
// GPU's integer units are 32-bit), else uint64_t; the counter is 64-bit.
template <Dist D, DType T, class I>
RNGTRK_HD inline void eager_body(ThreadPos p, const EagerArgs &a) {
    using K = Kind<D, T>;
    using Out = typename K::Out;
    constexpr unsigned U = K::units;
    using V = typename K::Value;
    I j = static_cast<I>(first_item(p));
    if (j >= a.pairs) return;
    uint64_t seed = a.seed, base = a.base;
    read_state(a.device_state, &seed, &base);
    const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    Out *out = static_cast<Out *>(a.out);
    const Out *in = static_cast<const Out *>(a.in);
    const I threads = static_cast<I>(a.T), slab = threads * U, first = static_cast<I>(a.first);
    const I count = static_cast<I>(a.count), pairs = static_cast<I>(a.pairs);
    const I stride = static_cast<I>(item_stride(p)), dk = stride / threads, dt = stride % threads;
    const I step = dk * slab + dt;
    // A pair whose unit 0 lies at offset r < inner has all U units in range.
    const I span = (U - 1) * threads, inner = count > span ? count - span : 0;
    const I k = static_cast<I>(a.k_first) + j / threads;
    I t = j % threads, e0 = k * slab + t;  // the pair's unit-0 element
    uint64_t counter = base + k;
    for (; j < pairs; j += stride) {
        const PhiloxBlock w = eager_block(counter, t, k0, k1);
        V v[U];
        block_values<Layout::eager_cuda, D, T>(a.spec, w, v);
        const I r0 = e0 - first;
        if (r0 < inner) {  // the common case: no test per element
            for (unsigned i = 0; i < U; ++i) put<D, T>(out, in, r0 + i * threads, v[i], a.spec);
        } else {
            for (unsigned i = 0; i < U; ++i)
                if (r0 + i * threads < count) put<D, T>(out, in, r0 + i * threads, v[i], a.spec);
        }
        counter += dk, t += dt, e0 += step;
        if (t >= threads) t -= threads, ++counter, e0 += slab - threads;
    }
}

// -- n-d slices: item j is element j of the box, in row-major order ----------
// (dropout: element j of `in` too, with the keep flag of its global index)

struct SliceArgs {
    SampleSpec spec;
    uint64_t seed, offset;
    size_t ndim;
    uint64_t global[kMaxSliceDims], start[kMaxSliceDims], local[kMaxSliceDims];
    uint64_t T;    // eager layout: torch's threads for the whole tensor
    uint64_t box;  // elements of the box
    void *out;
    const void *in;  // dropout's input (the output's dtype), else NULL
};

template <Layout L, Dist D, DType T>
RNGTRK_HD inline void slice_body(ThreadPos p, const SliceArgs &a) {
    using K = Kind<D, T>;
    using Out = typename K::Out;
    Out *out = static_cast<Out *>(a.out);
    const Out *in = static_cast<const Out *>(a.in);
    for (uint64_t j = first_item(p); j < a.box; j += item_stride(p)) {
        uint64_t rem = j, g = 0, stride = 1;
        for (size_t d = a.ndim; d-- > 0;) {
            g += (a.start[d] + rem % a.local[d]) * stride;
            rem /= a.local[d];
            stride *= a.global[d];
        }
        unsigned c;
        const PhiloxBlock w = element_block<L>(a.seed, a.offset, g, K::units, a.T, &c);
        if constexpr (L == Layout::triton) {
            put<D, T>(out, in, j, triton_value<D, T>(a.spec, w), a.spec);
        } else {
            typename K::Value v[K::units];
            block_values<L, D, T>(a.spec, w, v);
            put<D, T>(out, in, j, v[c], a.spec);
        }
    }
}

// -- the graph-safe advance ----------------------------------------------------

RNGTRK_HD inline void advance_body(ThreadPos p, uint64_t *device_state, uint64_t increment) {
    if (first_item(p) == 0) device_state[1] += increment;
}

// -- choosing the specialisation -------------------------------------------------

template <Layout L>
using LayoutC = std::integral_constant<Layout, L>;
template <Dist D>
using DistC = std::integral_constant<Dist, D>;
template <DType T>
using DTypeC = std::integral_constant<DType, T>;

// Calls f(LayoutC, DistC, DTypeC) for the kind of a checked spec.
template <class F>
void with_kind(const SampleSpec &s, F &&f) {
    auto with_layout = [&](auto l) {
        switch (s.dist) {
            case Dist::bits:
                if (s.dtype == DType::u32) return f(l, DistC<Dist::bits>{}, DTypeC<DType::u32>{});
                return f(l, DistC<Dist::bits>{}, DTypeC<DType::u64>{});
            case Dist::uniform:
                switch (s.dtype) {
                    case DType::f64: return f(l, DistC<Dist::uniform>{}, DTypeC<DType::f64>{});
                    case DType::f16: return f(l, DistC<Dist::uniform>{}, DTypeC<DType::f16>{});
                    case DType::bf16: return f(l, DistC<Dist::uniform>{}, DTypeC<DType::bf16>{});
                    default: return f(l, DistC<Dist::uniform>{}, DTypeC<DType::f32>{});
                }
            case Dist::normal:
                switch (s.dtype) {
                    case DType::f64: return f(l, DistC<Dist::normal>{}, DTypeC<DType::f64>{});
                    case DType::f16: return f(l, DistC<Dist::normal>{}, DTypeC<DType::f16>{});
                    case DType::bf16: return f(l, DistC<Dist::normal>{}, DTypeC<DType::bf16>{});
                    default: return f(l, DistC<Dist::normal>{}, DTypeC<DType::f32>{});
                }
            case Dist::bernoulli: return f(l, DistC<Dist::bernoulli>{}, DTypeC<DType::u8>{});
            case Dist::dropout:  // the data's dtype
                switch (s.dtype) {
                    case DType::f16: return f(l, DistC<Dist::dropout>{}, DTypeC<DType::f16>{});
                    case DType::bf16: return f(l, DistC<Dist::dropout>{}, DTypeC<DType::bf16>{});
                    default: return f(l, DistC<Dist::dropout>{}, DTypeC<DType::f32>{});
                }
        }
    };
    switch (s.layout) {
        case Layout::stateless: return with_layout(LayoutC<Layout::stateless>{});
        case Layout::nvfuser: return with_layout(LayoutC<Layout::nvfuser>{});
        case Layout::eager_cuda: return with_layout(LayoutC<Layout::eager_cuda>{});
        case Layout::triton: return with_layout(LayoutC<Layout::triton>{});
    }
}

}  // namespace kernels
}  // namespace rngtrk
