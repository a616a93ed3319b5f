/* SPDX-License-Identifier: Apache-2.0 */
// Looking a kind up by its name, for every *_from_name function of the C
// ABI: one rule for NULL, for overlong strings (never read past a bound) and
// for the message, which lists the names there are.
#pragma once

#include <cstring>
#include <string>
#include <string_view>

#include "../core/name_list.h"
#include "api_guard.h"

namespace rngtrk {

// Writes to *out the value whose name(value) equals `name`, for values 0,
// 1, ... until name() gives nullptr; a refusal leaves *out as it was.
// `what` and `whats` name the kind in the message ("layout", "layouts").
template <class T, class Name>
void value_of_name(const char *name, T *out, const char *what, const char *whats, Name &&name_of) {
    require_pointer(name, "name");
    require_pointer(out, "out");
    // Names are short: a longer string is not one (and is not read further).
    constexpr size_t kLongest = 64;
    const size_t length = strnlen(name, kLongest + 1);
    const std::string_view wanted(name, length > kLongest ? kLongest : length);
    for (uint32_t v = 0; name_of(v) != nullptr; ++v)
        if (length <= kLongest && wanted == name_of(v)) {
            *out = static_cast<T>(v);
            return;
        }
    fail(RNGTRK_E_INVALID_ARGUMENT, "unknown " + std::string(what) + " \"" + std::string(wanted) +
                                        (length > kLongest ? "...\"" : "\"") + " (the " + whats + " are " +
                                        known_names(name_of) + ")");
}

}  // namespace rngtrk
