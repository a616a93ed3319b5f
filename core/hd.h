/* SPDX-License-Identifier: Apache-2.0 */
// RNGTRK_HD marks the functions shared by the CPU engines and the CUDA
// kernels (Philox, the uniform transforms, the deterministic math): one
// definition, compiled for both.  Host-only compilers see nothing.
#pragma once

#if defined(__CUDACC__)
#define RNGTRK_HD __host__ __device__
#else
#define RNGTRK_HD
#endif
