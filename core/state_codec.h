/* SPDX-License-Identifier: Apache-2.0 */
// The 16-byte state: seed (u64 little-endian) then offset (u64 LE), the byte
// layout of torch.cuda.get_rng_state().  Little-endian helpers are shared
// with the checkpoint codec so the byte order is written down once.
#pragma once

#include <cstddef>
#include <cstdint>

#include "philox_state.h"

namespace rngtrk {

constexpr size_t kStateBytes = 16;

inline void store_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint32_t load_le32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}
inline uint64_t load_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
    return v;
}

inline void state_to_bytes(const PhiloxState &s, uint8_t out[kStateBytes]) {
    store_le64(out, s.seed);
    store_le64(out + 8, s.offset);
}
inline PhiloxState state_from_bytes(const uint8_t in[kStateBytes]) {
    return PhiloxState{load_le64(in), load_le64(in + 8)};
}

}  // namespace rngtrk
