// SPDX-License-Identifier: Apache-2.0
// Sampling entry points of the C ABI: check the whole request, then (for
// the tracker calls) advance, then generate, which cannot fail any more.
#include <cstdint>

#include "../core/sample.h"
#include "../core/sample_engines.h"
#include "api_convert.h"
#include "api_guard.h"
#include "api_sample_request.h"
#include "api_tracker_handle.h"

using rngtrk::checked_state;
using rngtrk::guarded;
using rngtrk::require_pointer;
using rngtrk::checked_range;
using rngtrk::checked_slice;
using rngtrk::SpecUse;
using rngtrk::to_c;

extern "C" {

RNGTRK_API rngtrk_status rngtrk_sample_spec_init(rngtrk_sample_spec *spec, size_t spec_size, rngtrk_layout layout,
                                                 rngtrk_distribution distribution, rngtrk_dtype dtype) {
    return guarded([&] {
        require_pointer(spec, "spec");
        rngtrk::init_spec(spec, spec_size, layout, distribution, dtype);
    });
}

RNGTRK_API rngtrk_status rngtrk_sample(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                       uint64_t first, uint64_t count, void *out, size_t out_capacity) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        rngtrk::run_range(checked_range(&s, spec, SpecUse::sample, nullptr, first, count, out, out_capacity), s);
    });
}

RNGTRK_API rngtrk_status rngtrk_sample_slice(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                             size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                             const uint64_t *local_shape, void *out, size_t out_capacity) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        rngtrk::run_slice(
            checked_slice(&s, spec, SpecUse::sample, ndim, global_shape, start, local_shape, out, out_capacity), s);
    });
}

RNGTRK_API rngtrk_status rngtrk_dropout_f32(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                            uint64_t first, uint64_t count, const float *in, float *out) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        rngtrk::run_range(checked_range(&s, spec, SpecUse::dropout_f32, nullptr, first, count, out, SIZE_MAX, in),
                          s);
    });
}

RNGTRK_API rngtrk_status rngtrk_dropout(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                        uint64_t first, uint64_t count, const void *in, void *out,
                                        size_t out_capacity) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        rngtrk::run_range(checked_range(&s, spec, SpecUse::dropout, nullptr, first, count, out, out_capacity, in),
                          s);
    });
}

RNGTRK_API rngtrk_status rngtrk_dropout_slice(const rngtrk_philox_state *state, const rngtrk_sample_spec *spec,
                                              size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                              const uint64_t *local_shape, const void *in, void *out,
                                              size_t out_capacity) {
    return guarded([&] {
        const rngtrk::PhiloxState s = checked_state(state);
        rngtrk::run_slice(checked_slice(&s, spec, SpecUse::dropout, ndim, global_shape, start, local_shape, out,
                                        out_capacity, in),
                          s);
    });
}

RNGTRK_API rngtrk_status rngtrk_sample_offset_increment(const rngtrk_sample_spec *spec, uint64_t numel,
                                                        uint64_t *out) {
    return guarded([&] {
        require_pointer(out, "out");
        *out = rngtrk::offset_increment(rngtrk::checked_spec(spec, SpecUse::sample), numel);
    });
}

RNGTRK_API const char *rngtrk_cpu_path(void) { return rngtrk::cpu_path().name; }

// The tracker calls draw a whole tensor from the active state: check the
// request there, advance by what the layout consumes, then generate from
// the state before (which cannot fail any more).
RNGTRK_API rngtrk_status rngtrk_tracker_sample(rngtrk_tracker *tracker, const rngtrk_sample_spec *spec,
                                               uint64_t count, void *out, size_t out_capacity,
                                               rngtrk_philox_state *out_before) {
    return guarded(tracker, [&] {
        require_pointer(tracker, "tracker");
        rngtrk::Tracker &t = tracker->impl;
        const rngtrk::PhiloxState active = t.active_state();
        const rngtrk::RangeRequest r =
            checked_range(&active, spec, SpecUse::sample, &count, 0, count, out, out_capacity);
        const rngtrk::PhiloxState before = t.advance(rngtrk::offset_increment(r.spec, count));
        rngtrk::run_range(r, before);
        if (out_before != nullptr) *out_before = to_c(before);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_sample_slice(rngtrk_tracker *tracker, const rngtrk_sample_spec *spec,
                                                     size_t ndim, const uint64_t *global_shape,
                                                     const uint64_t *start, const uint64_t *local_shape, void *out,
                                                     size_t out_capacity, rngtrk_philox_state *out_before) {
    return guarded(tracker, [&] {
        require_pointer(tracker, "tracker");
        rngtrk::Tracker &t = tracker->impl;
        const rngtrk::PhiloxState active = t.active_state();
        const rngtrk::SliceRequest r =
            checked_slice(&active, spec, SpecUse::sample, ndim, global_shape, start, local_shape, out, out_capacity);
        const rngtrk::PhiloxState before = t.advance(rngtrk::offset_increment(r.spec, r.numel));
        rngtrk::run_slice(r, before);
        if (out_before != nullptr) *out_before = to_c(before);
    });
}

RNGTRK_API rngtrk_status rngtrk_tracker_dropout_f32(rngtrk_tracker *tracker, const rngtrk_sample_spec *spec,
                                                    uint64_t count, const float *in, float *out,
                                                    rngtrk_philox_state *out_before) {
    return guarded(tracker, [&] {
        require_pointer(tracker, "tracker");
        rngtrk::Tracker &t = tracker->impl;
        const rngtrk::PhiloxState active = t.active_state();
        const rngtrk::RangeRequest r =
            checked_range(&active, spec, SpecUse::dropout_f32, &count, 0, count, out, SIZE_MAX, in);
        const rngtrk::PhiloxState before = t.advance(rngtrk::offset_increment(r.spec, count));
        rngtrk::run_range(r, before);
        if (out_before != nullptr) *out_before = to_c(before);
    });
}

}  // extern "C"
