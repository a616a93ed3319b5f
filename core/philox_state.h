/* SPDX-License-Identifier: Apache-2.0 */
// A Philox4x32-10 state as a plain value: the key seed and the offset in
// 32-bit outputs.  The 16-byte codec lives in state_codec.h.
#pragma once

#include <cstdint>

namespace rngtrk {

struct PhiloxState {
    uint64_t seed = 0;
    uint64_t offset = 0;

    friend bool operator==(const PhiloxState &a, const PhiloxState &b) {
        return a.seed == b.seed && a.offset == b.offset;
    }
    friend bool operator!=(const PhiloxState &a, const PhiloxState &b) { return !(a == b); }
};

// Philox consumes outputs in blocks of four 32-bit words, so every offset the
// library hands out or accepts is a multiple of 4 (PyTorch enforces the same).
constexpr uint64_t kWordsPerBlock = 4;

inline bool offset_is_aligned(uint64_t offset) { return offset % kWordsPerBlock == 0; }

// The blocks that `units` outputs take: ceil(units / 4) (never overflows).
constexpr uint64_t blocks_for(uint64_t units) { return units / kWordsPerBlock + (units % kWordsPerBlock != 0); }

// `units` rounded up to a whole block, the one rounding every offset
// increment takes; false (and *out untouched) if that passes 2^64 - 1.
constexpr bool round_up_to_block(uint64_t units, uint64_t *out) {
    if (blocks_for(units) > UINT64_MAX / kWordsPerBlock) return false;
    *out = blocks_for(units) * kWordsPerBlock;
    return true;
}

}  // namespace rngtrk
