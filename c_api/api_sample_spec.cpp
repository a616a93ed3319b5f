// SPDX-License-Identifier: Apache-2.0
#include "api_sample_spec.h"

#include <cstring>

#include "api_guard.h"
#include "api_versioned_struct.h"

namespace rngtrk {

namespace {

rngtrk_sample_spec to_c(const SpecFields &f) {
    rngtrk_sample_spec s;
    std::memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    s.layout = f.layout, s.distribution = f.distribution, s.dtype = f.dtype;
    s.param_a = f.param_a, s.param_b = f.param_b;
    s.sm_count = f.sm_count, s.max_threads_per_sm = f.max_threads_per_sm;
    s.numel = f.numel;
    s.threads = f.threads;
    s.reserved = 0;
    return s;
}

}  // namespace

void init_spec(rngtrk_sample_spec *out, size_t size, int layout, int distribution, int dtype) {
    const SpecFields f = default_fields(static_cast<uint32_t>(layout), static_cast<uint32_t>(distribution),
                                        static_cast<uint32_t>(dtype));
    init_versioned(out, size, RNGTRK_SAMPLE_SPEC_MIN_SIZE, to_c(f), "spec");
}

SampleSpec checked_spec(const rngtrk_sample_spec *c, SpecUse use) {
    if (c == nullptr) fail(RNGTRK_E_INVALID_ARGUMENT, "spec is NULL");
    // Read what the caller's struct has; the fields it may lack (those past
    // the first published layout: threads, reserved) take the defaults of
    // SpecFields, which do not depend on the kinds.
    const rngtrk_sample_spec s = read_versioned(c, RNGTRK_SAMPLE_SPEC_MIN_SIZE, to_c(SpecFields{}), "spec");
    if (s.reserved != 0) fail(RNGTRK_E_INVALID_ARGUMENT, "spec->reserved must be 0");
    SpecFields f;
    f.layout = s.layout, f.distribution = s.distribution, f.dtype = s.dtype;
    f.param_a = s.param_a, f.param_b = s.param_b;
    f.sm_count = s.sm_count, f.max_threads_per_sm = s.max_threads_per_sm;
    f.numel = s.numel;
    f.threads = s.threads;
    return checked_spec(f, use);
}

}  // namespace rngtrk
