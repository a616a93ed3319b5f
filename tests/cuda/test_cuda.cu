// Device tests (make test-gpu; make test runs them and they skip, saying
// why, without a GPU): every layout, distribution and dtype on the device
// equals the CPU; slices and dropout too; a captured CUDA graph replayed
// three times draws at three successive offsets; a user kernel built on
// rngtrk_device.cuh gives the library's dropout.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "rngtrk.h"
#include "rngtrk_device.cuh"

namespace {

#define REQUIRE_GPU()                                                                               \
    do {                                                                                            \
        if (rngtrk_cuda_available() != RNGTRK_OK) {                                                 \
            const std::string why = rngtrk_last_error();                                            \
            if (std::getenv("RNGTRK_REQUIRE_GPU") != nullptr) FAIL() << "no GPU (make test-gpu): " << why; \
            GTEST_SKIP() << "no GPU here, device test not run: " << why;                            \
        }                                                                                           \
    } while (0)

size_t width(uint32_t dtype) {
    switch (dtype) {
        case RNGTRK_DTYPE_U8: return 1;
        case RNGTRK_DTYPE_F16:
        case RNGTRK_DTYPE_BF16: return 2;
        case RNGTRK_DTYPE_U32:
        case RNGTRK_DTYPE_F32: return 4;
        default: return 8;
    }
}

struct Device {
    void *p = nullptr;
    explicit Device(size_t n) { EXPECT_EQ(cudaSuccess, cudaMalloc(&p, n ? n : 1)); }
    ~Device() { cudaFree(p); }
};

std::vector<uint8_t> to_host(const Device &d, size_t n) {
    std::vector<uint8_t> h(n);
    EXPECT_EQ(cudaSuccess, cudaMemcpy(h.data(), d.p, n, cudaMemcpyDeviceToHost));
    return h;
}

}  // namespace

TEST(Cuda, EveryLayoutDistributionAndDtypeEqualsTheCpu) {
    REQUIRE_GPU();
    const struct { rngtrk_distribution d; rngtrk_dtype t; } kinds[] = {
        {RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32}, {RNGTRK_DIST_BITS, RNGTRK_DTYPE_U64},
        {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32}, {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F64},
        {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F16}, {RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_BF16},
        {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32}, {RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F64},
        {RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8}};
    std::mt19937_64 rng(1);
    for (rngtrk_layout layout : {RNGTRK_LAYOUT_STATELESS, RNGTRK_LAYOUT_NVFUSER, RNGTRK_LAYOUT_TORCH_EAGER_CUDA}) {
        for (auto k : kinds) {
            for (int trial = 0; trial < 4; ++trial) {
                rngtrk_sample_spec s;
                ASSERT_EQ(RNGTRK_OK, rngtrk_sample_spec_init(&s, layout, k.d, k.t));
                if (k.d == RNGTRK_DIST_UNIFORM) s.param_a = -1.5, s.param_b = 2.25;
                const uint64_t first = rng() % 5000, count = 1 + rng() % (trial == 3 ? 3000000 : 20000);
                s.numel = first + count + rng() % 1000;
                const rngtrk_philox_state st{rng(), 4 * (rng() % 1000)};
                const size_t n = count * width(k.t);
                std::vector<uint8_t> cpu(n);
                ASSERT_EQ(RNGTRK_OK, rngtrk_sample(&st, &s, first, count, cpu.data(), n));
                Device d(n);
                ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_sample(&st, &s, first, count, d.p, n, nullptr)) << rngtrk_last_error();
                ASSERT_EQ(cpu, to_host(d, n)) << "layout " << layout << " dist " << k.d << " dtype " << k.t;
            }
        }
    }
}

TEST(Cuda, SlicesAndDropoutEqualTheCpu) {
    REQUIRE_GPU();
    for (rngtrk_layout layout : {RNGTRK_LAYOUT_STATELESS, RNGTRK_LAYOUT_NVFUSER, RNGTRK_LAYOUT_TORCH_EAGER_CUDA}) {
        rngtrk_sample_spec s;
        ASSERT_EQ(RNGTRK_OK, rngtrk_sample_spec_init(&s, layout, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32));
        const uint64_t g[3] = {17, 33, 65}, st0[3] = {3, 5, 7}, l[3] = {11, 20, 50};
        const rngtrk_philox_state st{77, 8};
        std::vector<uint8_t> cpu(11 * 20 * 50 * 4);
        ASSERT_EQ(RNGTRK_OK, rngtrk_sample_slice(&st, &s, 3, g, st0, l, cpu.data(), cpu.size()));
        Device d(cpu.size());
        ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_sample_slice(&st, &s, 3, g, st0, l, d.p, cpu.size(), nullptr));
        EXPECT_EQ(cpu, to_host(d, cpu.size()));
        rngtrk_sample_spec drop;
        ASSERT_EQ(RNGTRK_OK, rngtrk_sample_spec_init(&drop, layout, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
        drop.dtype = RNGTRK_DTYPE_F32, drop.param_a = 0.8, drop.numel = 100000;
        std::vector<float> in(90000), out(90000);
        for (size_t i = 0; i < in.size(); ++i) in[i] = 0.01f * i;
        ASSERT_EQ(RNGTRK_OK, rngtrk_dropout_f32(&st, &drop, 9, in.size(), in.data(), out.data()));
        Device din(in.size() * 4), dout(in.size() * 4);
        cudaMemcpy(din.p, in.data(), in.size() * 4, cudaMemcpyHostToDevice);
        ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_dropout_f32(&st, &drop, 9, in.size(), static_cast<float *>(din.p),
                                                     static_cast<float *>(dout.p), nullptr));
        std::vector<uint8_t> want(in.size() * 4);
        std::memcpy(want.data(), out.data(), want.size());
        EXPECT_EQ(want, to_host(dout, want.size()));
    }
}

TEST(Cuda, ACapturedGraphDrawsFreshNumbersOnEveryReplay) {
    REQUIRE_GPU();
    rngtrk_sample_spec s;
    ASSERT_EQ(RNGTRK_OK, rngtrk_sample_spec_init(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    const uint64_t count = 100003, increment = 4 * ((count + 3) / 4);
    const uint64_t host_state[2] = {2024, 40};
    Device state(16), out(count * 4);
    cudaMemcpy(state.p, host_state, 16, cudaMemcpyHostToDevice);
    cudaStream_t stream;
    ASSERT_EQ(cudaSuccess, cudaStreamCreate(&stream));
    cudaGraph_t graph;
    ASSERT_EQ(cudaSuccess, cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_sample_graphsafe(static_cast<uint64_t *>(state.p), &s, 0, count, out.p,
                                                      count * 4, stream));
    ASSERT_EQ(RNGTRK_OK, rngtrk_cuda_advance_graphsafe(static_cast<uint64_t *>(state.p), count, stream));
    ASSERT_EQ(cudaSuccess, cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    ASSERT_EQ(cudaSuccess, cudaGraphInstantiate(&exec, graph, 0));
    for (uint64_t replay = 0; replay < 3; ++replay) {
        ASSERT_EQ(cudaSuccess, cudaGraphLaunch(exec, stream));
        ASSERT_EQ(cudaSuccess, cudaStreamSynchronize(stream));
        const rngtrk_philox_state st{2024, 40 + replay * increment};
        std::vector<uint8_t> cpu(count * 4);
        ASSERT_EQ(RNGTRK_OK, rngtrk_sample(&st, &s, 0, count, cpu.data(), cpu.size()));
        EXPECT_EQ(cpu, to_host(out, cpu.size())) << "replay " << replay;
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
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
    ASSERT_EQ(RNGTRK_OK, rngtrk_sample_spec_init(&drop, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
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
