// SPDX-License-Identifier: Apache-2.0
// The CUDA entry points where no GPU can run them (this machine, or a
// library built with CUDA=0): arguments are checked first, then
// RNGTRK_E_UNAVAILABLE with the reason.  tests/cuda/ has the device tests.
#include <dlfcn.h>

#include <cstring>
#include <string>

#include "support.h"

// The message names the real cause.  Whether the machine has a CUDA driver
// is asked here of the loader (libcuda.so.1), not of the library: without
// one the message says so (or that the library has no CUDA at all), never a
// driver "version" problem.
TEST(CudaApi, WithoutADeviceTheMessageNamesTheCause) {
    if (rngtrk_cuda_available() == RNGTRK_OK) GTEST_SKIP() << "a CUDA device is present here";
    const std::string why = rngtrk_last_error();
    const bool no_build = why.rfind("this librngtrk was built without CUDA", 0) == 0;
    void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (driver == nullptr) {
        EXPECT_TRUE(no_build || why.rfind("no CUDA driver: ", 0) == 0) << why;
    } else {
        dlclose(driver);
        EXPECT_TRUE(no_build || why.rfind("no CUDA device", 0) == 0 || why.rfind("the NVIDIA driver is too old", 0) == 0 ||
                    why.rfind("no usable CUDA device: cuda", 0) == 0)
            << why;
    }
    if (no_build) {
        EXPECT_NE(std::string::npos, why.find("CUDA_HOME")) << "says how to get a CUDA build";
    }
}

TEST(CudaApi, WithoutADeviceEverythingSaysUnavailableAndWhy) {
    if (rngtrk_cuda_available() == RNGTRK_OK)
        GTEST_SKIP() << "a CUDA device is present here: tests/cuda covers it (make test-gpu)";
    EXPECT_STATUS(RNGTRK_E_UNAVAILABLE, rngtrk_cuda_available());
    std::cout << "[ INFO     ] " << rngtrk_last_error() << "\n";
    rngtrk_sample_spec s;
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    const rngtrk_philox_state st{1, 0}, misaligned{1, 2};
    float fake[4];  // never written: the call fails before any launch
    EXPECT_STATUS(RNGTRK_E_UNAVAILABLE, rngtrk_cuda_sample(&st, &s, 0, 4, fake, sizeof fake, nullptr));
    rngtrk_sample_spec keep = s;
    keep.distribution = RNGTRK_DIST_BERNOULLI;  // dropout: BERNOULLI with dtype F32
    EXPECT_STATUS(RNGTRK_E_UNAVAILABLE, rngtrk_cuda_dropout_f32(&st, &keep, 0, 4, fake, fake, nullptr));
    const uint64_t shape[1] = {4}, start[1] = {0};
    EXPECT_STATUS(RNGTRK_E_UNAVAILABLE, rngtrk_cuda_sample_slice(&st, &s, 1, shape, start, shape, fake, sizeof fake, nullptr));
    uint64_t device_state[2] = {1, 0};
    EXPECT_STATUS(RNGTRK_E_UNAVAILABLE, rngtrk_cuda_sample_graphsafe(device_state, &s, 0, 4, fake, sizeof fake, nullptr));
    EXPECT_STATUS(RNGTRK_E_UNAVAILABLE, rngtrk_cuda_advance_graphsafe(device_state, 4, nullptr));
    // Bad arguments are reported as such, before the device question.
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_cuda_sample(&misaligned, &s, 0, 4, fake, sizeof fake, nullptr));
    EXPECT_STATUS(RNGTRK_E_BUFFER_TOO_SMALL, rngtrk_cuda_sample(&st, &s, 0, 4, fake, 15, nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_cuda_sample(&st, nullptr, 0, 4, fake, sizeof fake, nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_cuda_sample_graphsafe(nullptr, &s, 0, 4, fake, sizeof fake, nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_cuda_advance_graphsafe(nullptr, 4, nullptr));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_cuda_dropout_f32(&st, &keep, 0, 4, nullptr, fake, nullptr));
}

// A misaligned output or input is refused before any launch, GPU or not:
// on a device it would fault and poison the process's CUDA context.
TEST(CudaApi, MisalignedPointersAreRefusedBeforeAnyLaunch) {
    rngtrk_sample_spec s;
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_UNIFORM, RNGTRK_DTYPE_F32));
    const rngtrk_philox_state st{1, 0};
    alignas(8) unsigned char buf[64] = {};
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_cuda_sample(&st, &s, 0, 4, buf + 2, 32, nullptr));
    EXPECT_NE(nullptr, std::strstr(rngtrk_last_error(), "aligned")) << rngtrk_last_error();
    rngtrk_sample_spec keep = s;
    keep.distribution = RNGTRK_DIST_BERNOULLI;
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_cuda_dropout_f32(&st, &keep, 0, 4, reinterpret_cast<const float *>(buf + 1),
                                                                      reinterpret_cast<float *>(buf + 32), nullptr));
    const uint64_t shape[1] = {4}, start[1] = {0};
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_cuda_sample_slice(&st, &s, 1, shape, start, shape, buf + 1, 32, nullptr));
    // And on the CPU, where the store would be undefined behaviour.
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_sample(&st, &s, 0, 4, buf + 2, 32));
    EXPECT_STATUS(RNGTRK_E_INVALID_ARGUMENT, rngtrk_dropout_f32(&st, &keep, 0, 4, reinterpret_cast<const float *>(buf + 1),
                                                                reinterpret_cast<float *>(buf + 32)));
    ASSERT_OK(RNGTRK_SAMPLE_SPEC_INIT(&s, RNGTRK_LAYOUT_STATELESS, RNGTRK_DIST_BERNOULLI, RNGTRK_DTYPE_U8));
    ASSERT_OK(rngtrk_sample(&st, &s, 0, 4, buf + 1, 32));  // a u8 mask needs no alignment
}
