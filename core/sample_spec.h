/* SPDX-License-Identifier: Apache-2.0 */
// What to sample: the checked form of rngtrk_sample_spec, element sizes,
// the torch-eager-cuda launch shape, and how far a draw moves the offset.
// The formulas are in docs/streams.md.
#pragma once

#include <cstddef>
#include <cstdint>

#include "sample_kinds.h"

namespace rngtrk {


struct SampleSpec {
    Layout layout = Layout::stateless;
    Dist dist = Dist::bits;
    DType dtype = DType::u32;
    // The parameters in the precision the elements are computed in.
    // scale32: dropout's factor for a kept element, the value of the data
    // dtype's 1/p as a float (inf for p = 0, never used: nothing is kept).
    float low32 = 0, range32 = 1, high32 = 1, mean32 = 0, std32 = 1, p32 = 0.5f, scale32 = 2;
    // Dropout: a dropped element is written as +0 (rngtrk_dropout_f32's
    // rule) instead of in * 0 (rngtrk_dropout's, torch's x * mask * scale).
    bool zero_dropped = false;
    double low64 = 0, range64 = 1, high64 = 1, mean64 = 0, std64 = 1;
    uint16_t low16 = 0, high16 = 0;  // f16/bf16 bits of low and high (eager's bound test)
    uint32_t sm_count = 132, max_threads_per_sm = 2048;
    uint64_t numel = 0;  // eager range calls; 0 = first + count
    uint32_t threads = 1;  // CPU threads one call may use
};

// Elements one Philox block gives: 2 for 64-bit dtypes, else 4.  (For the
// dropout and bernoulli kinds the data dtype does not matter: 4.)
unsigned elements_per_block(const SampleSpec &spec);

// A spec's fields as the caller gave them (the C API reads them out of its
// growable rngtrk_sample_spec: c_api/api_sample_spec.cpp), with the defaults
// of the fields a caller's struct may lack.
struct SpecFields {
    uint32_t layout = 0, distribution = 0, dtype = 0;  // Layout, Dist (public values), DType
    double param_a = 0, param_b = 0;
    uint32_t sm_count = 132, max_threads_per_sm = 2048;
    uint64_t numel = 0;
    uint32_t threads = 1;
};

// The defaults of (layout, distribution, dtype) (docs/abi.md); throws
// Error(Status::invalid_argument) on a combination the library does not make.
SpecFields default_fields(uint32_t layout, uint32_t distribution, uint32_t dtype);

// What a spec is for: a sample (rngtrk_sample and its kin), rngtrk_dropout
// (BERNOULLI with the data's dtype, F32, F16 or BF16, instead of U8: a kept
// element times the data dtype's 1/p, a dropped one times 0), or
// rngtrk_dropout_f32 (BERNOULLI with F32 data: a kept element times the
// float 1/(float)p, a dropped one +0).
enum class SpecUse { sample, dropout, dropout_f32 };

// Checks the fields and converts them for `use`.  Throws
// Error(Status::invalid_argument) with the reason.
SampleSpec checked_spec(const SpecFields &fields, SpecUse use);

// torch-eager-cuda's launch for a tensor of `numel` elements: T threads
// (256 per block, blocks capped at sm_count * max_threads_per_sm / 256) and
// the unroll U (4, or 2 for 64-bit dtypes).
struct EagerLaunch {
    uint64_t threads;
    uint64_t unroll;
};
EagerLaunch eager_launch(const SampleSpec &spec, uint64_t numel);

// The offset a draw of a `numel`-element tensor consumes (multiple of 4).
// Throws Error(Status::overflow) if it does not fit in 64 bits.
uint64_t offset_increment(const SampleSpec &spec, uint64_t numel);

}  // namespace rngtrk
