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

}  // namespace rngtrk
