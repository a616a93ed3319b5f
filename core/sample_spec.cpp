// SPDX-License-Identifier: Apache-2.0
#include "sample_spec.h"

#include <cmath>
#include <cstring>
#include <string>

#include "det_math.h"
#include "error.h"
#include "layouts.h"
#include "philox_state.h"

namespace rngtrk {

namespace {

void check_kinds(int layout, int dist, int dtype, SpecUse use) {
    if (layout_row_of(static_cast<uint32_t>(layout)) == nullptr)
        fail(Status::invalid_argument, "unknown layout " + std::to_string(layout));
    if (dist < 0 || static_cast<unsigned>(dist) >= kDistCount)
        fail(Status::invalid_argument, "unknown distribution " + std::to_string(dist));
    if (dtype < 0 || static_cast<unsigned>(dtype) >= kDTypeCount)
        fail(Status::invalid_argument, "unknown dtype " + std::to_string(dtype));
    if (use != SpecUse::sample && static_cast<Dist>(dist) != Dist::bernoulli)
        fail(Status::invalid_argument, "dropout needs the bernoulli distribution");
    if (use == SpecUse::dropout && !makes_dtype(Dist::dropout, static_cast<DType>(dtype)))
        fail(Status::invalid_argument,
             std::string("dropout takes f32, f16 or bf16 data, not dtype ") + kDTypeTable[dtype].name);
    if (!makes_dtype(use == SpecUse::sample ? static_cast<Dist>(dist) : Dist::dropout, static_cast<DType>(dtype)) ||
        (use == SpecUse::dropout_f32 && static_cast<DType>(dtype) != DType::f32))
        fail(Status::invalid_argument, std::string("distribution ") + kDistNames[dist] + " does not make dtype " +
                                            kDTypeTable[dtype].name +
                                            (use == SpecUse::dropout_f32 ? " (dropout takes f32)" : ""));
}

uint16_t to_16(DType dtype, float v) { return dtype == DType::f16 ? det::to_f16_bits(v) : det::to_bf16_bits(v); }

// The float value of f16 or bf16 bits (exact).
float from_16(DType dtype, uint16_t h) {
    return dtype == DType::f16 ? det::from_f16_bits(h) : det::from_bf16_bits(h);
}

}  // namespace

unsigned elements_per_block(const SampleSpec &spec) { return units_per_block(spec.dist, spec.dtype); }

SpecFields default_fields(uint32_t layout, uint32_t distribution, uint32_t dtype) {
    check_kinds(static_cast<int>(layout), static_cast<int>(distribution), static_cast<int>(dtype), SpecUse::sample);
    SpecFields f;
    f.layout = layout, f.distribution = distribution, f.dtype = dtype;
    f.param_a = static_cast<Dist>(distribution) == Dist::bernoulli ? 0.5 : 0.0;
    f.param_b = static_cast<Dist>(distribution) == Dist::uniform || static_cast<Dist>(distribution) == Dist::normal
                    ? 1.0
                    : 0.0;
    return f;
}

SampleSpec checked_spec(const SpecFields &s, SpecUse use) {
    check_kinds(static_cast<int>(s.layout), static_cast<int>(s.distribution), static_cast<int>(s.dtype), use);

    SampleSpec spec;
    spec.layout = static_cast<Layout>(s.layout);
    spec.dtype = static_cast<DType>(s.dtype);
    spec.dist = use == SpecUse::sample ? static_cast<Dist>(s.distribution) : Dist::dropout;
    const double a = s.param_a, b = s.param_b;
    if (!std::isfinite(a) || !std::isfinite(b)) fail(Status::invalid_argument, "parameters must be finite");
    if (spec.dist == Dist::uniform) {
        if (!(a <= b)) fail(Status::invalid_argument, "uniform needs low <= high");
        spec.low64 = a, spec.high64 = b, spec.range64 = b - a;
        spec.low32 = static_cast<float>(a), spec.high32 = static_cast<float>(b);
        spec.range32 = spec.high32 - spec.low32;
        if (!std::isfinite(spec.range32) && (spec.dtype != DType::f64))
            fail(Status::invalid_argument, "high - low overflows float");
        if (!std::isfinite(spec.range64)) fail(Status::invalid_argument, "high - low overflows double");
        if (spec.dtype == DType::f16 || spec.dtype == DType::bf16) {
            spec.low16 = to_16(spec.dtype, spec.low32);
            spec.high16 = to_16(spec.dtype, spec.high32);
            if (spec.layout == Layout::eager_cuda) {
                // PyTorch holds from and to in the tensor's dtype and takes
                // the range as (to - from) rounded to that dtype too.
                const float low = from_16(spec.dtype, spec.low16), high = from_16(spec.dtype, spec.high16);
                const float range = from_16(spec.dtype, to_16(spec.dtype, high - low));
                if (!std::isfinite(low) || !std::isfinite(high) || !std::isfinite(range))
                    fail(Status::invalid_argument, std::string("low, high or high - low overflows ") +
                                                        (spec.dtype == DType::f16 ? "f16" : "bf16"));
                spec.low32 = low, spec.high32 = high, spec.range32 = range;
            }
        }
    } else if (spec.dist == Dist::normal) {
        if (!(b >= 0)) fail(Status::invalid_argument, "normal needs std >= 0");
        spec.mean64 = a, spec.std64 = b;
        spec.mean32 = static_cast<float>(a), spec.std32 = static_cast<float>(b);
        // f32, f16 and bf16 are computed in float.
        if (spec.dtype != DType::f64 && (!std::isfinite(spec.mean32) || !std::isfinite(spec.std32)))
            fail(Status::invalid_argument, "mean or std overflows float");
    } else if (spec.dist == Dist::bernoulli || spec.dist == Dist::dropout) {
        if (!(a >= 0 && a <= 1)) fail(Status::invalid_argument, "bernoulli needs 0 <= p <= 1");
        spec.p32 = static_cast<float>(a);
        // The scale is inf for p = 0, never used: nothing is kept.
        if (use == SpecUse::dropout_f32) {
            spec.scale32 = 1.0f / spec.p32;
            spec.zero_dropped = true;
        } else {
            // The data dtype's 1/p, as torch.tensor(1.0 / p, dtype=...) makes
            // it: the double rounded to float, then (f16, bf16) to the dtype.
            spec.scale32 = static_cast<float>(1.0 / a);
            if (spec.dtype == DType::f16 || spec.dtype == DType::bf16)
                spec.scale32 = from_16(spec.dtype, to_16(spec.dtype, spec.scale32));
        }
    }
    spec.sm_count = s.sm_count;
    spec.max_threads_per_sm = s.max_threads_per_sm;
    spec.numel = s.numel;
    if (s.threads > 64) fail(Status::invalid_argument, "threads must be at most 64");
    spec.threads = s.threads == 0 ? 1 : s.threads;
    if (spec.layout == Layout::eager_cuda) {
        if (spec.sm_count == 0) fail(Status::invalid_argument, "sm_count must be at least 1");
        if (spec.max_threads_per_sm < 256)
            fail(Status::invalid_argument, "max_threads_per_sm must be at least 256");
    }
    return spec;
}

EagerLaunch eager_launch(const SampleSpec &spec, uint64_t numel) {
    const uint64_t blocks_needed = numel / 256 + (numel % 256 != 0);
    const uint64_t cap = uint64_t{spec.sm_count} * (spec.max_threads_per_sm / 256);
    const uint64_t grid = blocks_needed < cap ? blocks_needed : cap;
    return EagerLaunch{256 * (grid == 0 ? 1 : grid), uint64_t{elements_per_block(spec)}};
}

uint64_t offset_increment(const SampleSpec &spec, uint64_t numel) {
    uint64_t blocks = 0;  // of 4 offset units
    switch (layout_row(spec.layout).increment) {
        case Increment::blocks_drawn: {
            const uint64_t e = elements_per_block(spec);
            blocks = numel / e + (numel % e != 0);
            break;
        }
        case Increment::one_block: blocks = 1; break;
        case Increment::elements: blocks = blocks_for(numel); break;
        case Increment::eager_slabs: {
            if (numel == 0) return 0;
            const EagerLaunch launch = eager_launch(spec, numel);
            blocks = (numel - 1) / (launch.threads * launch.unroll) + 1;
            break;
        }
    }
    if (blocks > UINT64_MAX / 4) fail(Status::overflow, "the draw consumes more than 2^64 offset units");
    return blocks * 4;
}

}  // namespace rngtrk
