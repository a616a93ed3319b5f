/* SPDX-License-Identifier: Apache-2.0 */
// The kinds of a sample spec, as the C++ core and the CUDA kernels name
// them, with the names and sizes every tool and binding reads through the C
// API (rngtrk_distribution_name, rngtrk_dtype_name, rngtrk_dtype_size).  The
// layouts' own table is layouts.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rngtrk {

// Values follow rngtrk.h's enums (dropout is internal: the public
// BERNOULLI of rngtrk_dropout and rngtrk_dropout_f32, whose dtype is the
// data's).
enum class Layout { stateless, nvfuser, eager_cuda, triton };
enum class Dist { bits, uniform, normal, bernoulli, dropout };
enum class DType { u8, u32, u64, f16, bf16, f32, f64 };

// The public distributions' names, indexed by value.
constexpr const char *kDistNames[] = {"bits", "uniform", "normal", "bernoulli"};
constexpr unsigned kDistCount = sizeof kDistNames / sizeof kDistNames[0];

struct DTypeRow {
    const char *name;
    size_t bytes;
};
// Indexed by value.
constexpr DTypeRow kDTypeTable[] = {{"u8", 1}, {"u32", 4}, {"u64", 8}, {"f16", 2},
                                    {"bf16", 2}, {"f32", 4}, {"f64", 8}};
constexpr unsigned kDTypeCount = sizeof kDTypeTable / sizeof kDTypeTable[0];

// Bytes of one element of `dtype`.
constexpr size_t element_bytes(DType dtype) { return kDTypeTable[static_cast<unsigned>(dtype)].bytes; }

// Which dtypes a public distribution makes (dropout takes BERNOULLI with
// the dtype of its data instead of U8: f32, f16 or bf16; rngtrk_dropout_f32
// f32 alone).
constexpr bool makes_dtype(Dist dist, DType dtype) {
    switch (dist) {
        case Dist::bits: return dtype == DType::u32 || dtype == DType::u64;
        case Dist::uniform:
        case Dist::normal:
            return dtype == DType::f32 || dtype == DType::f64 || dtype == DType::f16 || dtype == DType::bf16;
        case Dist::bernoulli: return dtype == DType::u8;
        case Dist::dropout: return dtype == DType::f32 || dtype == DType::f16 || dtype == DType::bf16;
    }
    return false;
}

// Elements one Philox block gives: 2 for 64-bit dtypes, else 4.  (Dropout's
// dtype is its data's; its mask takes one word per element: 4.)  The one
// definition, for the CPU engines and the CUDA kernels.
constexpr unsigned units_per_block(Dist dist, DType dtype) {
    return (dtype == DType::u64 || dtype == DType::f64) && dist != Dist::dropout ? 2 : 4;
}

}  // namespace rngtrk
