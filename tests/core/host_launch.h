// SPDX-License-Identifier: Apache-2.0
// The CUDA backend's launches run on the host: every block and thread of
// the grid cuda/cuda_backend.cu would launch, each calling the kernel's body
// (cuda/kernel_bodies.h) with its place in the grid.  The tests that compare
// the kernels with the CPU engines share it (test_kernel_bodies.cpp,
// test_edge_parameters.cpp).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <type_traits>
#include <vector>

#include "kernel_bodies.h"
#include "launch_geometry.h"
#include "sample.h"

namespace rngtrk {
namespace kernels {

// Every thread of the launch the backend would make for `items` work items
// on a device of `sm_count` SMs running `blocks_per_sm` blocks each.
template <class Body>
inline void run_grid(uint64_t items, uint32_t sm_count, uint32_t blocks_per_sm, Body body) {
    const uint32_t grid = grid_for(items, sm_count, blocks_per_sm);
    for (uint32_t b = 0; b < grid; ++b)
        for (uint32_t t = 0; t < kBlockThreads; ++t) body(ThreadPos{b, t, grid, kBlockThreads});
}

// The device run of a range request, emulated: plan it as the backend does,
// run the body over the whole grid.
// Returns whether the 32-bit eager body ran.
// `once`: in place (in == out), where a second run would read the first's
// output, the eager body runs once.
inline bool device_range(const SampleSpec &s, const PhiloxState &st, const uint64_t *device_state, uint64_t numel,
                         uint64_t first, uint64_t count, void *out, const void *in, uint32_t sms, uint32_t per_sm,
                         bool once = false) {
    bool narrow = false;
    plan_range(s, st, device_state, numel, first, count, out, in, [&](const auto &a, auto l, auto d, auto t, auto i) {
        constexpr Layout L = decltype(l)::value;
        constexpr Dist D = decltype(d)::value;
        constexpr DType T = decltype(t)::value;
        using I = typename decltype(i)::type;
        if constexpr (L == Layout::eager_cuda) {
            run_grid(items(a), sms, per_sm, [&](ThreadPos p) { eager_body<D, T, I>(p, a); });
            if constexpr (std::is_same<I, uint32_t>::value) {
                narrow = true;
                if (once) return;
                // The 64-bit body, which huge tensors take, gives the same bytes.
                std::vector<unsigned char> bytes(count * element_bytes(s.dtype));
                std::memcpy(bytes.data(), out, bytes.size());
                std::memset(out, 0xA5, bytes.size());
                run_grid(items(a), sms, per_sm, [&](ThreadPos p) { eager_body<D, T, uint64_t>(p, a); });
                EXPECT_EQ(0, std::memcmp(bytes.data(), out, bytes.size())) << "32-bit and 64-bit eager bodies differ";
            }
        } else {
            run_grid(items(a), sms, per_sm, [&](ThreadPos p) { in_order_body<L, D, T>(p, a); });
        }
    });
    return narrow;
}

}  // namespace kernels
}  // namespace rngtrk
