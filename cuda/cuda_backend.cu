/* SPDX-License-Identifier: Apache-2.0 */
// The CUDA kernels: thin __global__ wrappers around the host+device bodies of
// kernel_bodies.h, launched with the geometry of launch_geometry.h.  The
// bodies compute every element with the CPU engines' own functions
// (core/philox.h, elements.h), so the bits are the CPU's.  Built with
// --fmad=false: no contraction.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "arch_support.h"
#include "cuda_backend.h"
#include "cuda_module.h"
#include "error.h"
#include "kernel_bodies.h"
#include "launch_geometry.h"

// The GPU code this object carries, from the -gencode list it was built
// with: the Makefile and CMakeLists.txt pass both lists as
// RNGTRK_ARCH(80)RNGTRK_ARCH(90) (nvcc would split a -D value at commas);
// the trailing 0 ends a list that may be empty.
#if !defined(RNGTRK_CUDA_SASS) || !defined(RNGTRK_CUDA_PTX)
#error "build with -DRNGTRK_CUDA_SASS='RNGTRK_ARCH(80)...' -DRNGTRK_CUDA_PTX='RNGTRK_ARCH(120)' (the -gencode list)"
#endif
#define RNGTRK_ARCH(a) a,

namespace rngtrk {
namespace cuda_backend {

namespace {

using namespace kernels;

__device__ ThreadPos here() { return ThreadPos{blockIdx.x, threadIdx.x, gridDim.x, blockDim.x}; }

template <Layout L, Dist D, DType T>
__global__ void __launch_bounds__(kBlockThreads) in_order_kernel(InOrderArgs a) {
    in_order_body<L, D, T>(here(), a);
}

template <Dist D, DType T, class I>
__global__ void __launch_bounds__(kBlockThreads) eager_kernel(EagerArgs a) {
    eager_body<D, T, I>(here(), a);
}

template <Layout L, Dist D, DType T>
__global__ void __launch_bounds__(kBlockThreads) slice_kernel(SliceArgs a) {
    slice_body<L, D, T>(here(), a);
}

__global__ void advance_kernel(uint64_t *device_state, uint64_t increment) {
    advance_body(here(), device_state, increment);
}

void check_cuda(cudaError_t err, const char *what) {
    if (err != cudaSuccess)
        fail(Status::unavailable, std::string(what) + ": " + cudaGetErrorString(err));
}

constexpr int kMaxDevices = 64;

constexpr int kSass[] = {RNGTRK_CUDA_SASS 0};
constexpr int kPtx[] = {RNGTRK_CUDA_PTX 0};
constexpr cuda_arch::Code kCode{kSass, sizeof kSass / sizeof kSass[0] - 1, kPtx, sizeof kPtx / sizeof kPtx[0] - 1};

// Whether the current device runs any of kCode; if not, *why says so.
// Asked once per device (the answer cannot change in a process, but for
// CUDA_FORCE_PTX_JIT, which the driver reads once too).
bool device_has_code(std::string *why) {
    static std::atomic<int> verdict[kMaxDevices];  // 0: not asked yet, 1: runs, -1: no code
    int device = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    const int known = device < kMaxDevices ? verdict[device].load(std::memory_order_relaxed) : 0;
    if (known == 1) return true;
    int major = 0, minor = 0;
    check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
    check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "cudaDeviceGetAttribute");
    const char *force = std::getenv("CUDA_FORCE_PTX_JIT");
    const bool force_ptx = force != nullptr && std::string(force) == "1";
    const int cc = 10 * major + minor;
    const bool runs = cuda_arch::code_for(cc, kCode, force_ptx).runs != cuda_arch::Runs::none;
    if (device < kMaxDevices) verdict[device].store(runs ? 1 : -1, std::memory_order_relaxed);
    if (runs) return true;
    cudaDeviceProp prop{};
    const std::string name = cudaGetDeviceProperties(&prop, device) == cudaSuccess ? prop.name : "unknown GPU";
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    *why = cuda_arch::no_code_reason(device, name, cc, driver, CUDART_VERSION, kCode, force_ptx);
    return false;
}

// Launches `kernel` over the items of `a` on `stream`: one wave of resident
// blocks at most, the rest grid-stride.  Resident blocks per SM come from
// the occupancy calculator, asked once per kernel and device.
template <auto kernel, class Args>
void launch(const Args &a, cudaStream_t stream) {
    static std::atomic<int> blocks_per_sm[kMaxDevices];  // 0: not asked yet
    int device = 0, sms = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
    int per_sm = device < kMaxDevices ? blocks_per_sm[device].load(std::memory_order_relaxed) : 0;
    if (per_sm == 0) {
        check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlockThreads, 0),
                   "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
        if (device < kMaxDevices) blocks_per_sm[device].store(per_sm, std::memory_order_relaxed);
    }
    kernel<<<grid_for(items(a), static_cast<uint32_t>(sms), static_cast<uint32_t>(per_sm)), kBlockThreads, 0,
             stream>>>(a);
    check_cuda(cudaGetLastError(), "kernel launch");
}

}  // namespace

const int *carried_sass() { return kSass; }
const int *carried_ptx() { return kPtx; }
int carried_runtime() { return CUDART_VERSION; }

bool usable(std::string *why) {
    // The message names the real cause: no driver at all (most machines
    // without a GPU), a driver older than this library's CUDA runtime, a
    // driver that sees no GPU, a GPU that none of the library's code runs
    // on, or whatever else the runtime says.
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
    if (err == cudaErrorInsufficientDriver && driver == 0) {
        *why = cuda_arch::kNoDriverReason;
    } else if (err == cudaErrorInsufficientDriver) {
        *why = cuda_arch::old_driver_reason(driver, CUDART_VERSION);
    } else if (err == cudaErrorNoDevice || (err == cudaSuccess && n == 0)) {
        const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
        *why = std::string("no CUDA device: the NVIDIA driver sees no GPU") +
               (visible != nullptr ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : "");
    } else if (err != cudaSuccess) {
        *why = std::string("no usable CUDA device: ") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
    } else {
        return device_has_code(why);
    }
    return false;
}

void generate(const SampleSpec &s, const PhiloxState &st, const uint64_t *device_state, uint64_t numel,
              uint64_t first, uint64_t count, void *out, const void *in, void *stream) {
    if (count == 0) return;
    const cudaStream_t cs = static_cast<cudaStream_t>(stream);
    plan_range(s, st, device_state, numel, first, count, out, in, [&](const auto &a, auto l, auto d, auto t, auto i) {
        constexpr Layout L = decltype(l)::value;
        constexpr Dist D = decltype(d)::value;
        constexpr DType T = decltype(t)::value;
        if constexpr (L == Layout::eager_cuda) launch<eager_kernel<D, T, typename decltype(i)::type>>(a, cs);
        else launch<in_order_kernel<L, D, T>>(a, cs);
    });
}

void generate_slice(const SliceRequest &r, const PhiloxState &st, void *stream) {
    const SliceArgs a = plan_slice(r, st);
    if (a.box == 0) return;
    with_kind(r.spec, [&](auto l, auto d, auto t) {
        constexpr Layout L = decltype(l)::value;
        constexpr Dist D = decltype(d)::value;
        constexpr DType T = decltype(t)::value;
        launch<slice_kernel<L, D, T>>(a, static_cast<cudaStream_t>(stream));
    });
}

void advance_device(uint64_t *device_state, uint64_t increment, void *stream) {
    advance_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(device_state, graphsafe_increment(increment));
    check_cuda(cudaGetLastError(), "kernel launch");
}

}  // namespace cuda_backend
}  // namespace rngtrk
