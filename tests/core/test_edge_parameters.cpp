// SPDX-License-Identifier: Apache-2.0
// Every engine gives the same bits at the edges of the parameters, signed
// zeros included: normal with mean +-0 and std +-0 (mean + std*z is -0.0
// exactly where IEEE says so), uniform with low == high, with a zero bound
// of either sign and ranges across zero.  The reference is the CUDA kernels'
// bodies run on the host (host_launch.h): elements.h on plain float and
// double, one IEEE operation at a time.  Against it: each CPU engine
// (scalar, AVX2, AVX-512 where the CPU has them), the library's own dispatch
// (which takes the scalar engine below 64 elements), and slices; every
// layout and dtype, at counts that give a SIMD engine a head, a body and a
// tail.  (Issue 39: the scalar engine broadcast -0.0 as +0.0.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api_sample_spec.h"
#include "host_launch.h"
#include "rngtrk.h"
#include "sample.h"
#include "sample_engines.h"

using namespace rngtrk;
using namespace rngtrk::kernels;

namespace {

struct Edge {
    rngtrk_distribution dist;
    double a, b;  // low and high, or mean and std
};
const Edge kEdges[] = {
    {RNGTRK_DIST_NORMAL, -0.0, 0.0},   {RNGTRK_DIST_NORMAL, 0.0, 0.0},    {RNGTRK_DIST_NORMAL, -0.0, -0.0},
    {RNGTRK_DIST_NORMAL, 0.0, -0.0},   {RNGTRK_DIST_NORMAL, -1.5, 0.0},   {RNGTRK_DIST_NORMAL, -0.0, 1.0},
    {RNGTRK_DIST_NORMAL, 0.0, 1e-30},  {RNGTRK_DIST_UNIFORM, -0.0, -0.0}, {RNGTRK_DIST_UNIFORM, 0.0, 0.0},
    {RNGTRK_DIST_UNIFORM, -0.0, 0.0},  {RNGTRK_DIST_UNIFORM, -1.5, -1.5}, {RNGTRK_DIST_UNIFORM, 2.25, 2.25},
    {RNGTRK_DIST_UNIFORM, -1.0, 1.0},  {RNGTRK_DIST_UNIFORM, -3.5, 0.0},  {RNGTRK_DIST_UNIFORM, -0.0, 1.0},
    {RNGTRK_DIST_UNIFORM, -2.0, -0.0},
};
const rngtrk_layout kLayouts[] = {RNGTRK_LAYOUT_STATELESS, RNGTRK_LAYOUT_NVFUSER, RNGTRK_LAYOUT_TORCH_EAGER_CUDA,
                                   RNGTRK_LAYOUT_TRITON};
const rngtrk_dtype kDtypes[] = {RNGTRK_DTYPE_F32, RNGTRK_DTYPE_F64, RNGTRK_DTYPE_F16, RNGTRK_DTYPE_BF16};
// A head before the first whole group, whole SIMD groups (up to 32 blocks
// of 4 elements), tails of every length, and the dispatch's 64-element
// boundary.
const uint64_t kCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 257, 1025};
const uint64_t kFirsts[] = {0, 1, 3, 6, 1027};

SampleSpec spec_of(rngtrk_layout layout, const Edge &e, rngtrk_dtype dtype) {
    rngtrk_sample_spec cs;
    EXPECT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&cs, layout, e.dist, dtype));
    cs.param_a = e.a, cs.param_b = e.b;
    cs.sm_count = 2, cs.max_threads_per_sm = 512;  // T = 1024: several slabs in the larger counts
    return checked_spec(&cs, SpecUse::sample);
}

std::string describe(rngtrk_layout layout, const Edge &e, rngtrk_dtype dtype) {
    return "layout " + std::to_string(layout) + " dist " + std::to_string(e.dist) + " dtype " +
           std::to_string(dtype) + " params (" + (std::signbit(e.a) ? "-" : "") + std::to_string(std::fabs(e.a)) +
           ", " + (std::signbit(e.b) ? "-" : "") + std::to_string(std::fabs(e.b)) + ")";
}

// Where two outputs first differ, as an element index (or -1).
long first_difference(const std::vector<unsigned char> &a, const std::vector<unsigned char> &b, size_t w) {
    for (size_t i = 0; i < a.size(); ++i)
        if (a[i] != b[i]) return static_cast<long>(i / w);
    return -1;
}

}  // namespace

TEST(EdgeParameters, EveryEngineGivesTheKernelBodiesBitsSignedZerosIncluded) {
    std::vector<const CpuPath *> engines;
    for (const char *name : {"scalar", "avx2", "avx512"}) {
        if (const CpuPath *p = cpu_path_named(name)) engines.push_back(p);
        else std::cout << "[ INFO     ] " << name << " not available on this CPU: not compared\n";
    }
    std::mt19937_64 rng(39);
    size_t negative_zeros = 0, positive_zeros = 0;
    for (rngtrk_layout layout : kLayouts) {
        for (const Edge &e : kEdges) {
            for (rngtrk_dtype dtype : kDtypes) {
                const SampleSpec s = spec_of(layout, e, dtype);
                const size_t w = element_bytes(s.dtype);
                for (uint64_t count : kCounts) {
                    const uint64_t first = kFirsts[rng() % (sizeof kFirsts / sizeof kFirsts[0])];
                    const uint64_t numel = first + count + rng() % 300;
                    const PhiloxState st{rng(), 4 * (rng() % 100000)};
                    std::vector<unsigned char> want(count * w), got(count * w);
                    device_range(s, st, nullptr, numel, first, count, want.data(), nullptr, 3, 2);
                    for (const CpuPath *p : engines) {
                        std::fill(got.begin(), got.end(), 0xA5);
                        p->generate(s, st, numel, first, count, got.data());
                        ASSERT_EQ(-1, first_difference(want, got, w))
                            << p->name << " " << describe(layout, e, dtype) << " first " << first << " count " << count;
                    }
                    std::fill(got.begin(), got.end(), 0xA5);
                    run_range(check_range(s, numel, first, count, got.data(), got.size()), st);
                    ASSERT_EQ(-1, first_difference(want, got, w))
                        << "the library's dispatch " << describe(layout, e, dtype) << " first " << first << " count "
                        << count;
                    if (dtype == RNGTRK_DTYPE_F64 && e.dist == RNGTRK_DIST_NORMAL && e.b == 0.0) {
                        for (uint64_t i = 0; i < count; ++i) {
                            double x;
                            std::memcpy(&x, want.data() + i * w, 8);
                            (std::signbit(x) ? negative_zeros : positive_zeros) += x == 0.0;
                        }
                    }
                }
            }
        }
    }
    // The case matters only if both zeros were drawn: a mean of -0.0 with a
    // std of 0 gives -0.0 for a negative z, +0.0 otherwise.
    EXPECT_GT(negative_zeros, 100u);
    EXPECT_GT(positive_zeros, 100u);
}

// Slices of a tensor drawn with edge parameters are the boxes of the whole
// tensor, bit for bit, on the library's dispatch and on the kernel bodies.
TEST(EdgeParameters, SlicesAreTheBoxesOfTheWholeTensor) {
    std::mt19937_64 rng(391);
    for (rngtrk_layout layout : kLayouts) {
        for (const Edge &e : kEdges) {
            for (rngtrk_dtype dtype : kDtypes) {
                const SampleSpec s = spec_of(layout, e, dtype);
                const size_t w = element_bytes(s.dtype);
                const uint64_t global[2] = {3 + rng() % 9, 5 + rng() % 40};
                const uint64_t start[2] = {rng() % global[0], rng() % global[1]};
                const uint64_t local[2] = {1 + rng() % (global[0] - start[0]), 1 + rng() % (global[1] - start[1])};
                const uint64_t numel = global[0] * global[1], box = local[0] * local[1];
                const PhiloxState st{rng(), 4 * (rng() % 1000)};
                std::vector<unsigned char> whole(numel * w), cpu(box * w), device(box * w);
                device_range(s, st, nullptr, numel, 0, numel, whole.data(), nullptr, 3, 2);
                run_slice(check_slice(s, 2, global, start, local, cpu.data(), cpu.size()), st);
                const SliceArgs a = plan_slice(check_slice(s, 2, global, start, local, device.data(), device.size()), st);
                with_kind(s, [&](auto l, auto d, auto t) {
                    constexpr Layout L = decltype(l)::value;
                    constexpr Dist D = decltype(d)::value;
                    constexpr DType T = decltype(t)::value;
                    run_grid(items(a), 3, 2, [&](ThreadPos p) { slice_body<L, D, T>(p, a); });
                });
                for (uint64_t i = 0; i < box; ++i) {
                    const uint64_t g = (start[0] + i / local[1]) * global[1] + start[1] + i % local[1];
                    ASSERT_EQ(0, std::memcmp(cpu.data() + i * w, whole.data() + g * w, w))
                        << "CPU slice " << describe(layout, e, dtype) << " element " << i;
                    ASSERT_EQ(0, std::memcmp(device.data() + i * w, whole.data() + g * w, w))
                        << "kernel-body slice " << describe(layout, e, dtype) << " element " << i;
                }
            }
        }
    }
}
