// SPDX-License-Identifier: Apache-2.0
// The sampling engine built for AVX-512 (F, BW, DQ, VL; compiled with those
// flags; run only where cpuid says they are all there).
#define RNGTRK_ENGINE_NS engine_avx512
#define RNGTRK_ENGINE_ISA simd::Avx512
#define RNGTRK_ENGINE_LANES DoubleLanes<simd::Avx512Lanes>
#include "sample_simd_engine.inc"
