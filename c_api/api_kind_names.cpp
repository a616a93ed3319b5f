// SPDX-License-Identifier: Apache-2.0
// The names of layouts, distributions and dtypes: the C API's view of the
// core's tables (core/layouts.h, core/sample_kinds.h).  Every tool and
// binding lists and parses kinds through these, so none keeps a list.
#include "../core/layouts.h"
#include "../core/sample_kinds.h"
#include "api_guard.h"
#include "api_names.h"

namespace {

const char *layout_name(uint32_t v) { return v < rngtrk::kLayoutCount ? rngtrk::kLayoutTable[v].name : nullptr; }
const char *dist_name(uint32_t v) { return v < rngtrk::kDistCount ? rngtrk::kDistNames[v] : nullptr; }
const char *dtype_name(uint32_t v) { return v < rngtrk::kDTypeCount ? rngtrk::kDTypeTable[v].name : nullptr; }

}  // namespace

extern "C" {

RNGTRK_API const char *rngtrk_layout_name(rngtrk_layout layout) { return layout_name(static_cast<uint32_t>(layout)); }

RNGTRK_API rngtrk_status rngtrk_layout_from_name(const char *name, rngtrk_layout *out) {
    return rngtrk::guarded([&] {
        rngtrk::value_of_name(name, out, "layout", "layouts", layout_name);
    });
}

RNGTRK_API const char *rngtrk_distribution_name(rngtrk_distribution distribution) {
    return dist_name(static_cast<uint32_t>(distribution));
}

RNGTRK_API rngtrk_status rngtrk_distribution_from_name(const char *name, rngtrk_distribution *out) {
    return rngtrk::guarded([&] {
        rngtrk::value_of_name(name, out, "distribution", "distributions", dist_name);
    });
}

RNGTRK_API const char *rngtrk_dtype_name(rngtrk_dtype dtype) { return dtype_name(static_cast<uint32_t>(dtype)); }

RNGTRK_API rngtrk_status rngtrk_dtype_from_name(const char *name, rngtrk_dtype *out) {
    return rngtrk::guarded([&] {
        rngtrk::value_of_name(name, out, "dtype", "dtypes", dtype_name);
    });
}

RNGTRK_API size_t rngtrk_dtype_size(rngtrk_dtype dtype) {
    const uint32_t v = static_cast<uint32_t>(dtype);
    return v < rngtrk::kDTypeCount ? rngtrk::kDTypeTable[v].bytes : 0;
}

}  // extern "C"
