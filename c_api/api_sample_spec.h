/* SPDX-License-Identifier: Apache-2.0 */
// The C API's rngtrk_sample_spec: reading the caller's growable struct into
// the core's spec fields, and filling one with its defaults.
#pragma once

#include <cstddef>

#include "../core/sample_spec.h"
#include "rngtrk.h"

namespace rngtrk {

// Reads and checks the caller's spec for `use` (NULL, struct_size, bytes
// past the fields this library knows, reserved, then the core's checks).
SampleSpec checked_spec(const rngtrk_sample_spec *spec, SpecUse use);

// Fills the caller's spec of `size` bytes with the defaults of (layout,
// distribution, dtype); throws on a combination the library does not make
// or a bad size.
void init_spec(rngtrk_sample_spec *out, size_t size, int layout, int distribution, int dtype);

}  // namespace rngtrk
