// The kinds of a sample spec, as the C++ core and the CUDA kernels name them.
#pragma once

namespace rngtrk {

enum class Layout { stateless, nvfuser, eager_cuda, triton };
enum class Dist { bits, uniform, normal, bernoulli, dropout };
enum class DType { u8, u32, u64, f16, bf16, f32, f64 };

// Elements one Philox block gives: 2 for 64-bit dtypes, else 4.  (Dropout's
// dtype is its f32 data; its mask takes one word per element: 4.)  The one
// definition, for the CPU engines and the CUDA kernels.
constexpr unsigned units_per_block(Dist dist, DType dtype) {
    return (dtype == DType::u64 || dtype == DType::f64) && dist != Dist::dropout ? 2 : 4;
}

}  // namespace rngtrk
