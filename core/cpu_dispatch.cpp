// SPDX-License-Identifier: Apache-2.0
#include <cstdlib>
#include <cstring>

#include "sample_engines.h"

namespace rngtrk {

namespace {

const CpuPath kScalar{"scalar", engine_scalar::generate};

// The SIMD engines are built for x86-64 only (the Makefile leaves them out
// elsewhere); there the scalar engine is the only path.
#if defined(__x86_64__)
const CpuPath kAvx2{"avx2", engine_avx2::generate};
const CpuPath kAvx512{"avx512", engine_avx512::generate};

bool has_avx2() { return __builtin_cpu_supports("avx2"); }

bool has_avx512() {
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
}

const CpuPath &best() { return has_avx512() ? kAvx512 : has_avx2() ? kAvx2 : kScalar; }
#else
const CpuPath &best() { return kScalar; }
#endif

const CpuPath &choose() {
    const char *forced = std::getenv("RNGTRK_CPU");
    if (forced != nullptr) {
        if (const CpuPath *p = cpu_path_named(forced)) return *p;
    }
    return best();
}

}  // namespace

const CpuPath *cpu_path_named(const char *name) {
    if (std::strcmp(name, "scalar") == 0) return &kScalar;
#if defined(__x86_64__)
    if (std::strcmp(name, "avx2") == 0) return has_avx2() ? &kAvx2 : nullptr;
    if (std::strcmp(name, "avx512") == 0) return has_avx512() ? &kAvx512 : nullptr;
#endif
    return nullptr;
}

const CpuPath &cpu_path() {
    static const CpuPath &chosen = choose();
    return chosen;
}

// Below this many elements the scalar engine is the faster (16 elements on
// AVX2, 2026-11-27: uniform f32 0.12 us against 0.17, normal f32 0.26
// against 0.33): the SIMD engines draw 2 x lanes blocks at a time and do
// the rest one block at a time.
constexpr uint64_t kScalarBelow = 64;

void generate_elements(const SampleSpec &spec, const PhiloxState &state, uint64_t numel, uint64_t first,
                       uint64_t count, void *out) {
    static const bool named = std::getenv("RNGTRK_CPU") != nullptr;
    const CpuPath &path = count < kScalarBelow && !named ? kScalar : cpu_path();
    path.generate(spec, state, numel, first, count, out);
}

}  // namespace rngtrk
