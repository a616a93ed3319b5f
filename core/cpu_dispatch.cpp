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

}  // namespace rngtrk
