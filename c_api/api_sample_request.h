/* SPDX-License-Identifier: Apache-2.0 */
// What every sampling entry point checks before anything runs or any tracker
// moves, in one order: the state, the spec, the range or box with its
// buffers, and the counters the layout reaches (layouts.h's limits).  The
// CPU, CUDA and tracker calls differ only in what they do after.
#pragma once

#include "../core/sample.h"
#include "api_convert.h"
#include "api_guard.h"
#include "api_sample_spec.h"

namespace rngtrk {

// A range request for `use` (SpecUse, sample_spec.h).  `state` is where
// the counters start (nullptr: only the device knows it, nothing to check
// here); `numel` is the whole tensor's element count, or nullptr for the
// spec's own numel; `in` is dropout's input (checked when count > 0),
// named `in_name`.
inline RangeRequest checked_range(const PhiloxState *state, const rngtrk_sample_spec *spec, SpecUse use,
                                  const uint64_t *numel, uint64_t first, uint64_t count, void *out,
                                  size_t out_capacity, const void *in = nullptr, const char *in_name = "in") {
    const SampleSpec sp = checked_spec(spec, use);
    const RangeRequest r =
        check_range(sp, numel != nullptr ? *numel : sp.numel, first, count, out, out_capacity, in, in_name);
    if (state != nullptr) check_counters(sp, *state, first, count);
    return r;
}

// A box request, `state` and `in` as for checked_range.
inline SliceRequest checked_slice(const PhiloxState *state, const rngtrk_sample_spec *spec, SpecUse use,
                                  size_t ndim, const uint64_t *global_shape, const uint64_t *start,
                                  const uint64_t *local_shape, void *out, size_t out_capacity,
                                  const void *in = nullptr, const char *in_name = "in") {
    const SliceRequest r = check_slice(checked_spec(spec, use), ndim, global_shape, start, local_shape, out,
                                       out_capacity, in, in_name);
    if (state != nullptr) check_counters(r.spec, *state, 0, r.numel);
    return r;
}

}  // namespace rngtrk
