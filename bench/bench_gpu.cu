/* SPDX-License-Identifier: Apache-2.0 */
// make bench-gpu: device GB/s of rngtrk's CUDA sampling next to references
// measured in the same run: the device's write-only rate (cudaMemset), its
// copy rate, the Philox bound (the library's philox4x32_10 alone, one block
// per 4 elements, nothing stored: the most elements per second any layout's
// kernels could produce) and cuRAND's Philox generator
// (curandGenerateUniform).  Every figure is the median of kRepeats
// event-timed launches after a warm-up.  Not a test.  Prints why and exits 1
// without a GPU.
//
//   bench_gpu [JSON_OUT] [CASE]     CASE: run only that case (for ncu)
//
// It uses the public C API only, so it also runs against an older
// librngtrk (tools/gpu_bench_compare.sh: the kernels before a change, on
// the same card); a case that library does not make is reported and skipped.
// bench/bench_gpu_torch.py reads JSON_OUT and adds torch.rand and
// torch.randn, measured in the same `make bench-gpu`.
#include <cuda_runtime.h>
#include <curand.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "rngtrk.h"
#include "rngtrk_device.cuh"

namespace {

constexpr size_t kElements = size_t{1} << 26;  // 256 MiB of 32-bit values, far beyond L2
constexpr int kRepeats = 30;

void check(cudaError_t err, const char *what) {
    if (err != cudaSuccess) {
        std::fprintf(stderr, "bench-gpu: %s: %s\n", what, cudaGetErrorString(err));
        std::exit(1);
    }
}

void check(rngtrk_status st, const char *what) {
    if (st != RNGTRK_OK) {
        std::fprintf(stderr, "bench-gpu: %s: %s\n", what, rngtrk_last_error());
        std::exit(1);
    }
}

// Median seconds of one launch of `launch`.
template <class F>
double median_seconds(F launch) {
    cudaEvent_t a, b;
    check(cudaEventCreate(&a), "event"), check(cudaEventCreate(&b), "event");
    launch();  // warm-up: module load, occupancy query
    check(cudaDeviceSynchronize(), "warm-up");
    std::vector<double> t;
    for (int r = 0; r < kRepeats; ++r) {
        check(cudaEventRecord(a), "record");
        launch();
        check(cudaEventRecord(b), "record");
        check(cudaEventSynchronize(b), "sync");
        float ms = 0;
        check(cudaEventElapsedTime(&ms, a, b), "elapsed");
        t.push_back(ms / 1e3);
    }
    check(cudaGetLastError(), "launch");
    cudaEventDestroy(a), cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct Case {
    const char *name;
    rngtrk_layout layout;
    rngtrk_distribution dist;
    rngtrk_dtype dtype;
    bool dropout;
    double bytes_per_element;  // moved through memory: written (+ read, for dropout)
};

// The Philox bound: the stateless layout's blocks, computed by the library's
// own philox4x32_10 (rngtrk_device.cuh) and folded into one word per thread,
// stored only if it takes a value it practically never does, so that
// nothing but Philox and the grid-stride loop is timed.
__global__ void philox_bound(uint64_t blocks, uint32_t k0, uint32_t k1, uint32_t *sink) {
    uint32_t acc = 0;
    const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
    for (uint64_t b = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; b < blocks; b += stride) {
        const rngtrk::PhiloxBlock w =
            rngtrk::philox4x32_10(static_cast<uint32_t>(b), static_cast<uint32_t>(b >> 32), 0, 0, k0, k1);
        acc ^= w.w[0] ^ w.w[1] ^ w.w[2] ^ w.w[3];
    }
    if (acc == 0x9E3779B9u) *sink = acc;
}

}  // namespace

int main(int argc, char **argv) {
    const char *json_path = argc > 1 && argv[1][0] != 0 ? argv[1] : nullptr;
    const char *only = argc > 2 ? argv[2] : nullptr;
    if (rngtrk_cuda_available() != RNGTRK_OK) {
        std::printf("bench-gpu: %s\n", rngtrk_last_error());
        return 1;
    }
    cudaDeviceProp prop;
    check(cudaGetDeviceProperties(&prop, 0), "properties");
    int driver = 0, runtime = 0;
    cudaDriverGetVersion(&driver), cudaRuntimeGetVersion(&runtime);
    void *a = nullptr, *b = nullptr;
    check(cudaMalloc(&a, kElements * 8), "malloc"), check(cudaMalloc(&b, kElements * 8), "malloc");
    check(cudaMemset(b, 0x3c, kElements * 8), "memset");  // dropout's input: finite floats, not zeros
    const double mib256 = kElements * 4.0;

    // References, in this run.
    const double memset_s = median_seconds([&] { cudaMemsetAsync(a, 0x5a, kElements * 4); });
    const double copy_s = median_seconds([&] { cudaMemcpyAsync(b, a, kElements * 4, cudaMemcpyDeviceToDevice); });
    curandGenerator_t gen;
    if (curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10) != CURAND_STATUS_SUCCESS) {
        std::fprintf(stderr, "bench-gpu: curandCreateGenerator failed\n");
        return 1;
    }
    curandSetPseudoRandomGeneratorSeed(gen, 1234);
    const double curand_s = median_seconds([&] { curandGenerateUniform(gen, static_cast<float *>(a), kElements); });
    const int waves = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / 256);
    const double philox_s = median_seconds([&] {
        philox_bound<<<waves, 256>>>(kElements / 4, 1234, 0, static_cast<uint32_t *>(b));
    });
    const double write_gbs = mib256 / memset_s / 1e9, copy_gbs = 2 * mib256 / copy_s / 1e9;
    const double curand_gbs = mib256 / curand_s / 1e9;
    const double philox_eps = kElements / philox_s;  // elements per second at 4 per block
    std::printf("device %s, %d SMs, driver %d, runtime %d; %zu elements per case, median of %d\n", prop.name,
                prop.multiProcessorCount, driver, runtime, kElements, kRepeats);
    std::printf("reference write-only (cudaMemset)   %6.0f GB/s\n", write_gbs);
    std::printf("reference copy (read + write)       %6.0f GB/s\n", copy_gbs);
    std::printf("reference curandGenerateUniform f32 %6.0f GB/s  (%3.0f%% of write-only)\n", curand_gbs,
                100 * curand_gbs / write_gbs);
    std::printf("reference Philox bound              %6.3f x 10^12 elements/s (4 per block; nothing stored): "
                "%.0f GB/s at 4 bytes, %.0f at 2 bytes  (%.1f us)\n",
                philox_eps / 1e12, philox_eps * 4 / 1e9, philox_eps * 2 / 1e9, philox_s * 1e6);

    const Case cases[] = {
        {"u32_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32, false, 4},
        {"uniform_f32_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32, false, 4},
        {"uniform_f32_nvfuser", RNGTRK_LAYOUT_NVFUSER, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32, false, 4},
        {"uniform_f32_torch_eager_cuda", RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32, false,
         4},
        {"uniform_bf16_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_BF16, false, 2},
        {"uniform_f16_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F16, false, 2},
        {"normal_f32_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, false, 4},
        {"normal_bf16_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_BF16, false, 2},
        {"normal_f16_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F16, false, 2},
        {"normal_f64_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F64, false, 8},
        {"normal_f32_nvfuser", RNGTRK_LAYOUT_NVFUSER, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, false, 4},
        {"normal_f32_torch_eager_cuda", RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, false, 4},
        {"normal_bf16_torch_eager_cuda", RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_BF16, false,
         2},
        {"normal_f32_triton", RNGTRK_LAYOUT_TRITON, RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, false, 4},
        {"bernoulli_mask_u8_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8, false, 1},
        {"dropout_f32_stateless", RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_F32, true, 8},
        {"dropout_f32_torch_eager_cuda", RNGTRK_LAYOUT_TORCH_EAGER_CUDA, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_F32, true,
         8},
    };
    std::string json = "{\"device\": \"" + std::string(prop.name) + "\", \"sm_count\": " +
                       std::to_string(prop.multiProcessorCount) + ", \"elements\": " + std::to_string(kElements) +
                       ", \"write_gbs\": " + std::to_string(write_gbs) + ", \"copy_gbs\": " + std::to_string(copy_gbs) +
                       ", \"curand_uniform_gbs\": " + std::to_string(curand_gbs) +
                       ", \"philox_elements_per_s\": " + std::to_string(philox_eps) + ", \"cases\": {";
    bool first_case = true;
    std::printf("%-32s %6s  %-22s %-20s %-14s\n", "case", "GB/s", "share of reference", "of the Philox bound",
                "vs curand");
    for (const Case &c : cases) {
        if (only != nullptr && std::strcmp(only, c.name) != 0) continue;
        rngtrk_sample_spec s;
        if (RNGTRK_SAMPLE_SPEC_INIT(&s, c.layout, c.dist, c.dropout ? RNGTRK_DTYPE_U8 : c.dtype) != RNGTRK_OK) {
            std::printf("bench-gpu %-30s not made by this library: %s\n", c.name, rngtrk_last_error());
            continue;
        }
        if (c.dropout) s.dtype = RNGTRK_DTYPE_F32, s.param_a = 0.9;
        s.sm_count = static_cast<uint32_t>(prop.multiProcessorCount);
        s.max_threads_per_sm = static_cast<uint32_t>(prop.maxThreadsPerMultiProcessor);
        const rngtrk_philox_state st{1234, 0};
        const double sec = median_seconds([&] {
            if (c.dropout)
                check(rngtrk_cuda_dropout_f32(&st, &s, 0, kElements, static_cast<const float *>(b),
                                              static_cast<float *>(a), nullptr), "dropout");
            else
                check(rngtrk_cuda_sample(&st, &s, 0, kElements, a, kElements * 8, nullptr), "sample");
        });
        const double gbs = kElements * c.bytes_per_element / sec / 1e9;
        const double of_reference = c.dropout ? gbs / copy_gbs : gbs / write_gbs;
        const double of_philox = kElements / sec / philox_eps;  // elements per second over the bound's
        std::printf("bench-gpu %-30s %6.0f GB/s  %3.0f%% of %-10s  %3.0f%% of Philox bound  %5.2fx curand  (%.1f us)\n",
                    c.name, gbs, 100 * of_reference, c.dropout ? "copy" : "write-only", 100 * of_philox,
                    gbs / curand_gbs, sec * 1e6);
        json += std::string(first_case ? "" : ", ") + "\"" + c.name + "\": {\"gbs\": " + std::to_string(gbs) +
                ", \"seconds\": " + std::to_string(sec) + ", \"bytes_per_element\": " +
                std::to_string(c.bytes_per_element) + "}";
        first_case = false;
    }
    json += "}}\n";
    if (json_path != nullptr) {
        FILE *f = std::fopen(json_path, "w");
        if (f == nullptr || std::fputs(json.c_str(), f) < 0 || std::fclose(f) != 0) {
            std::fprintf(stderr, "bench-gpu: cannot write %s\n", json_path);
            return 1;
        }
    }
    curandDestroyGenerator(gen);
    cudaFree(a), cudaFree(b);
    return 0;
}
