// The CUDA entry points of the C ABI: the same checks as the CPU ones, then
// the CUDA backend (cuda/cuda_backend.cu, or cuda_unavailable.cpp).
#include <string>

#include "../core/cuda_backend.h"
#include "../core/sample.h"
#include "api_convert.h"
#include "api_guard.h"

namespace {

using rngtrk::checked_state;
using rngtrk::guarded;
using rngtrk::require_pointer;

void require_device() {
    std::string why;
    if (!rngtrk::cuda_backend::usable(&why)) rngtrk::fail(RNGTRK_E_UNAVAILABLE, why);
}

}  // namespace

extern "C" {

RNGTRK_API rngtrk_status rngtrk_cuda_available(void) {
    return guarded([] { require_device(); });
}

RNGTRK_API rngtrk_status rngtrk_cuda_sample(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                            uint64_t first, uint64_t count, void *device_out, size_t out_capacity,
                                            void *stream) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        const rngtrk::SampleSpec sp = rngtrk::checked_spec(spec, false);
        const rngtrk::RangeRequest r = rngtrk::check_range(sp, sp.numel, first, count, device_out, out_capacity);
        rngtrk::check_counters(sp, s, first + count);
        require_device();
        rngtrk::cuda_backend::generate(sp, s, nullptr, r.numel, first, count, device_out, nullptr, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_sample_slice(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                                  size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                                  const uint64_t *local_shape, void *device_out, size_t out_capacity,
                                                  void *stream) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        const rngtrk::SampleSpec sp = rngtrk::checked_spec(spec, false);
        const rngtrk::SliceRequest r =
            rngtrk::check_slice(sp, ndim, global_shape, start, local_shape, device_out, out_capacity);
        rngtrk::check_counters(sp, s, r.numel);
        require_device();
        rngtrk::cuda_backend::generate_slice(r, s, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_dropout_f32(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                                 uint64_t first, uint64_t count, const float *device_in,
                                                 float *device_out, void *stream) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        const rngtrk::SampleSpec sp = rngtrk::checked_spec(spec, true);
        if (count != 0) {
            require_pointer(device_in, "device_in");
            rngtrk::check_aligned(device_in, sizeof(float), "device_in");
        }
        const rngtrk::RangeRequest r = rngtrk::check_range(sp, sp.numel, first, count, device_out, SIZE_MAX);
        rngtrk::check_counters(sp, s, first + count);
        require_device();
        rngtrk::cuda_backend::generate(sp, s, nullptr, r.numel, first, count, device_out, device_in, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_sample_graphsafe(const uint64_t *device_state, const rngtrk_sample_spec *spec,
                                                      uint64_t first, uint64_t count, void *device_out,
                                                      size_t out_capacity, void *stream) {
    return guarded([&] {
        require_pointer(device_state, "device_state");
        const rngtrk::SampleSpec sp = rngtrk::checked_spec(spec, false);
        const rngtrk::RangeRequest r = rngtrk::check_range(sp, sp.numel, first, count, device_out, out_capacity);
        require_device();
        rngtrk::cuda_backend::generate(sp, rngtrk::PhiloxState{}, device_state, r.numel, first, count, device_out,
                                       nullptr, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_advance_graphsafe(uint64_t *device_state, uint64_t increment, void *stream) {
    return guarded([&] {
        require_pointer(device_state, "device_state");
        if (increment > UINT64_MAX - 3) rngtrk::fail(RNGTRK_E_OVERFLOW, "increment rounds past 2^64");
        require_device();
        rngtrk::cuda_backend::advance_device(device_state, increment, stream);
    });
}

}  // extern "C"
