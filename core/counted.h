/* SPDX-License-Identifier: Apache-2.0 */
// "1 byte", "2 bytes": a count and its noun, as every message that counts
// something writes it.
#pragma once

#include <cstdint>
#include <string>

namespace rngtrk {

inline std::string counted(uint64_t n, const char *singular, const char *plural) {
    return std::to_string(n) + " " + (n == 1 ? singular : plural);
}

inline std::string counted(uint64_t n, const char *singular) {
    return n == 1 ? counted(n, singular, singular) : counted(n, singular, (std::string(singular) + "s").c_str());
}

}  // namespace rngtrk
