// SPDX-License-Identifier: Apache-2.0
// The CUDA entry points of the C ABI: the same checks as the CPU ones, then
// the CUDA backend (cuda/cuda_backend.cu, or cuda_unavailable.cpp).
#include <string>

#include "../core/cuda_backend.h"
#include "../core/sample.h"
#include "api_convert.h"
#include "api_guard.h"
#include "api_sample_request.h"

namespace {

using rngtrk::checked_range;
using rngtrk::checked_slice;
using rngtrk::checked_state;
using rngtrk::SpecUse;
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
        const rngtrk::RangeRequest r =
            checked_range(&s, spec, SpecUse::sample, nullptr, first, count, device_out, out_capacity);
        require_device();
        rngtrk::cuda_backend::generate(r.spec, s, nullptr, r.numel, first, count, device_out, nullptr, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_sample_slice(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                                  size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                                  const uint64_t *local_shape, void *device_out, size_t out_capacity,
                                                  void *stream) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        const rngtrk::SliceRequest r = checked_slice(&s, spec, SpecUse::sample, ndim, global_shape, start,
                                                     local_shape, device_out, out_capacity);
        require_device();
        rngtrk::cuda_backend::generate_slice(r, s, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_dropout_f32(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                                 uint64_t first, uint64_t count, const float *device_in,
                                                 float *device_out, void *stream) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        const rngtrk::RangeRequest r = checked_range(&s, spec, SpecUse::dropout_f32, nullptr, first, count,
                                                     device_out, SIZE_MAX, device_in, "device_in");
        require_device();
        rngtrk::cuda_backend::generate(r.spec, s, nullptr, r.numel, first, count, device_out, device_in, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_dropout(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                             uint64_t first, uint64_t count, const void *device_in, void *device_out,
                                             size_t out_capacity, void *stream) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        const rngtrk::RangeRequest r = checked_range(&s, spec, SpecUse::dropout, nullptr, first, count, device_out,
                                                     out_capacity, device_in, "device_in");
        require_device();
        rngtrk::cuda_backend::generate(r.spec, s, nullptr, r.numel, first, count, device_out, device_in, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_dropout_slice(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                                   size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                                   const uint64_t *local_shape, const void *device_in,
                                                   void *device_out, size_t out_capacity, void *stream) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        const rngtrk::SliceRequest r = checked_slice(&s, spec, SpecUse::dropout, ndim, global_shape, start,
                                                     local_shape, device_out, out_capacity, device_in, "device_in");
        require_device();
        rngtrk::cuda_backend::generate_slice(r, s, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_sample_graphsafe(const uint64_t *device_state, const rngtrk_sample_spec *spec,
                                                      uint64_t first, uint64_t count, void *device_out,
                                                      size_t out_capacity, void *stream) {
    return guarded([&] {
        require_pointer(device_state, "device_state");
        // The state is on the device: its counters are not known here.
        const rngtrk::RangeRequest r =
            checked_range(nullptr, spec, SpecUse::sample, nullptr, first, count, device_out, out_capacity);
        require_device();
        rngtrk::cuda_backend::generate(r.spec, rngtrk::PhiloxState{}, device_state, r.numel, first, count,
                                       device_out, nullptr, stream);
    });
}

RNGTRK_API rngtrk_status rngtrk_cuda_advance_graphsafe(uint64_t *device_state, uint64_t increment, void *stream) {
    return guarded([&] {
        require_pointer(device_state, "device_state");
        uint64_t step = 0;
        if (!rngtrk::round_up_to_block(increment, &step)) rngtrk::fail(RNGTRK_E_OVERFLOW, "increment rounds past 2^64");
        require_device();
        rngtrk::cuda_backend::advance_device(device_state, increment, stream);
    });
}

}  // extern "C"
