/* SPDX-License-Identifier: Apache-2.0 */
// The stream of a Philox state: element g is word g%4 of the block
// offset/4 + g/4 (see rngtrk.h and README.md).  Generation is a pure function
// of (seed, offset, g), so any slice equals the same slice of the whole.
#pragma once

#include <cstdint>

#include "philox_state.h"

namespace rngtrk {

// Elements [first, first + count) of the stream.  Check the request first
// (check_state and check_elements of sample.h): these assume it is valid.
void stream_u32(const PhiloxState &state, uint64_t first, uint64_t count, uint32_t *out);
void stream_uniform_f32(const PhiloxState &state, uint64_t first, uint64_t count, float *out);

// `state` moved past `increment` outputs rounded up to a whole block: what
// every draw and advance does to a state.  Throws Error(Status::overflow) if
// the offset would pass 2^64 - 1 (naming both numbers).
PhiloxState advanced(const PhiloxState &state, uint64_t increment);


}  // namespace rngtrk
