// SPDX-License-Identifier: Apache-2.0
// Which of the library's GPU code a device runs (cuda/arch_support.h), and
// the reasons the CUDA calls give when none does or the driver is too old:
// NVIDIA's binary compatibility (machine code of the same major version and
// a minor at or below the device's), PTX for later GPUs, CUDA_FORCE_PTX_JIT,
// and every fact a reason must name.  No GPU is needed: the backend asks
// these functions with what the runtime reports.
#include <gtest/gtest.h>

#include <string>

#include "arch_support.h"

using namespace rngtrk::cuda_arch;

namespace {

// library.mk's lists (tests/fatbin_test.sh checks the built library against them).
const int kSass[] = {80, 90, 100, 110, 120};
const int kPtx[] = {120};
const Code kLibrary{kSass, 5, kPtx, 1};

std::string runs(int cc, const Code &code = kLibrary, bool force_ptx = false) {
    const Choice c = code_for(cc, code, force_ptx);
    return c.runs == Runs::sass ? "sm_" + std::to_string(c.arch)
           : c.runs == Runs::ptx ? "compute_" + std::to_string(c.arch)
                                 : "none";
}

}  // namespace

TEST(ArchSupport, EveryTrainingGpuRunsMachineCodeOfItsFamily) {
    EXPECT_EQ("sm_80", runs(80));   // A100
    EXPECT_EQ("sm_80", runs(86));   // A10, A40
    EXPECT_EQ("sm_80", runs(87));   // Jetson Orin
    EXPECT_EQ("sm_80", runs(89));   // L40S, RTX 4090
    EXPECT_EQ("sm_90", runs(90));   // H100, H200
    EXPECT_EQ("sm_100", runs(100));  // B200, GB200
    EXPECT_EQ("sm_100", runs(103));  // B300
    EXPECT_EQ("sm_110", runs(110));  // Thor
    EXPECT_EQ("sm_120", runs(120));  // RTX PRO 6000, RTX 5090
    EXPECT_EQ("sm_120", runs(121));  // DGX Spark
}

TEST(ArchSupport, LaterGpusCompileThePtxOlderOnesHaveNothing) {
    EXPECT_EQ("compute_120", runs(130));
    EXPECT_EQ("compute_120", runs(150));
    EXPECT_EQ("none", runs(75));  // T4: CUDA 13 could build it, library.mk does not
    EXPECT_EQ("none", runs(70));
    // Machine code never runs on another major version, nor on a lower minor.
    const int sass90[] = {90};
    const Code only90{sass90, 1, nullptr, 0};
    EXPECT_EQ("none", runs(100, only90));
    EXPECT_EQ("none", runs(89, only90));
    const int sass86[] = {86};
    const Code only86{sass86, 1, nullptr, 0};
    EXPECT_EQ("none", runs(80, only86));
    EXPECT_EQ("sm_86", runs(89, only86));
    // PTX runs at or above its own architecture, the highest that fits.
    const int ptx[] = {80, 90};
    const Code ptx_only{nullptr, 0, ptx, 2};
    EXPECT_EQ("compute_90", runs(100, ptx_only));
    EXPECT_EQ("compute_80", runs(89, ptx_only));
    EXPECT_EQ("none", runs(75, ptx_only));
}

TEST(ArchSupport, ForcedPtxJitIgnoresMachineCode) {
    EXPECT_EQ("none", runs(90, kLibrary, true));  // an H100 under CUDA_FORCE_PTX_JIT=1: compute_120 is too new
    EXPECT_EQ("compute_120", runs(120, kLibrary, true));
    EXPECT_EQ("compute_120", runs(121, kLibrary, true));
}

TEST(ArchSupport, TheReasonNamesTheGpuTheCodeTheVersionsAndTheWayOut) {
    const std::string why = no_code_reason(1, "Tesla T4", 75, 13000, 13000, kLibrary, false);
    for (const char *part : {"device 1 (Tesla T4)", "compute capability 7.5 (sm_75)",
                             "machine code for sm_80, sm_90, sm_100, sm_110, sm_120 and PTX for compute_120",
                             "driver runs CUDA 13.0", "runtime is 13.0",
                             "make CUDA_ARCHS=\"-gencode arch=compute_75,code=sm_75\""})
        EXPECT_NE(std::string::npos, why.find(part)) << "missing '" << part << "' in: " << why;
    const std::string forced = no_code_reason(0, "NVIDIA H200", 90, 13000, 13000, kLibrary, true);
    EXPECT_NE(std::string::npos, forced.find("CUDA_FORCE_PTX_JIT=1")) << forced;
    EXPECT_NE(std::string::npos, forced.find("Unset CUDA_FORCE_PTX_JIT")) << forced;
    EXPECT_EQ("PTX for compute_120", describe(Code{nullptr, 0, kPtx, 1}));
    EXPECT_EQ("no GPU code", describe(Code{nullptr, 0, nullptr, 0}));
}

TEST(ArchSupport, AnOldDriverIsNamedWithTheBranchToInstall) {
    const std::string why = old_driver_reason(12040, 13000);
    for (const char *part : {"too old", "CUDA up to 12.4", "runtime is 13.0", "R580 branch or later"})
        EXPECT_NE(std::string::npos, why.find(part)) << "missing '" << part << "' in: " << why;
    EXPECT_NE(std::string::npos, old_driver_reason(11080, 12040).find("R525")) << old_driver_reason(11080, 12040);
    EXPECT_EQ(525, minimum_driver_branch(12000));
    EXPECT_EQ(525, minimum_driver_branch(12090));
    EXPECT_EQ(580, minimum_driver_branch(13000));
    EXPECT_EQ(0, minimum_driver_branch(11080));
}

// The CUDA module a driver loads (cuda_loader.cpp): the newest whose major
// the driver runs, so a CUDA 13 driver takes the CUDA 13 module where it is
// there and the CUDA 12 one where that is all there is.
TEST(ArchSupport, TheDriverPicksTheNewestModuleItRuns) {
    const int both[] = {13, 12}, only13[] = {13}, only12[] = {12};
    EXPECT_EQ(13, module_for(13000, both, 2));
    EXPECT_EQ(13, module_for(13020, both, 2));
    EXPECT_EQ(12, module_for(12080, both, 2));
    EXPECT_EQ(12, module_for(12000, both, 2));
    EXPECT_EQ(0, module_for(11080, both, 2));
    EXPECT_EQ(12, module_for(13000, only12, 1));
    EXPECT_EQ(12, module_for(14000, only12, 1));
    EXPECT_EQ(0, module_for(12090, only13, 1));
    EXPECT_EQ(0, module_for(13000, only13, 0));
}

TEST(ArchSupport, NoModuleForTheDriverSaysWhichBranchOrModuleToInstall) {
    const int only13[] = {13}, both[] = {13, 12};
    const std::string cuda12 = no_module_reason(12040, only13, 1, "/opt/lib");
    for (const char *part : {"runs CUDA up to 12.4", "librngtrk_cuda13.so (R580 or later)", "/opt/lib", "R580 branch",
                             "CUDA 12 module", "make cuda12"})
        EXPECT_NE(std::string::npos, cuda12.find(part)) << part << " not in: " << cuda12;
    const std::string cuda11 = no_module_reason(11080, both, 2, "/opt/lib");
    for (const char *part : {"runs CUDA up to 11.8", "librngtrk_cuda13.so (R580 or later)",
                             "librngtrk_cuda12.so (R525 or later)", "R525 branch"})
        EXPECT_NE(std::string::npos, cuda11.find(part)) << part << " not in: " << cuda11;
    EXPECT_EQ(std::string::npos, cuda11.find("make cuda12")) << cuda11;  // it is there already
    const std::string none = no_module_reason(13000, only13, 0, "/opt/lib");
    EXPECT_NE(std::string::npos, none.find("no CUDA module beside it (/opt/lib/librngtrk_cuda13.so")) << none;
}
