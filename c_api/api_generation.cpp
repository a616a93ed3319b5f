// SPDX-License-Identifier: Apache-2.0
// The state codec, the raw Philox function and stream generation.
#include "../core/philox.h"
#include "../core/state_codec.h"
#include "../core/stream.h"
#include "api_convert.h"
#include "api_guard.h"

namespace {

using rngtrk::to_core;

// The body shared by every stream entry point: check, then fill.
template <class T, class Fill>
rngtrk_status generate(const rngtrk_philox_state *state, uint64_t first, uint64_t count, T *out,
                       Fill fill) {
    return rngtrk::guarded([&] {
        const rngtrk::PhiloxState s = rngtrk::checked_state(state);
        rngtrk::check_elements(first, count, sizeof(T), out, SIZE_MAX);
        fill(s, first, count, out);
    });
}

}  // namespace

extern "C" {

RNGTRK_API rngtrk_status rngtrk_state_to_bytes(const rngtrk_philox_state *state, uint8_t out[16]) {
    return rngtrk::guarded([&] {
        rngtrk::require_pointer(state, "state");
        rngtrk::require_pointer(out, "out");
        rngtrk::state_to_bytes(to_core(*state), out);
    });
}

RNGTRK_API rngtrk_status rngtrk_state_from_bytes(const uint8_t bytes[16], rngtrk_philox_state *out) {
    return rngtrk::guarded([&] {
        rngtrk::require_pointer(bytes, "bytes");
        rngtrk::require_pointer(out, "out");
        *out = rngtrk::to_c(rngtrk::state_from_bytes(bytes));
    });
}

RNGTRK_API rngtrk_status rngtrk_state_advance(const rngtrk_philox_state *state, uint64_t increment,
                                              rngtrk_philox_state *out) {
    return rngtrk::guarded([&] {
        rngtrk::require_pointer(out, "out");
        *out = rngtrk::to_c(rngtrk::advanced(rngtrk::checked_state(state), increment));
    });
}

RNGTRK_API void rngtrk_philox4x32_10(const uint32_t counter[4], const uint32_t key[2],
                                     uint32_t out[4]) {
    const rngtrk::PhiloxBlock b =
        rngtrk::philox4x32_10(counter[0], counter[1], counter[2], counter[3], key[0], key[1]);
    for (int i = 0; i < 4; ++i) out[i] = b.w[i];
}

RNGTRK_API rngtrk_status rngtrk_random_u32(const rngtrk_philox_state *state, uint64_t first,
                                           uint64_t count, uint32_t *out) {
    return generate(state, first, count, out, rngtrk::stream_u32);
}

RNGTRK_API rngtrk_status rngtrk_uniform_f32(const rngtrk_philox_state *state, uint64_t first,
                                            uint64_t count, float *out) {
    return generate(state, first, count, out, rngtrk::stream_uniform_f32);
}

}  // extern "C"
