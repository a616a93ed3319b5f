#include "stream.h"

#include <cstddef>
#include <limits>
#include <string>

#include "error.h"
#include "sample_engines.h"

namespace rngtrk {

void check_stream_request(const PhiloxState &state, uint64_t first, uint64_t count,
                          const void *out, uint64_t element_bytes) {
    if (!offset_is_aligned(state.offset))
        fail(RNGTRK_E_INVALID_ARGUMENT,
             "state.offset " + std::to_string(state.offset) + " is not a multiple of 4");
    // Element indices run to 2^64 - 1, so first + count may equal 2^64.
    if (first != 0 && count > std::numeric_limits<uint64_t>::max() - first + 1)
        fail(RNGTRK_E_OVERFLOW, "first + count passes 2^64 elements");
    if (count > std::numeric_limits<size_t>::max() / element_bytes)
        fail(RNGTRK_E_OVERFLOW, "count * element size does not fit in size_t");
    if (out == nullptr && count != 0) fail(RNGTRK_E_INVALID_ARGUMENT, "out is NULL");
}

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
    cpu_path().generate(spec, state, 0, first, count, out);
}

void stream_uniform_f32(const PhiloxState &state, uint64_t first, uint64_t count, float *out) {
    static const SampleSpec spec = stateless(Dist::uniform, DType::f32);
    cpu_path().generate(spec, state, 0, first, count, out);
}

}  // namespace rngtrk
