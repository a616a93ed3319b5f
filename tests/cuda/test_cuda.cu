/* SPDX-License-Identifier: Apache-2.0 */
// Device tests (make test-gpu; make test runs them and they skip, saying
// why, without a GPU): every layout, distribution and dtype on the device
// equals the CPU; slices and dropout too (f32, f16 and bf16 data, ranges
// and boxes); a captured CUDA graph replayed
// three times draws at three successive offsets; a user kernel built on
// rngtrk_device.cuh gives the library's dropout.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "rngtrk.h"
#include "rngtrk_device.cuh"

namespace {

// A skip only where this program's own CUDA runtime sees no device: where
// it sees one, rngtrk must run there, and any reason it gives (a missing or
// foreign CUDA module, a loader fault) fails the test.
#define REQUIRE_GPU()                                                                               \
    do {                                                                                            \
        int devices_ = 0;                                                                           \
        const bool gpu_ = cudaGetDeviceCount(&devices_) == cudaSuccess && devices_ > 0;             \
        if (!gpu_ && std::getenv("RNGTRK_REQUIRE_GPU") == nullptr)                                  \
            GTEST_SKIP() << "no GPU here, device test not run: "                                    \
                         << (rngtrk_cuda_available() == RNGTRK_OK ? "" : rngtrk_last_error());      \
        ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_available()) << (gpu_ ? "a GPU is here, and rngtrk says: "  \
                                                               : "no GPU (make test-gpu): ")        \
                                                      << rngtrk_last_error();                       \
    } while (0)

size_t width(uint32_t dtype) { return rngtrk_dtype_size(static_cast<rngtrk_dtype>(dtype)); }

struct Device {
    void *p = nullptr;
    explicit Device(size_t n) { EXPECT_EQ(cudaSuccess, cudaMalloc(&p, n ? n : 1)); }
    ~Device() { cudaFree(p); }
    unsigned char *bytes() const { return static_cast<unsigned char *>(p); }
};

std::vector<uint8_t> to_host(const void *d, size_t n) {
    std::vector<uint8_t> h(n);
    EXPECT_EQ(cudaSuccess, cudaMemcpy(h.data(), d, n, cudaMemcpyDeviceToHost));
    return h;
}
std::vector<uint8_t> to_host(const Device &d, size_t n) { return to_host(d.p, n); }

struct KindCase {
    rngtrk_distribution d;
    rngtrk_dtype t;
};
const KindCase kKinds[] = {
    {RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32},     {RNGTRK_DIST_BITS, RNGTRK_DTYPE_U64},
    {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32},  {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F64},
    {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F16},  {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_BF16},
    {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32},   {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F64},
    {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F16},   {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_BF16},
    {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8}};
const rngtrk_layout kLayouts[] = {RNGTRK_LAYOUT_STATELESS, RNGTRK_LAYOUT_NVFUSER, RNGTRK_LAYOUT_TORCH_EAGER_CUDA,
                                   RNGTRK_LAYOUT_TRITON};

rngtrk_sample_spec spec_for(rngtrk_layout layout, KindCase k) {
    rngtrk_sample_spec s;
    EXPECT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&s, layout, k.d, k.t));
    if (k.d == RNGTRK_DIST_UNIFORM) s.param_a = -1.5, s.param_b = 2.25;
    if (k.d == RNGTRK_DIST_NORMAL) s.param_a = 0.5, s.param_b = 2.0;
    if (k.d == RNGTRK_DIST_BERNOULLI) s.param_a = 0.7;
    return s;
}

constexpr size_t kGuard = 256;
constexpr unsigned char kPoison = 0xA5;

// Poisoned device memory with guard bytes around an output placed `shift`
// bytes past an aligned address; checks the output and that nothing else
// was written.
struct GuardedDevice {
    Device d;
    size_t n, shift;
    GuardedDevice(size_t bytes, size_t shift_bytes) : d(bytes + 2 * kGuard + 16), n(bytes), shift(shift_bytes) {
        EXPECT_EQ(cudaSuccess, cudaMemset(d.p, kPoison, bytes + 2 * kGuard + 16));
    }
    void *out() const { return d.bytes() + kGuard + shift; }
    ::testing::AssertionResult holds(const std::vector<uint8_t> &want) const {
        const std::vector<uint8_t> all = to_host(d, n + 2 * kGuard + 16);
        for (size_t i = 0; i < all.size(); ++i) {
            const bool inside = i >= kGuard + shift && i < kGuard + shift + n;
            const uint8_t expected = inside ? want[i - kGuard - shift] : kPoison;
            if (all[i] != expected)
                return ::testing::AssertionFailure() << (inside ? "element byte " : "guard byte ")
                                                     << (inside ? i - kGuard - shift : i) << " differs";
        }
        return ::testing::AssertionSuccess();
    }
};

}  // namespace

TEST(Cuda, EveryLayoutDistributionAndDtypeEqualsTheCpu) {
    REQUIRE_GPU();
    std::mt19937_64 rng(1);
    for (rngtrk_layout layout : kLayouts) {
        for (KindCase k : kKinds) {
            for (int trial = 0; trial < 5; ++trial) {
                rngtrk_sample_spec s = spec_for(layout, k);
                uint64_t first = rng() % 5000, count = 1 + rng() % 20000;
                if (trial == 3) first = 1 + 2 * (rng() % 2000), count = 3000001;  // odd, 3e6, unaligned first
                if (trial == 4) first = 3, count = 2;                               // inside one block
                s.numel = first + count + rng() % 1000;
                const rngtrk_philox_state st{rng(), 4 * (rng() % 1000)};
                const size_t n = count * width(k.t);
                std::vector<uint8_t> cpu(n);
                ASSERT_EQ(RNGTRK_OK, rngtrk_sample(&st, &s, first, count, cpu.data(), n));
                // Aligned (vector stores) and one element off (scalar stores).
                for (size_t shift : {size_t{0}, width(k.t)}) {
                    GuardedDevice d(n, shift);
                    ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_sample(&st, &s, first, count, d.out(), n, nullptr))
                        << rngtrk_last_error();
                    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
                    ASSERT_TRUE(d.holds(cpu)) << "layout " << layout << " dist " << k.d << " dtype " << k.t
                                              << " first " << first << " count " << count << " shift " << shift;
                }
            }
        }
    }
}

TEST(Cuda, SlicesOfEveryKindEqualTheCpu) {
    REQUIRE_GPU();
    std::mt19937_64 rng(5);
    for (rngtrk_layout layout : kLayouts) {
        for (KindCase k : kKinds) {
            rngtrk_sample_spec s = spec_for(layout, k);
            const uint64_t g[3] = {17, 33, 65}, st0[3] = {3, 5, 7}, l[3] = {11, 20, 50};
            const rngtrk_philox_state st{rng(), 8};
            const size_t n = 11 * 20 * 50 * width(k.t);
            std::vector<uint8_t> cpu(n);
            ASSERT_EQ(RNGTRK_OK, rngtrk_sample_slice(&st, &s, 3, g, st0, l, cpu.data(), n));
            GuardedDevice d(n, 0);
            ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_sample_slice(&st, &s, 3, g, st0, l, d.out(), n, nullptr));
            EXPECT_TRUE(d.holds(cpu)) << "layout " << layout << " dist " << k.d << " dtype " << k.t;
        }
    }
}

TEST(Cuda, DropoutEqualsTheCpuAlignedOrNot) {
    REQUIRE_GPU();
    for (rngtrk_layout layout : kLayouts) {
        rngtrk_sample_spec drop;
        ASSERT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&drop, layout, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
        drop.dtype = RNGTRK_DTYPE_F32, drop.param_a = 0.8, drop.numel = 1000000;
        const rngtrk_philox_state st{77, 8};
        const uint64_t first = 9, count = 900001;
        std::vector<float> in(count), out(count);
        for (size_t i = 0; i < in.size(); ++i) in[i] = 0.01f * static_cast<float>(i % 1000) - 3.0f;
        ASSERT_EQ(RNGTRK_OK, rngtrk_dropout_f32(&st, &drop, first, count, in.data(), out.data()));
        std::vector<uint8_t> want(count * 4);
        std::memcpy(want.data(), out.data(), want.size());
        for (size_t shift : {size_t{0}, size_t{4}}) {
            Device din(count * 4 + 16);
            float *in_at = reinterpret_cast<float *>(din.bytes() + shift);
            ASSERT_EQ(cudaSuccess, cudaMemcpy(in_at, in.data(), count * 4, cudaMemcpyHostToDevice));
            GuardedDevice d(count * 4, shift);
            ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_dropout_f32(&st, &drop, first, count, in_at,
                                                         static_cast<float *>(d.out()), nullptr));
            EXPECT_TRUE(d.holds(want)) << "layout " << layout << " shift " << shift;
        }
    }
}

namespace {

// Whether element bytes `a` and `b` of `dtype` are equal, or both NaN (a
// GPU's multiply writes its canonical NaN where the CPU keeps the input's).
bool same_or_both_nan(rngtrk_dtype dtype, const uint8_t *a, const uint8_t *b) {
    if (std::memcmp(a, b, width(dtype)) == 0) return true;
    if (dtype == RNGTRK_DTYPE_F32) {
        uint32_t x, y;
        std::memcpy(&x, a, 4), std::memcpy(&y, b, 4);
        return (x & 0x7FFFFFFFu) > 0x7F800000u && (y & 0x7FFFFFFFu) > 0x7F800000u;
    }
    uint16_t x, y;
    std::memcpy(&x, a, 2), std::memcpy(&y, b, 2);
    const uint16_t inf = dtype == RNGTRK_DTYPE_F16 ? 0x7C00 : 0x7F80;
    return (x & 0x7FFF) > inf && (y & 0x7FFF) > inf;
}

// Device output `got` (with kGuard poisoned bytes on each side of `shift`)
// against the CPU's `want`.
::testing::AssertionResult dropout_holds(rngtrk_dtype dtype, const GuardedDevice &d, const std::vector<uint8_t> &want) {
    const std::vector<uint8_t> all = to_host(d.d, d.n + 2 * kGuard + 16);
    for (size_t i = 0; i < all.size(); ++i) {
        const bool inside = i >= kGuard + d.shift && i < kGuard + d.shift + d.n;
        if (!inside && all[i] != kPoison) return ::testing::AssertionFailure() << "guard byte " << i << " written";
    }
    const size_t w = width(dtype);
    for (size_t e = 0; e * w < want.size(); ++e)
        if (!same_or_both_nan(dtype, want.data() + e * w, all.data() + kGuard + d.shift + e * w))
            return ::testing::AssertionFailure() << "element " << e << " differs";
    return ::testing::AssertionSuccess();
}

// Data with NaN, infinities, signed zeros, subnormals and ordinary values.
std::vector<uint8_t> dropout_data(rngtrk_dtype dtype, size_t count, std::mt19937_64 &rng) {
    std::vector<uint8_t> in(count * width(dtype));
    for (size_t i = 0; i < count; ++i) {
        if (dtype == RNGTRK_DTYPE_F32) {
            const float special[] = {NAN, -INFINITY, INFINITY, -0.0f, 0.0f, 1e-40f, -3e38f};
            const float ordinary = static_cast<float>(static_cast<int>(rng() % 2001) - 1000) / 7.0f;
            const float v = i % 9 == 4 ? special[rng() % 7] : ordinary;
            std::memcpy(in.data() + 4 * i, &v, 4);
        } else {
            const uint16_t h = static_cast<uint16_t>(rng());
            std::memcpy(in.data() + 2 * i, &h, 2);
        }
    }
    return in;
}

}  // namespace

// rngtrk_cuda_dropout and rngtrk_cuda_dropout_slice (f32, f16, bf16 data):
// one kernel, the CPU's bits in every layout, aligned, one element off and
// in place.
TEST(Cuda, DropoutOfEveryDtypeEqualsTheCpu) {
    REQUIRE_GPU();
    std::mt19937_64 rng(8);
    for (rngtrk_layout layout : kLayouts) {
        for (rngtrk_dtype dtype : {RNGTRK_DTYPE_F32, RNGTRK_DTYPE_F16, RNGTRK_DTYPE_BF16}) {
            for (int trial = 0; trial < 3; ++trial) {
                rngtrk_sample_spec drop;
                ASSERT_EQ(RNGTRK_OK,
                          RNGTRK_SAMPLE_SPEC_INIT(&drop, layout, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
                drop.dtype = dtype, drop.param_a = trial == 2 ? 0.0 : 0.3 + 0.25 * trial;
                const uint64_t first = trial == 1 ? 3 : 1 + 2 * (rng() % 2000), count = trial == 1 ? 2 : 1000001;
                drop.numel = first + count + rng() % 1000;
                const rngtrk_philox_state st{rng(), 4 * (rng() % 1000)};
                const size_t w = width(dtype), n = count * w;
                const std::vector<uint8_t> in = dropout_data(dtype, count, rng);
                std::vector<uint8_t> want(n);
                ASSERT_EQ(RNGTRK_OK, rngtrk_dropout(&st, &drop, first, count, in.data(), want.data(), n));
                // in and out aligned alike, and each one element off while the other is not.
                for (const size_t in_shift : {size_t{0}, w})
                    for (const size_t shift : {size_t{0}, w}) {
                    Device din(n + 16);
                    ASSERT_EQ(cudaSuccess, cudaMemcpy(din.bytes() + in_shift, in.data(), n, cudaMemcpyHostToDevice));
                    GuardedDevice d(n, shift);
                    ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_dropout(&st, &drop, first, count, din.bytes() + in_shift,
                                                             d.out(), n, nullptr))
                        << rngtrk_last_error();
                    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
                    EXPECT_TRUE(dropout_holds(dtype, d, want))
                        << "layout " << layout << " dtype " << dtype << " shift " << shift << " in shift " << in_shift;
                    if (in_shift != shift) continue;
                    // In place.
                    GuardedDevice inout(n, shift);
                    ASSERT_EQ(cudaSuccess, cudaMemcpy(inout.out(), in.data(), n, cudaMemcpyHostToDevice));
                    ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_dropout(&st, &drop, first, count, inout.out(), inout.out(), n,
                                                             nullptr));
                    EXPECT_TRUE(dropout_holds(dtype, inout, want)) << "layout " << layout << " in place";
                }
                // A box of a 3-d tensor.
                const uint64_t g[3] = {17, 33, 65}, st0[3] = {3, 5, 7}, l[3] = {11, 20, 50};
                const size_t box = 11 * 20 * 50;
                const std::vector<uint8_t> box_in = dropout_data(dtype, box, rng);
                std::vector<uint8_t> box_want(box * w);
                ASSERT_EQ(RNGTRK_OK, rngtrk_dropout_slice(&st, &drop, 3, g, st0, l, box_in.data(), box_want.data(),
                                                          box_want.size()));
                Device dbox(box * w);
                ASSERT_EQ(cudaSuccess, cudaMemcpy(dbox.p, box_in.data(), box * w, cudaMemcpyHostToDevice));
                GuardedDevice dslice(box * w, 0);
                ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_dropout_slice(&st, &drop, 3, g, st0, l, dbox.p, dslice.out(),
                                                               box * w, nullptr))
                    << rngtrk_last_error();
                EXPECT_TRUE(dropout_holds(dtype, dslice, box_want)) << "layout " << layout << " slice";
            }
        }
    }
}

// A captured graph of (graph-safe sample, graph-safe advance) on a stream
// of its own, replayed three times, draws at o, o + inc, o + 2 inc: for
// every layout, on a tensor that needs several grid-stride rounds.
TEST(Cuda, ACapturedGraphDrawsFreshNumbersOnEveryReplay) {
    REQUIRE_GPU();
    for (rngtrk_layout layout : kLayouts) {
        rngtrk_sample_spec s = spec_for(layout, {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32});
        const uint64_t count = 3000017;
        s.numel = count;
        uint64_t increment = 0;
        ASSERT_EQ(RNGTRK_OK, rngtrk_sample_offset_increment(&s, count, &increment));
        const uint64_t host_state[2] = {2024, 40};
        Device state(16), out(count * 4);
        ASSERT_EQ(cudaSuccess, cudaMemcpy(state.p, host_state, 16, cudaMemcpyHostToDevice));
        cudaStream_t stream;
        ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
        cudaGraph_t graph;
        ASSERT_EQ(cudaSuccess, cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_sample_graphsafe(static_cast<uint64_t *>(state.p), &s, 0, count, out.p,
                                                          count * 4, stream))
            << rngtrk_last_error();
        ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_advance_graphsafe(static_cast<uint64_t *>(state.p), increment, stream));
        ASSERT_EQ(cudaSuccess, cudaStreamEndCapture(stream, &graph));
        cudaGraphExec_t exec;
        ASSERT_EQ(cudaSuccess, cudaGraphInstantiate(&exec, graph, 0));
        for (uint64_t replay = 0; replay < 3; ++replay) {
            ASSERT_EQ(cudaSuccess, cudaGraphLaunch(exec, stream));
            ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
            const rngtrk_philox_state st{2024, 40 + replay * increment};
            std::vector<uint8_t> cpu(count * 4);
            ASSERT_EQ(RNGTRK_OK, rngtrk_sample(&st, &s, 0, count, cpu.data(), cpu.size()));
            EXPECT_EQ(cpu, to_host(out, cpu.size())) << "layout " << layout << " replay " << replay;
        }
        uint64_t after[2];
        ASSERT_EQ(cudaSuccess, cudaMemcpy(after, state.p, 16, cudaMemcpyDeviceToHost));
        EXPECT_EQ(2024u, after[0]);
        EXPECT_EQ(40 + 3 * increment, after[1]);
        cudaGraphExecDestroy(exec);
        cudaGraphDestroy(graph);
        cudaStreamDestroy(stream);
    }
}

// Launches go to the caller's stream: on a non-blocking stream (which does
// not synchronise with the legacy default stream) the result is complete
// once that stream is synchronised.
TEST(Cuda, LaunchesRunOnTheCallersStream) {
    REQUIRE_GPU();
    rngtrk_sample_spec s = spec_for(RNGTRK_LAYOUT_STATELESS, {RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32});
    const uint64_t count = 1 << 20;
    const rngtrk_philox_state st{99, 4000};
    cudaStream_t stream;
    ASSERT_EQ(cudaSuccess, cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    Device out(count * 4);
    ASSERT_EQ(cudaSuccess, cudaMemset(out.p, 0, count * 4));
    ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_sample(&st, &s, 0, count, out.p, count * 4, stream));
    ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
    std::vector<uint8_t> cpu(count * 4);
    ASSERT_EQ(RNGTRK_OK, rngtrk_sample(&st, &s, 0, count, cpu.data(), cpu.size()));
    EXPECT_EQ(cpu, to_host(out, cpu.size()));
    cudaStreamDestroy(stream);
}

// A user's fused dropout kernel on the installed header.
__global__ void user_dropout(const float *in, float *out, uint64_t n, uint64_t seed, uint64_t offset, float p) {
    const uint64_t i = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x;
    if (i >= n) return;
    unsigned c;
    const rngtrk::PhiloxBlock w = rngtrk::element_block<rngtrk::Layout::stateless>(seed, offset, i, 4, 0, &c);
    out[i] = rngtrk::keep<rngtrk::Layout::stateless>(w.w[c], p) ? in[i] * (1.0f / p) : 0.0f;
}

TEST(Cuda, AUserKernelOnTheDeviceHeaderGivesTheLibrarysBits) {
    REQUIRE_GPU();
    const uint64_t n = 77777;
    std::vector<float> in(n), want(n);
    for (uint64_t i = 0; i < n; ++i) in[i] = 1.0f + 0.5f * i;
    rngtrk_sample_spec drop;
    ASSERT_EQ(RNGTRK_OK, RNGTRK_SAMPLE_SPEC_INIT(&drop, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
    drop.dtype = RNGTRK_DTYPE_F32, drop.param_a = 0.9;
    const rngtrk_philox_state st{31, 64};
    ASSERT_EQ(RNGTRK_OK, rngtrk_dropout_f32(&st, &drop, 0, n, in.data(), want.data()));
    Device din(n * 4), dout(n * 4);
    cudaMemcpy(din.p, in.data(), n * 4, cudaMemcpyHostToDevice);
    user_dropout<<<(n + 255) / 256, 256>>>(static_cast<float *>(din.p), static_cast<float *>(dout.p), n, 31, 64, 0.9f);
    ASSERT_EQ(cudaSuccess, cudaDeviceSynchronize());
    std::vector<uint8_t> bytes(n * 4);
    std::memcpy(bytes.data(), want.data(), bytes.size());
    EXPECT_EQ(bytes, to_host(dout, bytes.size()));
}
