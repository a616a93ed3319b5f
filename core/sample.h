/* SPDX-License-Identifier: Apache-2.0 */
// Checked sampling requests: 1-D ranges and n-d slices, of samples or of
// dropout (a request whose spec is a dropout spec, with its input), on the
// CPU path chosen at load time (sample_engines.h).  Every function checks
// the whole request before writing anything, and throws Error on a bad one.
#pragma once

#include <cstddef>
#include <cstdint>

#include "philox_state.h"
#include "sample_spec.h"

namespace rngtrk {

// The largest n-d slice rank accepted: rngtrk.h's RNGTRK_MAX_NDIM (the C
// layer asserts they are equal).
constexpr size_t kMaxSliceDims = 16;

// A checked 1-D request; check it before anything changes, then run it
// with the state (a tracker's is known only after it advances).
// A dropout spec's request also takes its input `in` (named `in_name` in
// messages), `count` elements of the data dtype like `out`, which it may
// be; out[i] = dropout_element(in[i], keep(first + i)) (elements.h).
struct RangeRequest {
    SampleSpec spec;
    uint64_t numel, first, count;
    void *out;
    const void *in;  // dropout's input, else nullptr
};
RangeRequest check_range(const SampleSpec &spec, uint64_t numel, uint64_t first, uint64_t count, void *out,
                         size_t out_capacity, const void *in = nullptr, const char *in_name = "in");
void run_range(const RangeRequest &request, const PhiloxState &state);

// A checked n-d box request; for dropout, element i of the box (row-major)
// of `in` and `out` takes the keep flag of its global row-major index.
struct SliceRequest {
    SampleSpec spec;
    size_t ndim;
    uint64_t global[kMaxSliceDims], start[kMaxSliceDims], local[kMaxSliceDims];
    uint64_t numel;  // of the whole tensor
    void *out;
    const void *in;  // dropout's input, else nullptr
};
SliceRequest check_slice(const SampleSpec &spec, size_t ndim, const uint64_t *global, const uint64_t *start,
                         const uint64_t *local, void *out, size_t out_capacity, const void *in = nullptr,
                         const char *in_name = "in");
void run_slice(const SliceRequest &request, const PhiloxState &state);

// Throws INVALID_ARGUMENT unless `p` is aligned to `element` bytes (a
// power of two); `what` names the argument.
void check_aligned(const void *p, size_t element, const char *what);

// Throws unless the state's offset is a multiple of 4.
void check_state(const PhiloxState &state);

// A layout with a counter limit in the table (layouts.h; triton: Triton's
// offsets are int64, so 2^63) refuses a request whose counters reach it:
// Status::overflow.  The request draws elements [first, first + count)
// (first + count may be 2^64).  Other layouts: nothing to check.
void check_counters(const SampleSpec &spec, const PhiloxState &state, uint64_t first, uint64_t count);

// Checks elements [first, first + count) of `element_bytes` each going to
// `out` of `out_capacity` bytes: the indices stay below 2^64, the byte size
// fits size_t and the buffer, and out is not NULL unless count is 0.
void check_elements(uint64_t first, uint64_t count, size_t element_bytes, const void *out, size_t out_capacity);

}  // namespace rngtrk
