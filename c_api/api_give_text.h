/* SPDX-License-Identifier: Apache-2.0 */
// Hands text to the caller as rngtrk_tracker_save hands bytes: dst = NULL,
// capacity = 0 is a size query; otherwise the text and its NUL when they
// fit, else RNGTRK_E_BUFFER_TOO_SMALL.  *out_len gets the length without
// the NUL either way.
#pragma once

#include <cstring>
#include <string>
#include <string_view>

#include "../core/counted.h"
#include "api_guard.h"

namespace rngtrk {

inline void give_text(std::string_view text, char *dst, size_t capacity, size_t *out_len, const char *what) {
    if (dst == nullptr && capacity > 0) fail(RNGTRK_E_INVALID_ARGUMENT, "dst is NULL but capacity is not 0");
    *out_len = text.size();
    if (dst == nullptr) return;  // size query
    if (capacity < text.size() + 1)
        fail(RNGTRK_E_BUFFER_TOO_SMALL, std::string(what) + " needs " + counted(text.size() + 1, "byte") +
                                            " with its NUL; the capacity is " + std::to_string(capacity));
    std::memcpy(dst, text.data(), text.size());
    dst[text.size()] = '\0';
}

}  // namespace rngtrk
