/* SPDX-License-Identifier: Apache-2.0 */
// The growable structs of the C ABI (docs/abi.md).  Each starts with
// uint32_t struct_size: the size the caller compiled.  The library writes
// only the caller's bytes, reads only the caller's bytes, gives fields the
// caller's struct lacks their defaults, and accepts a caller's struct longer
// than its own only when the bytes it does not know are zero (a newer header
// that leaves new fields at their "off" value).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "error.h"

namespace rngtrk {

// The size a caller gave, checked: at least `min_size` (the first published
// layout) and storable in struct_size.
inline uint32_t checked_struct_size(size_t size, size_t min_size, const char *what) {
    if (size < min_size)
        fail(Status::invalid_argument, std::string(what) + " size " + std::to_string(size) +
                                            " is smaller than its first published layout (" +
                                            std::to_string(min_size) + " bytes)");
    if (size > UINT32_MAX) fail(Status::invalid_argument, std::string(what) + " size does not fit in 32 bits");
    return static_cast<uint32_t>(size);
}

// The struct_size the caller stored in its struct at `bytes`, checked
// against the first published layout.
inline uint32_t stored_struct_size(const unsigned char *bytes, size_t min_size, const char *what) {
    uint32_t size;
    std::memcpy(&size, bytes, sizeof size);
    if (size < min_size)
        fail(Status::invalid_argument, std::string(what) + "->struct_size " + std::to_string(size) +
                                            " is smaller than its first published layout (" +
                                            std::to_string(min_size) + " bytes; use its init function)");
    return size;
}

// Fills the caller's struct of `size` bytes: `defaults` as far as they fit,
// zero beyond, struct_size = size.  Writes exactly `size` bytes.
template <class T>
void init_versioned(T *dst, size_t size, size_t min_size, const T &defaults, const char *what) {
    if (dst == nullptr) fail(Status::invalid_argument, std::string(what) + " is NULL");
    const uint32_t stored = checked_struct_size(size, min_size, what);
    unsigned char *bytes = reinterpret_cast<unsigned char *>(dst);
    const size_t known = size < sizeof(T) ? size : sizeof(T);
    std::memcpy(bytes, &defaults, known);
    if (size > known) std::memset(bytes + known, 0, size - known);
    std::memcpy(bytes, &stored, sizeof stored);  // struct_size is the first field
}

// The caller's struct, read: `defaults` overwritten by the caller's first
// struct_size bytes.  Refuses a struct_size below `min_size`, and a non-zero
// byte past sizeof(T) (a field this library does not know, set).
template <class T>
T read_versioned(const T *src, size_t min_size, const T &defaults, const char *what) {
    if (src == nullptr) fail(Status::invalid_argument, std::string(what) + " is NULL");
    const unsigned char *bytes = reinterpret_cast<const unsigned char *>(src);
    const uint32_t size = stored_struct_size(bytes, min_size, what);
    for (size_t i = sizeof(T); i < size; ++i)
        if (bytes[i] != 0)
            fail(Status::invalid_argument, std::string(what) + " byte " + std::to_string(i) + " is not zero, but this "
                                                "library knows only " + std::to_string(sizeof(T)) +
                                                " bytes of it (a field of a newer header is set)");
    T value = defaults;
    std::memcpy(&value, bytes, size < sizeof(T) ? size : sizeof(T));
    return value;
}

// Writes `value` into the caller's output struct as far as its struct_size
// reaches, zero beyond what this library knows; struct_size is kept.
template <class T>
void write_versioned(T *dst, size_t min_size, const T &value, const char *what) {
    if (dst == nullptr) fail(Status::invalid_argument, std::string(what) + " is NULL");
    unsigned char *bytes = reinterpret_cast<unsigned char *>(dst);
    const uint32_t size = stored_struct_size(bytes, min_size, what);
    const size_t known = size < sizeof(T) ? size : sizeof(T);
    std::memcpy(bytes + sizeof size, reinterpret_cast<const unsigned char *>(&value) + sizeof size,
                known - sizeof size);
    if (size > known) std::memset(bytes + known, 0, size - known);
}

}  // namespace rngtrk
