/* SPDX-License-Identifier: Apache-2.0 */
// The seam between the shared library and its CUDA modules.  librngtrk.so
// links no CUDA runtime: its loader (cuda_loader.cpp) opens the module built
// for the CUDA major the driver runs, librngtrk_cuda13.so or
// librngtrk_cuda12.so, next to itself, and calls it through this table.  A
// module is cuda_backend.cu, its runtime linked statically, and
// cuda_module.cpp, which exports rngtrk_cuda_module_v1 alone.
//
// The table passes the core's own structs, so library and module must come
// from one version and the same core headers: `version`, `source_id` (a hash
// of core/*.h and this header, which the Makefile passes to both sides) and
// the struct sizes are checked before anything else is called.  No exception crosses the seam: every call
// returns a Status and writes the message into `message`.
#pragma once

#include <cstddef>
#include <cstdint>

#include "philox_state.h"
#include "sample.h"
#include "sample_spec.h"

namespace rngtrk {
namespace cuda_module {

// Raised when the table below changes shape.
constexpr uint32_t kInterface = 2;
// The module file for a CUDA major: librngtrk_cuda13.so.
constexpr const char *kFilePrefix = "librngtrk_cuda";
constexpr size_t kMessageCapacity = 1024;

struct Layout {
    uint32_t interface;  // kInterface
    uint32_t spec_size, slice_size, state_size;
};

inline Layout this_layout() {
    return Layout{kInterface, sizeof(SampleSpec), sizeof(SliceRequest), sizeof(PhiloxState)};
}

struct Table {
    Layout layout;
    const char *version;    // the rngtrk version it was built as: "0.1.0"
    const char *source_id;  // RNGTRK_MODULE_SOURCE_ID: the core headers' hash
    int runtime;          // CUDART_VERSION: 13000
    // The GPU code it carries (cuda_arch::Code's lists, 0-terminated).
    const int *sass;
    const int *ptx;
    // cuda_backend's functions (core/cuda_backend.h); `message` holds
    // kMessageCapacity bytes.  usable: 1 or 0 (the reason in `message`).
    int (*usable)(char *message);
    int (*generate)(const SampleSpec *spec, const PhiloxState *state, const uint64_t *device_state, uint64_t numel,
                    uint64_t first, uint64_t count, void *out, const void *in, void *stream, char *message);
    int (*generate_slice)(const SliceRequest *request, const PhiloxState *state, void *stream, char *message);
    int (*advance_device)(uint64_t *device_state, uint64_t increment, void *stream, char *message);
};

}  // namespace cuda_module

namespace cuda_backend {
// The GPU code cuda_backend.cu was built with, 0-terminated (the table's).
const int *carried_sass();
const int *carried_ptx();
int carried_runtime();  // CUDART_VERSION
}  // namespace cuda_backend
}  // namespace rngtrk

// The module's one export (default visibility; everything else is hidden).
extern "C" const rngtrk::cuda_module::Table *rngtrk_cuda_module_v1(void);
