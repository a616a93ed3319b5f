// The kinds of a sample spec, as the C++ core and the CUDA kernels name them.
#pragma once

namespace rngtrk {

enum class Layout { stateless, nvfuser, eager_cuda };
enum class Dist { bits, uniform, normal, bernoulli, dropout };
enum class DType { u8, u32, u64, f16, bf16, f32, f64 };

}  // namespace rngtrk
