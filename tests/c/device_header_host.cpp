// SPDX-License-Identifier: Apache-2.0
// The installed rngtrk_device.cuh, compiled as host C++: its layout and
// element functions give rngtrk_sample's bits for every layout and
// distribution (the GPU test does the same on the device).
#include <cstdio>
#include <cstring>
#include <vector>

#include "rngtrk.h"
#include "rngtrk_device.cuh"

using rngtrk::Layout;

namespace {

int failures = 0;

template <Layout L>
void check(rngtrk_layout layout) {
    const uint64_t seed = 0x9E3779B97F4A7C15ull, offset = 4096, n = 3000;
    rngtrk_sample_spec s;
    RNGTRK_SAMPLE_SPEC_INIT(&s, layout, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32);
    s.numel = n;
    const uint64_t T = 256 * 12;  // eager: 3000 elements launch 12 blocks of 256 threads
    const rngtrk_philox_state st{seed, offset};
    std::vector<float> u(n), z(n);
    std::vector<uint8_t> k(n);
    rngtrk_sample(&st, &s, 0, n, u.data(), n * 4);
    rngtrk_sample_spec g = s;
    g.distribution = RNGTRK_DIST_NORMAL, g.param_a = 1.0, g.param_b = 2.0;
    rngtrk_sample(&st, &g, 0, n, z.data(), n * 4);
    rngtrk_sample_spec b = s;
    b.distribution = RNGTRK_DIST_BERNOULLI, b.dtype = RNGTRK_DTYPE_U8, b.param_a = 0.7;
    rngtrk_sample(&st, &b, 0, n, k.data(), n);
    for (uint64_t e = 0; e < n; ++e) {
        unsigned c;
        const rngtrk::PhiloxBlock w = rngtrk::element_block<L>(seed, offset, e, 4, T, &c);
        float z0, z1;
        rngtrk::normal_f32<L>(w.w[c & ~1u], w.w[c | 1u], 1.0f, 2.0f, &z0, &z1);
        const float zu = c & 1 ? z1 : z0, uu = rngtrk::uniform_f32<L>(w.w[c], 0.0f, 1.0f, 1.0f);
        if (std::memcmp(&uu, &u[e], 4) != 0 || std::memcmp(&zu, &z[e], 4) != 0 ||
            rngtrk::keep<L>(w.w[c], 0.7f) != k[e]) {
            std::printf("FAIL: layout %d element %llu\n", int(layout), static_cast<unsigned long long>(e));
            ++failures;
            return;
        }
    }
}

}  // namespace

int main() {
    check<Layout::stateless>(RNGTRK_LAYOUT_STATELESS);
    check<Layout::nvfuser>(RNGTRK_LAYOUT_NVFUSER);
    check<Layout::eager_cuda>(RNGTRK_LAYOUT_TORCH_EAGER_CUDA);
    if (failures == 0) std::printf("device header on the host: the library's bits on all three layouts\n");
    return failures == 0 ? 0 : 1;
}
