// The CUDA kernels: every layout, distribution and dtype of the CPU engines,
// computed by the same host+device functions (core/philox.h, elements.h),
// so the bits are the CPU's.  Built with --fmad=false: no contraction.
#include <cuda_runtime.h>

#include <string>

#include "cuda_backend.h"
#include "elements.h"
#include "error.h"
#include "layouts.h"
#include "philox.h"

namespace rngtrk {
namespace cuda_backend {

namespace {

constexpr int kThreads = 256;

void check_cuda(cudaError_t err, const char *what) {
    if (err != cudaSuccess)
        fail(RNGTRK_E_UNAVAILABLE, std::string(what) + ": " + cudaGetErrorString(err));
}

// The element with unit `c` of the block whose words are `w`, written to
// out[i] (or, for dropout, out[i] = keep ? in[i] * scale : 0).
template <Layout L>
__device__ void emit(const SampleSpec &s, const uint32_t w[4], unsigned c, uint64_t i, void *out, const float *in) {
    switch (s.dist) {
        case Dist::bits:
            if (s.dtype == DType::u32) static_cast<uint32_t *>(out)[i] = w[c];
            else static_cast<uint64_t *>(out)[i] = bits_u64(w[2 * c], w[2 * c + 1]);
            break;
        case Dist::uniform:
            if (s.dtype == DType::f32) {
                static_cast<float *>(out)[i] = uniform_f32<L>(w[c], s.low32, s.range32, s.high32);
            } else if (s.dtype == DType::f64) {
                static_cast<double *>(out)[i] = uniform_f64<L>(w[2 * c], w[2 * c + 1], s.low64, s.range64, s.high64);
            } else {
                static_cast<uint16_t *>(out)[i] =
                    uniform_16<L>(w[c], s.low32, s.range32, s.dtype == DType::f16, s.low16, s.high16);
            }
            break;
        case Dist::normal:
            if (s.dtype == DType::f32) {
                float z0, z1;
                const unsigned p = c & ~1u;
                normal_f32<L>(w[p], w[p + 1], s.mean32, s.std32, &z0, &z1);
                static_cast<float *>(out)[i] = c & 1 ? z1 : z0;
            } else {
                double z0, z1;
                normal_f64<L>(w[0], w[1], w[2], w[3], s.mean64, s.std64, &z0, &z1);
                static_cast<double *>(out)[i] = c & 1 ? z1 : z0;
            }
            break;
        case Dist::bernoulli: static_cast<uint8_t *>(out)[i] = keep<L>(w[c], s.p32); break;
        case Dist::dropout:
            static_cast<float *>(out)[i] = keep<L>(w[c], s.p32) ? in[i] * s.scale32 : 0.0f;
            break;
    }
}

// The state: from the arguments, or (graph-safe) from device memory.
__device__ void read_state(const uint64_t *device_state, uint64_t *seed, uint64_t *base) {
    if (device_state != nullptr) *seed = device_state[0], *base = device_state[1] / 4;
}

// Stateless and nvfuser: thread j computes block first/E + j and writes
// the elements of it that fall in [first, first + count).
template <Layout L>
__global__ void in_order_kernel(SampleSpec s, uint64_t seed, uint64_t base, const uint64_t *device_state,
                                uint64_t first, uint64_t count, uint64_t blocks, void *out, const float *in) {
    read_state(device_state, &seed, &base);
    const unsigned E = (s.dtype == DType::u64 || s.dtype == DType::f64) && s.dist != Dist::dropout ? 2 : 4;
    const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (uint64_t j = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; j < blocks; j += uint64_t{gridDim.x} * blockDim.x) {
        const uint64_t b = first / E + j;
        const uint64_t ctr = L == Layout::stateless ? base + b : b;
        const uint64_t fixed = L == Layout::stateless ? 0 : base;
        const PhiloxBlock w = L == Layout::stateless
                                  ? philox4x32_10(static_cast<uint32_t>(ctr), static_cast<uint32_t>(ctr >> 32), 0, 0, k0, k1)
                                  : philox4x32_10(static_cast<uint32_t>(fixed), static_cast<uint32_t>(fixed >> 32),
                                                  static_cast<uint32_t>(ctr), static_cast<uint32_t>(ctr >> 32), k0, k1);
        for (unsigned c = 0; c < E; ++c) {
            const uint64_t g = b * E + c;
            if (g >= first && g - first < count) emit<L>(s, w.w, c, g - first, out, in);
        }
    }
}

// torch-eager-cuda: thread (k, t) computes block (base + k, t) and writes
// elements k*T*U + i*T + t that fall in the range.
__global__ void eager_kernel(SampleSpec s, uint64_t seed, uint64_t base, const uint64_t *device_state, uint64_t T,
                             uint64_t U, uint64_t k_first, uint64_t pairs, uint64_t first, uint64_t count, void *out,
                             const float *in) {
    read_state(device_state, &seed, &base);
    const uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (uint64_t j = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; j < pairs; j += uint64_t{gridDim.x} * blockDim.x) {
        const uint64_t k = k_first + j / T, t = j % T, c = base + k;
        const PhiloxBlock w = philox4x32_10(static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32),
                                            static_cast<uint32_t>(t), static_cast<uint32_t>(t >> 32), k0, k1);
        for (unsigned i = 0; i < U; ++i) {
            const uint64_t e = k * T * U + i * T + t;
            if (e >= first && e - first < count) emit<Layout::eager_cuda>(s, w.w, i, e - first, out, in);
        }
    }
}

// Slices: thread j computes local element j of the box (its global index,
// then its block); simple, and independent of the box's shape.
template <Layout L>
__global__ void slice_kernel(SampleSpec s, uint64_t seed, uint64_t base, SliceRequest r, uint64_t T, uint64_t box,
                             void *out) {
    const unsigned E = (s.dtype == DType::u64 || s.dtype == DType::f64) ? 2 : 4;
    for (uint64_t j = blockIdx.x * uint64_t{blockDim.x} + threadIdx.x; j < box; j += uint64_t{gridDim.x} * blockDim.x) {
        uint64_t rem = j, g = 0, stride = 1;
        for (size_t d = r.ndim; d-- > 0;) {
            g += (r.start[d] + rem % r.local[d]) * stride;
            rem /= r.local[d];
            stride *= r.global[d];
        }
        unsigned c;
        const PhiloxBlock w = element_block<L>(seed, base * 4, g, E, T, &c);
        emit<L>(s, w.w, c, j, out, nullptr);
    }
}

__global__ void advance_kernel(uint64_t *device_state, uint64_t increment) { device_state[1] += increment; }

unsigned grid_for(uint64_t threads) {
    const uint64_t g = (threads + kThreads - 1) / kThreads;
    return static_cast<unsigned>(g < 65535 * 16 ? (g == 0 ? 1 : g) : 65535 * 16);
}

}  // namespace

bool usable(std::string *why) {
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        *why = std::string("no usable CUDA device: ") + cudaGetErrorString(err);
        return false;
    }
    if (n == 0) {
        *why = "no CUDA device";
        return false;
    }
    return true;
}

void generate(const SampleSpec &s, const PhiloxState &st, const uint64_t *device_state, uint64_t numel,
              uint64_t first, uint64_t count, void *out, const float *in, void *stream) {
    if (count == 0) return;
    cudaStream_t cs = static_cast<cudaStream_t>(stream);
    const uint64_t base = st.offset / 4;
    if (s.layout == Layout::eager_cuda) {
        const EagerLaunch launch = eager_launch(s, numel);
        const uint64_t S = launch.threads * launch.unroll, last = first + (count - 1);
        const uint64_t k_first = first / S, pairs = (last / S - k_first + 1) * launch.threads;
        eager_kernel<<<grid_for(pairs), kThreads, 0, cs>>>(s, st.seed, base, device_state, launch.threads,
                                                         launch.unroll, k_first, pairs, first, count, out, in);
    } else {
        const uint64_t E = elements_per_block(s);
        const uint64_t blocks = (first + (count - 1)) / E - first / E + 1;
        if (s.layout == Layout::stateless)
            in_order_kernel<Layout::stateless><<<grid_for(blocks), kThreads, 0, cs>>>(s, st.seed, base, device_state,
                                                                                     first, count, blocks, out, in);
        else
            in_order_kernel<Layout::nvfuser><<<grid_for(blocks), kThreads, 0, cs>>>(s, st.seed, base, device_state,
                                                                                   first, count, blocks, out, in);
    }
    check_cuda(cudaGetLastError(), "kernel launch");
}

void generate_slice(const SliceRequest &r, const PhiloxState &st, void *stream) {
    uint64_t box = 1;
    for (size_t d = 0; d < r.ndim; ++d) box *= r.local[d];
    if (box == 0) return;
    cudaStream_t cs = static_cast<cudaStream_t>(stream);
    const uint64_t T = r.spec.layout == Layout::eager_cuda ? eager_launch(r.spec, r.numel).threads : 0;
    switch (r.spec.layout) {
        case Layout::stateless:
            slice_kernel<Layout::stateless><<<grid_for(box), kThreads, 0, cs>>>(r.spec, st.seed, st.offset / 4, r, T, box, r.out);
            break;
        case Layout::nvfuser:
            slice_kernel<Layout::nvfuser><<<grid_for(box), kThreads, 0, cs>>>(r.spec, st.seed, st.offset / 4, r, T, box, r.out);
            break;
        case Layout::eager_cuda:
            slice_kernel<Layout::eager_cuda><<<grid_for(box), kThreads, 0, cs>>>(r.spec, st.seed, st.offset / 4, r, T, box, r.out);
            break;
    }
    check_cuda(cudaGetLastError(), "kernel launch");
}

void advance_device(uint64_t *device_state, uint64_t increment, void *stream) {
    advance_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(device_state, increment);
    check_cuda(cudaGetLastError(), "kernel launch");
}

}  // namespace cuda_backend
}  // namespace rngtrk
