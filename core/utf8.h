/* SPDX-License-Identifier: Apache-2.0 */
// UTF-8 (RFC 3629) in one place: state names must be well-formed, and the C
// layer makes every error message well-formed (c_api/api_errors.cpp).
#pragma once

#include <cstddef>
#include <string_view>

namespace rngtrk {

// The length (1 to 4) of the well-formed UTF-8 character `bytes` starts
// with, or 0 when it does not start with one: empty, a continuation byte, an
// overlong form, a surrogate, above U+10FFFF, or cut short.
size_t utf8_char_length(std::string_view bytes) noexcept;

// True when `bytes` is well-formed UTF-8 throughout.
bool is_valid_utf8(std::string_view bytes) noexcept;

}  // namespace rngtrk
