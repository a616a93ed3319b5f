#include "name_rules.h"

#include <cstdint>
#include <cstring>

#include "error.h"

namespace rngtrk {

bool is_valid_utf8(std::string_view bytes) {
    size_t i = 0;
    const size_t n = bytes.size();
    while (i < n) {
        const uint8_t b0 = static_cast<uint8_t>(bytes[i]);
        if (b0 < 0x80) {
            ++i;
            continue;
        }
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
            return false;  // continuation byte, overlong lead C0/C1, or F5..FF
        }
        if (n - i < len) return false;
        const uint8_t b1 = static_cast<uint8_t>(bytes[i + 1]);
        if (b1 < lo || b1 > hi) return false;
        for (size_t j = 2; j < len; ++j) {
            const uint8_t bj = static_cast<uint8_t>(bytes[i + j]);
            if (bj < 0x80 || bj > 0xBF) return false;
        }
        i += len;
    }
    return true;
}

std::string name_problem(std::string_view name) {
    if (name.empty()) return "is empty";
    if (name.size() > kMaxNameBytes)
        return "is longer than " + std::to_string(kMaxNameBytes) + " bytes";
    if (name.find('\0') != std::string_view::npos) return "contains a NUL byte";
    if (!is_valid_utf8(name)) return "is not valid UTF-8";
    return {};
}

std::string_view lookup_name(const char *name) {
    if (name == nullptr) fail(Status::invalid_argument, "name is NULL");
    // strnlen stops at 256 bytes: a name that long is already invalid, so a
    // very long string is never scanned to its end.
    return std::string_view(name, strnlen(name, kMaxNameBytes + 1));
}

std::string_view checked_name(const char *name, const char *param) {
    if (name == nullptr) fail(Status::invalid_argument, std::string(param) + " is NULL");
    const std::string_view view(name, strnlen(name, kMaxNameBytes + 1));
    const std::string problem = name_problem(view);
    if (!problem.empty())
        fail(Status::invalid_argument, std::string(param) + " " + problem);
    return view;
}

}  // namespace rngtrk
