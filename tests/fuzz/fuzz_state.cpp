// SPDX-License-Identifier: Apache-2.0
// libFuzzer: the 16-byte state codec round-trips every input, and the
// stream functions take any decoded state without crashing.
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "rngtrk.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 16) return 0;
    rngtrk_philox_state s;
    if (rngtrk_state_from_bytes(data, &s) != RNGTRK_OK) std::abort();
    uint8_t back[16];
    if (rngtrk_state_to_bytes(&s, back) != RNGTRK_OK || std::memcmp(back, data, 16) != 0) std::abort();
    uint32_t out[8];
    const uint64_t first = size >= 24 ? (uint64_t(data[16]) << 56 | uint64_t(data[17]) << 8 | data[18]) : 0;
    const rngtrk_status st = rngtrk_random_u32(&s, first, 8, out);
    if (st != RNGTRK_OK && st != RNGTRK_E_INVALID_ARGUMENT && st != RNGTRK_E_OVERFLOW) std::abort();
    if ((s.offset % 4 != 0) != (st == RNGTRK_E_INVALID_ARGUMENT)) std::abort();
    return 0;
}
