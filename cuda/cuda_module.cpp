// SPDX-License-Identifier: Apache-2.0
// A CUDA module's one export: the table through which librngtrk.so's loader
// (cuda_loader.cpp) calls this module's cuda_backend.  Each entry turns the
// backend's Error into a Status and its message, so no exception crosses
// from one shared object into the other.
#include <cstring>
#include <exception>
#include <string>

#include "cuda_backend.h"
#include "cuda_module.h"
#include "error.h"

#if !defined(RNGTRK_MODULE_VERSION) || !defined(RNGTRK_MODULE_SOURCE_ID)
#error "build with -DRNGTRK_MODULE_VERSION=\"0.1.0\" -DRNGTRK_MODULE_SOURCE_ID=\"...\" (the Makefile's)"
#endif

namespace rngtrk {
namespace cuda_module {
namespace {

void put(char *message, const std::string &text) {
    const size_t n = text.size() < kMessageCapacity - 1 ? text.size() : kMessageCapacity - 1;
    std::memcpy(message, text.data(), n);
    message[n] = '\0';
}

template <class F>
int guarded(char *message, F &&f) {
    try {
        f();
        return static_cast<int>(Status::ok);
    } catch (const Error &e) {
        put(message, e.what());
        return static_cast<int>(e.status());
    } catch (const std::bad_alloc &) {
        put(message, "out of memory in the CUDA module");
        return static_cast<int>(Status::out_of_memory);
    } catch (const std::exception &e) {
        put(message, std::string("CUDA module: ") + e.what());
        return static_cast<int>(Status::internal);
    } catch (...) {
        put(message, "CUDA module: an unknown exception");
        return static_cast<int>(Status::internal);
    }
}

int usable(char *message) {
    int result = 0;
    const int status = guarded(message, [&] {
        std::string why;
        result = cuda_backend::usable(&why) ? 1 : 0;
        if (result == 0) put(message, why);
    });
    return status == static_cast<int>(Status::ok) ? result : 0;
}

int generate(const SampleSpec *spec, const PhiloxState *state, const uint64_t *device_state, uint64_t numel,
             uint64_t first, uint64_t count, void *out, const void *in, void *stream, char *message) {
    return guarded(message, [&] {
        cuda_backend::generate(*spec, *state, device_state, numel, first, count, out, in, stream);
    });
}

int generate_slice(const SliceRequest *request, const PhiloxState *state, void *stream, char *message) {
    return guarded(message, [&] { cuda_backend::generate_slice(*request, *state, stream); });
}

int advance_device(uint64_t *device_state, uint64_t increment, void *stream, char *message) {
    return guarded(message, [&] { cuda_backend::advance_device(device_state, increment, stream); });
}

}  // namespace
}  // namespace cuda_module
}  // namespace rngtrk

extern "C" __attribute__((visibility("default"))) const rngtrk::cuda_module::Table *rngtrk_cuda_module_v1(void) {
    using namespace rngtrk::cuda_module;
    static const Table table{this_layout(),
                             RNGTRK_MODULE_VERSION,
                             RNGTRK_MODULE_SOURCE_ID,
                             rngtrk::cuda_backend::carried_runtime(),
                             rngtrk::cuda_backend::carried_sass(),
                             rngtrk::cuda_backend::carried_ptx(),
                             usable,
                             generate,
                             generate_slice,
                             advance_device};
    return &table;
}
