// Conversions between the C ABI's plain structs and the core's value types.
#pragma once

#include "../core/philox_state.h"
#include "rngtrk.h"

namespace rngtrk {

inline PhiloxState to_core(const rngtrk_philox_state &s) { return {s.seed, s.offset}; }
inline rngtrk_philox_state to_c(const PhiloxState &s) { return {s.seed, s.offset}; }

}  // namespace rngtrk
