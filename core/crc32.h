/* SPDX-License-Identifier: Apache-2.0 */
// CRC-32 as in zlib, PNG and Ethernet (reflected polynomial 0xEDB88320,
// initial value and final xor 0xFFFFFFFF), so Python's zlib.crc32 and any
// other language can check a checkpoint without this library.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rngtrk {

uint32_t crc32(const uint8_t *data, size_t len);

}  // namespace rngtrk
