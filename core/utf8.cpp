// SPDX-License-Identifier: Apache-2.0
#include "utf8.h"

#include <cstdint>

namespace rngtrk {

size_t utf8_char_length(std::string_view bytes) noexcept {
    if (bytes.empty()) return 0;
    const uint8_t b0 = static_cast<uint8_t>(bytes[0]);
    if (b0 < 0x80) return 1;
    size_t len;
    uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
    if (b0 >= 0xC2 && b0 <= 0xDF) {
        len = 2;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
        len = 3;
        if (b0 == 0xE0) lo = 0xA0;  // overlong
        if (b0 == 0xED) hi = 0x9F;  // surrogates
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
        len = 4;
        if (b0 == 0xF0) lo = 0x90;  // overlong
        if (b0 == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
        return 0;  // continuation byte, overlong lead C0/C1, or F5..FF
    }
    if (bytes.size() < len) return 0;
    const uint8_t b1 = static_cast<uint8_t>(bytes[1]);
    if (b1 < lo || b1 > hi) return 0;
    for (size_t j = 2; j < len; ++j) {
        const uint8_t bj = static_cast<uint8_t>(bytes[j]);
        if (bj < 0x80 || bj > 0xBF) return 0;
    }
    return len;
}

bool is_valid_utf8(std::string_view bytes) noexcept {
    while (!bytes.empty()) {
        const size_t len = utf8_char_length(bytes);
        if (len == 0) return false;
        bytes.remove_prefix(len);
    }
    return true;
}

}  // namespace rngtrk
