// SPDX-License-Identifier: Apache-2.0
// The CUDA entry points of a library built without CUDA (make CUDA=0, or no
// nvcc): every one reports Status::unavailable and says why.
#include "cuda_backend.h"
#include "error.h"

namespace rngtrk {
namespace cuda_backend {

namespace {
constexpr const char *kNoCudaBuild =
    "this librngtrk was built without CUDA (its build found no nvcc, or ran with CUDA=0): "
    "rebuild it where NVIDIA's CUDA toolkit is installed (CUDA_HOME) for the GPU calls";

[[noreturn]] void unavailable() { fail(Status::unavailable, kNoCudaBuild); }
}  // namespace

bool usable(std::string *why) {
    *why = kNoCudaBuild;
    return false;
}

void generate(const SampleSpec &, const PhiloxState &, const uint64_t *, uint64_t, uint64_t, uint64_t, void *,
              const void *, void *) {
    unavailable();
}

void generate_slice(const SliceRequest &, const PhiloxState &, void *) { unavailable(); }

void advance_device(uint64_t *, uint64_t, void *) { unavailable(); }

}  // namespace cuda_backend
}  // namespace rngtrk
