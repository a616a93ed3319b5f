/* SPDX-License-Identifier: Apache-2.0 */
// Which of the library's GPU code a device runs, and the sentence that says
// why not when none does: apart from the CUDA runtime, so that the host
// tests check every rule (tests/core/test_arch_support.cpp), and the
// backend (cuda_backend.cu) asks it once per device with what the runtime
// reports.  Compute capabilities and architectures are 10 * major + minor
// (sm_90: 90, 12.1: 121); CUDA versions are the runtime's 1000 * major +
// 10 * minor (13000: 13.0).
#pragma once

#include <cstddef>
#include <string>

namespace rngtrk {
namespace cuda_arch {

// The code a build carries: machine code (SASS) for `sass`, PTX for `ptx`
// (library.mk's CUDA_ARCHITECTURES and CUDA_PTX_ARCHITECTURES, or what
// CUDA_ARCHS asked for).
struct Code {
    const int *sass;
    size_t sass_count;
    const int *ptx;
    size_t ptx_count;
};

enum class Runs { sass, ptx, none };
struct Choice {
    Runs runs;
    int arch;  // the entry it runs (0: none)
};

// What the driver loads for a device of compute capability `cc`: machine
// code of its own major version and the highest minor at or below its own
// (NVIDIA's binary compatibility: sm_80 runs on 8.6 and 8.9, sm_100 on
// 10.3, sm_120 on 12.1), else the highest PTX at or below `cc`, compiled
// when the kernels load.  Under CUDA_FORCE_PTX_JIT=1 (`force_ptx`) the
// driver ignores machine code: PTX alone.
inline Choice code_for(int cc, const Code &code, bool force_ptx) {
    Choice best{Runs::none, 0};
    if (!force_ptx) {
        for (size_t i = 0; i < code.sass_count; ++i) {
            const int a = code.sass[i];
            if (a / 10 == cc / 10 && a <= cc && a > best.arch) best = Choice{Runs::sass, a};
        }
        if (best.runs == Runs::sass) return best;
    }
    for (size_t i = 0; i < code.ptx_count; ++i) {
        const int a = code.ptx[i];
        if (a <= cc && a > best.arch) best = Choice{Runs::ptx, a};
    }
    return best;
}

inline std::string cuda_version(int v) {
    return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

inline std::string capability(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

// "machine code for sm_80, sm_90 and PTX for compute_120"
inline std::string describe(const Code &code) {
    std::string out;
    const auto list = [&out](const int *archs, size_t n, const char *prefix) {
        for (size_t i = 0; i < n; ++i) out += (i == 0 ? "" : ", ") + std::string(prefix) + std::to_string(archs[i]);
    };
    if (code.sass_count != 0) out += "machine code for ", list(code.sass, code.sass_count, "sm_");
    if (code.ptx_count != 0) {
        out += code.sass_count != 0 ? " and PTX for " : "PTX for ";
        list(code.ptx, code.ptx_count, "compute_");
    }
    return out.empty() ? "no GPU code" : out;
}

// Why nothing CUDA can run on a machine without the driver (the loader's
// and the backend's sentence).
constexpr const char *kNoDriverReason =
    "no CUDA driver: this machine has no NVIDIA GPU, or its driver is not installed (libcuda.so.1)";

// The NVIDIA driver branch that first runs a CUDA runtime of `runtime`
// (NVIDIA's CUDA release notes: every 12.x runtime runs on R525 and later,
// every 13.x on R580 and later); 0 for a runtime this table does not know.
inline int minimum_driver_branch(int runtime) {
    if (runtime >= 13000 && runtime < 14000) return 580;
    if (runtime >= 12000 && runtime < 13000) return 525;
    return 0;
}

// Why a device of compute capability `cc` (named `gpu`, device `device`)
// runs none of `code`: the GPU's architecture, the code the library has,
// the driver's and the runtime's CUDA versions, and what to do.
inline std::string no_code_reason(int device, const std::string &gpu, int cc, int driver, int runtime,
                                  const Code &code, bool force_ptx) {
    std::string why = "librngtrk has no GPU code this device can run: device " + std::to_string(device) + " (" +
                      gpu + ") is compute capability " + capability(cc) + " (sm_" + std::to_string(cc) +
                      "); the library carries " + describe(code);
    if (force_ptx) why += ", and CUDA_FORCE_PTX_JIT=1 lets the driver load PTX alone";
    why += "; the NVIDIA driver runs CUDA " + cuda_version(driver) + ", the library's CUDA runtime is " +
           cuda_version(runtime) + ". ";
    if (force_ptx && code_for(cc, code, false).runs != Runs::none)
        return why + "Unset CUDA_FORCE_PTX_JIT, or build rngtrk with PTX for it (make CUDA_ARCHS=\"-gencode arch=compute_" +
               std::to_string(cc) + ",code=compute_" + std::to_string(cc) + "\")";
    return why + "Build rngtrk for it: make CUDA_ARCHS=\"-gencode arch=compute_" + std::to_string(cc) + ",code=sm_" +
           std::to_string(cc) + "\" (nvcc lists what it can build: nvcc --list-gpu-code)";
}

// Why the driver cannot run the library's runtime: its CUDA version, the
// runtime's, and the driver branch to install.
inline std::string old_driver_reason(int driver, int runtime) {
    const int branch = minimum_driver_branch(runtime);
    return "the NVIDIA driver is too old: it runs CUDA up to " + cuda_version(driver) +
           ", and librngtrk's CUDA runtime is " + cuda_version(runtime) + " (install the driver's R" +
           (branch != 0 ? std::to_string(branch) : std::string("?")) + " branch or later)";
}

// The CUDA module (cuda_module.h) a driver of CUDA `driver` loads among
// those there, `majors` (their CUDA majors, any order): the newest whose
// major the driver runs; 0 when none.  A driver runs every runtime of its
// own major and the majors before it (NVIDIA's minor-version compatibility
// within a major, backward compatibility across), so a CUDA 13 driver runs
// the CUDA 12 module where that is the only one.
inline int module_for(int driver, const int *majors, size_t n) {
    int best = 0;
    for (size_t i = 0; i < n; ++i)
        if (majors[i] <= driver / 1000 && majors[i] > best) best = majors[i];
    return best;
}

// Why a driver of CUDA `driver` loads none of the modules `majors` in
// `dir`: its version, what each module needs, and what to install.
inline std::string no_module_reason(int driver, const int *majors, size_t n, const std::string &dir) {
    if (n == 0)
        return "this librngtrk has no CUDA module beside it (" + dir +
               "/librngtrk_cuda13.so or librngtrk_cuda12.so): reinstall rngtrk from a build that had nvcc "
               "(make; make cuda12 for CUDA 12 drivers)";
    std::string have;
    int oldest = 0;
    for (size_t i = 0; i < n; ++i) {
        have += (i == 0 ? "" : ", ") + std::string("librngtrk_cuda") + std::to_string(majors[i]) + ".so (R" +
                std::to_string(minimum_driver_branch(majors[i] * 1000)) + " or later)";
        if (oldest == 0 || majors[i] < oldest) oldest = majors[i];
    }
    std::string why = "the NVIDIA driver is too old: it runs CUDA up to " + cuda_version(driver) +
                      ", and this librngtrk's CUDA modules are " + have + " in " + dir + ". Install the driver's R" +
                      std::to_string(minimum_driver_branch(oldest * 1000)) + " branch or later";
    if (driver >= 12000 && driver < 13000 && oldest > 12)
        why += ", or rngtrk's CUDA 12 module (make cuda12 builds librngtrk_cuda12.so; docs/cuda.md)";
    return why;
}

}  // namespace cuda_arch
}  // namespace rngtrk
