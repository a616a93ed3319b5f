// SPDX-License-Identifier: Apache-2.0
#include "name_rules.h"

#include <cstdint>
#include <cstring>

#include "error.h"
#include "utf8.h"

namespace rngtrk {

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
