// SPDX-License-Identifier: Apache-2.0
// The sampling engine built for AVX2 (compiled with -mavx2; run only where
// cpuid says AVX2 is there).
#define RNGTRK_ENGINE_NS engine_avx2
#define RNGTRK_ENGINE_ISA simd::Avx2
#define RNGTRK_ENGINE_LANES DoubleLanes<simd::Avx2Lanes>
#include "sample_simd_engine.inc"
