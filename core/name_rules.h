/* SPDX-License-Identifier: Apache-2.0 */
// What makes a valid state name: 1 to 255 bytes of well-formed UTF-8 with no
// NUL.  One rule for add, set_states and checkpoint loading.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rngtrk {

constexpr size_t kMaxNameBytes = 255;

// Empty when `name` is a valid state name, else why it is not.
std::string name_problem(std::string_view name);

// Reads a NUL-terminated name from C, at most kMaxNameBytes + 1 bytes, and
// throws Error(Status::invalid_argument) naming `param` when it is NULL or
// invalid.  Never reads past the first NUL or past 256 bytes.  For names
// that create a state (add, set_states).
std::string_view checked_name(const char *name, const char *param = "name");

// The same read for names that are looked up (fork, restore, get, set):
// only NULL and the length are checked here; a lookup that misses calls
// name_problem to choose INVALID_ARGUMENT over UNKNOWN_NAME, so the hot path
// never re-validates UTF-8 that the table already holds.
std::string_view lookup_name(const char *name);

}  // namespace rngtrk
