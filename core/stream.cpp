// SPDX-License-Identifier: Apache-2.0
#include "stream.h"

#include <string>

#include "error.h"
#include "sample_engines.h"

namespace rngtrk {

namespace {

SampleSpec stateless(Dist dist, DType dtype) {
    SampleSpec spec;
    spec.layout = Layout::stateless;
    spec.dist = dist;
    spec.dtype = dtype;
    return spec;  // uniform defaults: [0, 1)
}

}  // namespace

// The stream is the stateless layout's u32 bits and f32 uniforms: the
// sampling engine (SIMD where the CPU has it) makes them.
void stream_u32(const PhiloxState &state, uint64_t first, uint64_t count, uint32_t *out) {
    static const SampleSpec spec = stateless(Dist::bits, DType::u32);
    generate_elements(spec, state, 0, first, count, out);
}

void stream_uniform_f32(const PhiloxState &state, uint64_t first, uint64_t count, float *out) {
    static const SampleSpec spec = stateless(Dist::uniform, DType::f32);
    generate_elements(spec, state, 0, first, count, out);
}

PhiloxState advanced(const PhiloxState &state, uint64_t increment) {
    uint64_t step = 0;
    if (!round_up_to_block(increment, &step) || step > UINT64_MAX - state.offset)
        fail(Status::overflow, "advancing offset " + std::to_string(state.offset) + " by " +
                                   std::to_string(increment) + " passes 2^64 - 1");
    return PhiloxState{state.seed, state.offset + step};
}

}  // namespace rngtrk
