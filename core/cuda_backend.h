/* SPDX-License-Identifier: Apache-2.0 */
// The CUDA side of the library, as the C layer sees it.  Implemented by
// cuda/cuda_backend.cu when the build has nvcc (the static archive, CMake's
// libraries and each CUDA module), by cuda/cuda_loader.cpp in the Makefile's
// shared library (it forwards to the module of the driver's CUDA major),
// else by cuda/cuda_unavailable.cpp, whose every function says why not.
#pragma once

#include <cstdint>
#include <string>

#include "philox_state.h"
#include "sample.h"
#include "sample_spec.h"

namespace rngtrk {
namespace cuda_backend {

// Whether a device can run the kernels; if not, *why says so.  The C layer
// asks once per call, before any of the functions below.
bool usable(std::string *why);

// Elements [first, first + count) of a checked request into device memory
// `out`, on `stream` (a cudaStream_t; NULL: the default stream).  With
// `device_state` (two u64 in device memory: seed, offset) the kernel reads
// the state there at run time (graph-safe) instead of using `state`.
// Dropout reads `in` (device memory, the data's dtype).  Throws Error on a
// launch failure.
void generate(const SampleSpec &spec, const PhiloxState &state, const uint64_t *device_state, uint64_t numel,
              uint64_t first, uint64_t count, void *out, const void *in, void *stream);

// The box of a checked slice request into device memory (dropout: from
// the request's `in`, device memory too).
void generate_slice(const SliceRequest &request, const PhiloxState &state, void *stream);

// device_state[1] += increment rounded up to a multiple of 4, on the device
// (the caller checked that the rounding does not overflow).
void advance_device(uint64_t *device_state, uint64_t increment, void *stream);

}  // namespace cuda_backend
}  // namespace rngtrk
