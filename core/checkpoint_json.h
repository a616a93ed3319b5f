/* SPDX-License-Identifier: Apache-2.0 */
// A checkpoint described without a tracker, as the one line of canonical
// JSON every rngtrk tool prints (docs/cli.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace rngtrk {

// Validates `src[0..len)` exactly as a load does (framing, then the rules on
// names, seeds and offsets) and returns its canonical JSON, without a
// newline: what Python's json.dumps(obj, ensure_ascii=False) writes for
//   {"format_version", "default": {"seed", "offset"},
//    "states": [{"name", "seed", "offset"}, ...], "origin": {...}}
// ("origin" only for a version-2 or -3 checkpoint; its "rank" has the remat
// coordinates for version 3).  Throws Error.
std::string checkpoint_json(const uint8_t *src, size_t len);

}  // namespace rngtrk
