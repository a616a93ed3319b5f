// Looking a kind up by its name, for every *_from_name function of the C
// ABI: one rule for NULL, for overlong strings (never read past a bound) and
// for the message, which lists the names there are.
#pragma once

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "api_guard.h"

namespace rngtrk {

// The value whose name(value) equals `name`, for values 0, 1, ... until
// name() gives nullptr.  `what` and `whats` name the kind in the message
// ("layout", "layouts").
template <class Name>
uint32_t value_of_name(const char *name, const char *what, const char *whats, Name &&name_of) {
    require_pointer(name, "name");
    // Names are short: a longer string is not one (and is not read further).
    constexpr size_t kLongest = 64;
    const size_t length = strnlen(name, kLongest + 1);
    const std::string_view wanted(name, length > kLongest ? kLongest : length);
    std::vector<const char *> names;
    for (uint32_t v = 0;; ++v) {
        const char *n = name_of(v);
        if (n == nullptr) break;
        if (length <= kLongest && wanted == n) return v;
        names.push_back(n);
    }
    std::string known;  // "a, b or c"
    for (size_t i = 0; i < names.size(); ++i)
        known += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + std::string(names[i]);
    fail(RNGTRK_E_INVALID_ARGUMENT, "unknown " + std::string(what) + " \"" + std::string(wanted) +
                                        (length > kLongest ? "...\"" : "\"") + " (the " + whats + " are " + known +
                                        ")");
}

}  // namespace rngtrk
