/* SPDX-License-Identifier: Apache-2.0 */
// The three builds of sample_engine.inc (scalar, AVX2, AVX-512) and the
// choice among them (cpu_dispatch.cpp).
#pragma once

#include <cstdint>

#include "philox_state.h"
#include "sample_spec.h"

namespace rngtrk {

using GenerateFn = void (*)(const SampleSpec &, const PhiloxState &, uint64_t numel, uint64_t first,
                            uint64_t count, void *out);

namespace engine_scalar {
void generate(const SampleSpec &, const PhiloxState &, uint64_t, uint64_t, uint64_t, void *);
}
namespace engine_avx2 {
void generate(const SampleSpec &, const PhiloxState &, uint64_t, uint64_t, uint64_t, void *);
}
namespace engine_avx512 {
void generate(const SampleSpec &, const PhiloxState &, uint64_t, uint64_t, uint64_t, void *);
}

struct CpuPath {
    const char *name;  // "scalar", "avx2" or "avx512"
    GenerateFn generate;
};

// The path in use: the best this CPU runs, or the one RNGTRK_CPU names
// (falling back to the best available if the CPU lacks it).  Chosen once.
const CpuPath &cpu_path();

// A path by name if this CPU can run it (for tests and benchmarks), else nullptr.
const CpuPath *cpu_path_named(const char *name);

// Elements [first, first + count) of `spec`'s tensor through the path in
// use, except that a short run takes the scalar engine (the same bits): a
// SIMD engine's setup costs more than it saves on a few elements.  A path
// named by RNGTRK_CPU runs every length itself (tests compare the engines).
void generate_elements(const SampleSpec &spec, const PhiloxState &state, uint64_t numel, uint64_t first,
                       uint64_t count, void *out);

}  // namespace rngtrk
