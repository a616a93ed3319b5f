/* SPDX-License-Identifier: Apache-2.0 */
// "a, b or c": the names of a kind whose values are numbered from 0 without
// gaps (name(v) gives nullptr past the last), for the messages that refuse
// an unknown value or name.  One spelling for every such message.
#pragma once

#include <cstdint>
#include <string>

namespace rngtrk {

template <class Name>
std::string known_names(Name &&name) {
    std::string out;
    for (uint32_t v = 0; name(v) != nullptr; ++v)
        out += (v == 0 ? "" : name(v + 1) == nullptr ? " or " : ", ") + std::string(name(v));
    return out;
}

}  // namespace rngtrk
