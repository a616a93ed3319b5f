// make bench-gpu: device GB/s of rngtrk_cuda_sample (u32, uniform f32, normal
// f32, bernoulli mask) next to cuRAND's Philox generator
// (curandGenerateUniform) and the device's copy bandwidth, measured in the
// same run.  Not a test.  Prints why and exits 1 without a GPU.
#include <cuda_runtime.h>
#include <curand.h>

#include <cstdio>

#include "rngtrk.h"

namespace {

constexpr size_t kElements = size_t{1} << 26;  // 256 MiB of 32-bit values
constexpr int kRepeats = 20;

template <class F>
double best_seconds(F launch) {
    cudaEvent_t a, b;
    cudaEventCreate(&a), cudaEventCreate(&b);
    launch();  // warm up
    double best = 1e30;
    for (int r = 0; r < kRepeats; ++r) {
        cudaEventRecord(a);
        launch();
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms = 0;
        cudaEventElapsedTime(&ms, a, b);
        if (ms / 1e3 < best) best = ms / 1e3;
    }
    cudaEventDestroy(a), cudaEventDestroy(b);
    return best;
}

}  // namespace

int main() {
    if (rngtrk_cuda_available() != RNGTRK_OK) {
        std::printf("bench-gpu: %s\n", rngtrk_last_error());
        return 1;
    }
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    void *a = nullptr, *b = nullptr;
    cudaMalloc(&a, kElements * 4), cudaMalloc(&b, kElements * 4);
    const double bytes = kElements * 4.0;
    // Copy bandwidth: a device-to-device copy reads and writes `bytes`.
    const double copy_s = best_seconds([&] { cudaMemcpy(b, a, kElements * 4, cudaMemcpyDeviceToDevice); });
    const double write_bw = bytes / copy_s;  // the write rate a copy sustains
    curandGenerator_t gen;
    curandCreateGenerator(&gen, CURAND_RNG_PSEUDO_PHILOX4_32_10);
    curandSetPseudoRandomGeneratorSeed(gen, 1234);
    const double curand_s = best_seconds([&] { curandGenerateUniform(gen, static_cast<float *>(a), kElements); });
    std::printf("device %s (%d SMs); copy: %.0f GB/s written; curandGenerateUniform (Philox): %.0f GB/s\n", prop.name,
                prop.multiProcessorCount, write_bw / 1e9, bytes / curand_s / 1e9);
    const struct { const char *name; rngtrk_distribution d; rngtrk_dtype t; double width; } cases[] = {
        {"u32_stateless", RNGTRK_DIST_BITS, RNGTRK_DTYPE_U32, 4},
        {"uniform_f32_stateless", RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32, 4},
        {"normal_f32_stateless", RNGTRK_DIST_NORMAL, RNGTRK_DTYPE_F32, 4},
        {"bernoulli_mask_u8_stateless", RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8, 1}};
    for (const auto &c : cases) {
        rngtrk_sample_spec s;
        rngtrk_sample_spec_init(&s, RNGTRK_LAYOUT_STATELESS, c.d, c.t);
        const rngtrk_philox_state st{1234, 0};
        const double sec = best_seconds([&] { rngtrk_cuda_sample(&st, &s, 0, kElements, a, kElements * 4, nullptr); });
        const double gbs = kElements * c.width / sec;
        std::printf("bench-gpu %s %.0f GB/s vs curand_uniform %.0f GB/s ratio %.2f; %.0f%% of copy write bandwidth\n",
                    c.name, gbs / 1e9, bytes / curand_s / 1e9, gbs / (bytes / curand_s), 100 * gbs / write_bw);
    }
    curandDestroyGenerator(gen);
    cudaFree(a), cudaFree(b);
    return 0;
}
