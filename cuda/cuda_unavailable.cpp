// The CUDA entry points of a library built without CUDA (make CUDA=0, or no
// nvcc): every one reports Status::unavailable and says why.
#include "cuda_backend.h"
#include "error.h"

namespace rngtrk {
namespace cuda_backend {

namespace {
[[noreturn]] void unavailable() {
    fail(Status::unavailable, "librngtrk was built without CUDA (no nvcc, or make CUDA=0)");
}
}  // namespace

bool usable(std::string *why) {
    *why = "librngtrk was built without CUDA (no nvcc, or make CUDA=0)";
    return false;
}

void generate(const SampleSpec &, const PhiloxState &, const uint64_t *, uint64_t, uint64_t, uint64_t, void *,
              const float *, void *) {
    unavailable();
}

void generate_slice(const SliceRequest &, const PhiloxState &, void *) { unavailable(); }

void advance_device(uint64_t *, uint64_t, void *) { unavailable(); }

}  // namespace cuda_backend
}  // namespace rngtrk
