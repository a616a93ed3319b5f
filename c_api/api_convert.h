/* SPDX-License-Identifier: Apache-2.0 */
// Conversions between the C ABI's plain structs and the core's value types.
#pragma once

#include "../core/philox_state.h"
#include "../core/sample.h"
#include "api_guard.h"
#include "rngtrk.h"

namespace rngtrk {

inline PhiloxState to_core(const rngtrk_philox_state &s) { return {s.seed, s.offset}; }
inline rngtrk_philox_state to_c(const PhiloxState &s) { return {s.seed, s.offset}; }

// A state argument of the sampling functions: not NULL, offset aligned.
inline PhiloxState checked_state(const rngtrk_philox_state *state) {
    require_pointer(state, "state");
    const PhiloxState s = to_core(*state);
    check_state(s);
    return s;
}

}  // namespace rngtrk
