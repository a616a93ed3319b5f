// The stream of a Philox state: element g is word g%4 of the block
// offset/4 + g/4 (see rngtrk.h and README.md).  Generation is a pure function
// of (seed, offset, g), so any slice equals the same slice of the whole.
#pragma once

#include <cstdint>

#include "philox_state.h"

namespace rngtrk {

// Checks that (state, first, count, out) describes a valid request for
// elements of `element_bytes` bytes; throws Error otherwise.
void check_stream_request(const PhiloxState &state, uint64_t first, uint64_t count,
                          const void *out, uint64_t element_bytes);

// Elements [first, first + count) of the stream.  Call check_stream_request
// first: these assume a valid request.
void stream_u32(const PhiloxState &state, uint64_t first, uint64_t count, uint32_t *out);
void stream_uniform_f32(const PhiloxState &state, uint64_t first, uint64_t count, float *out);


}  // namespace rngtrk
